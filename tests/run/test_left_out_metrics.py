"""One rule for metrics a judge cannot compute, in the Python API, the CLI and the evaluators: the
run scores what the judge can and records which metrics it left out and why; strict, a run of
nothing else, and a gate on a left-out metric refuse before any call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter import UnsupportedStepError, evaluate
from ragmeter.cli.main import cli
from ragmeter.evaluators import CorrectnessEvaluator, FaithfulnessEvaluator, RelevancyEvaluator

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
ROWS = [
    {"question": "What is the capital of France?", "contexts": ["Paris is the capital of France."],
     "answer": "Paris is the capital of France.", "reference": "Paris."},
]  # fmt: skip


def test_the_api_scores_what_the_local_judge_can_and_says_what_it_left_out() -> None:
    result = evaluate(ROWS, ["faithfulness", "correctness"])
    assert result.metric_names == ["faithfulness"]
    (left,) = result.to_dict()["metrics_left_out"]
    assert left["metric"] == "correctness" and left["steps"] == ["grade"]
    assert "judge 'local' cannot do step(s) grade" in left["why"] and "judge='openai:gpt-4o-mini'" in left["why"]


def test_strict_or_nothing_else_refuses_up_front() -> None:
    with pytest.raises(UnsupportedStepError, match="needed by correctness"):
        evaluate(ROWS, ["faithfulness", "correctness"], strict=True)
    with pytest.raises(UnsupportedStepError, match="needed by correctness"):
        evaluate(ROWS, ["correctness"])


def test_the_cli_says_what_it_left_out_in_the_table_and_the_json(tmp_path: Path) -> None:
    base = ["evaluate", str(EXAMPLE), "-m", "faithfulness,correctness", "--no-progress", "--out", str(tmp_path)]
    res = CliRunner().invoke(cli, base)
    assert res.exit_code == 0, res.output
    assert "left out correctness: judge 'local' cannot do step(s) grade" in " ".join(res.stdout.split())
    res = CliRunner().invoke(cli, [*base, "--json"])
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    assert list(out["metrics"]) == ["faithfulness"] and out["metrics_left_out"][0]["metric"] == "correctness"
    res = CliRunner().invoke(cli, [*base, "--strict"])
    assert res.exit_code == 2 and "cannot do step 'grade'" in res.stderr
    res = CliRunner().invoke(cli, [*base, "--fail-under", "correctness=0.5"])
    assert res.exit_code == 2 and "--fail-under names correctness, which the run cannot compute" in res.stderr
    res = CliRunner().invoke(cli, [*base, "--dry-run"])
    assert res.exit_code == 0 and "left out correctness" in res.stdout


@pytest.mark.parametrize("evaluator", [CorrectnessEvaluator, RelevancyEvaluator])
def test_an_evaluator_without_a_local_reading_says_so_in_python_terms(evaluator: type) -> None:
    with pytest.raises(UnsupportedStepError) as e:
        evaluator()
    message = str(e.value)
    assert f"{evaluator.__name__} needs an LLM judge" in message
    assert f"{evaluator.__name__}(judge='openai:gpt-4o-mini')" in message and "--judge" not in message


def test_the_evaluators_with_a_local_reading_work_without_a_judge() -> None:
    r = FaithfulnessEvaluator().evaluate(
        query="What is the capital of France?",
        response="Paris is the capital of France.",
        contexts=["Paris is the capital of France."],
    )
    assert r.passing is True and r.score is not None and r.score >= 0.9


def test_a_run_that_sent_no_request_shows_no_usage(tmp_path: Path) -> None:
    """The local judge sends no request: the table has no requests or tokens column and no usage
    line (zeros there say nothing). (The HTML report: tests/report/test_report_browser.py.)"""
    res = CliRunner().invoke(cli, ["evaluate", str(EXAMPLE), "-m", "faithfulness", "--no-progress", "--out", str(tmp_path)])
    assert res.exit_code == 0
    assert "requests" not in res.stdout and "tokens" not in res.stdout and "usage:" not in res.stdout
