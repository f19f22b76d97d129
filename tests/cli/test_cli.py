"""The command line: evaluate, runs, metrics; JSON output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"


def _run(args: list[str]) -> tuple[int, str, str]:
    runner = CliRunner()
    res = runner.invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def test_evaluate_example_offline_json(tmp_path: Path) -> None:
    code, out, err = _run(["evaluate", str(EXAMPLE), "--out", str(tmp_path), "--json", "--no-progress"])
    assert code == 0, err
    d = json.loads(out)
    assert {"run_id", "n_samples", "n_skipped", "metrics", "usage"} <= set(d)
    assert d["n_samples"] >= 10 and d["n_skipped"] == 0
    assert "semantic_similarity" in d["metrics"] and "token_f1" in d["metrics"]
    for m in d["metrics"].values():
        assert {"mean", "ci95", "n_scored", "n_invalid"} <= set(m)
    assert d["usage"]["requests"] == 0  # offline: nothing was sent anywhere
    assert d["judge"] == "local"
    # the values, not only the keys: every sample scored by every default metric, each mean inside
    # its interval, and the figures those of the Python API on the same data (the README quotes the
    # faithfulness mean: tests/docs/test_example_figures.py)
    n = sum(1 for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip())
    assert d["n_samples"] == n == 12
    for name, m in d["metrics"].items():
        assert m["n_scored"] + m["n_invalid"] == n, name
        assert 0.0 <= m["ci95"][0] <= m["mean"] <= m["ci95"][1] <= 1.0, name
    from ragmeter import evaluate

    api = evaluate(str(EXAMPLE), ["faithfulness", "token_f1"]).summary()
    for name in ("faithfulness", "token_f1"):
        assert d["metrics"][name]["mean"] == pytest.approx(api[name].mean, abs=1e-9)


def test_the_main_job_tells_the_labelled_faithful_answers_from_the_others(tmp_path: Path) -> None:
    """The values a user sees, against the example's own labels (examples/rag_labels.jsonl: which
    answers people call faithful): a faithful answer scores above an unfaithful one in at least 90%
    of the pairs (the local judge: 30 of 32; the two it orders wrong are a paraphrased Chinese answer
    and one with a false last sentence), and the means lie well apart, so a judge that scores
    everything alike (0.5) fails here."""
    from ragmeter import evaluate

    labels = {
        r["id"]: r["label"]
        for r in map(json.loads, (ROOT / "examples" / "rag_labels.jsonl").read_text(encoding="utf-8").splitlines())
    }
    result = evaluate(str(EXAMPLE), ["faithfulness"])
    scores = {s.id: result.score(i, "faithfulness").value for i, s in result.samples}  # type: ignore[union-attr]
    good = [v for k, v in scores.items() if labels[k] == 1]
    bad = [v for k, v in scores.items() if labels[k] == 0]
    assert len(good) + len(bad) == 12 and good and bad
    pairs = [(g, b) for g in good for b in bad]
    assert sum(g > b for g, b in pairs) >= 0.9 * len(pairs)
    assert sum(good) / len(good) - sum(bad) / len(bad) >= 0.4


def test_evaluate_table_and_runs_commands(tmp_path: Path) -> None:
    code, out, _ = _run(
        ["evaluate", str(EXAMPLE), "--out", str(tmp_path), "-m", "token_f1,rouge_l", "--no-progress"]
    )
    assert code == 0
    assert "token_f1" in out and "rouge_l" in out and "95% CI" in out
    code, out, _ = _run(["runs", "list", "--out", str(tmp_path), "--json"])
    runs = [json.loads(line) for line in out.splitlines()]
    assert len(runs) == 1 and runs[0]["metrics"] == ["token_f1", "rouge_l"]
    run_id = runs[0]["run_id"]
    code, out, _ = _run(["runs", "show", run_id[:12], "--out", str(tmp_path), "--json"])
    assert code == 0 and json.loads(out)["run_id"] == run_id
    target = tmp_path / "export.csv"
    code, out, _ = _run(
        ["runs", "export", "latest", "--out", str(tmp_path), "--format", "csv", "-O", str(target)]
    )
    assert code == 0 and target.read_text().startswith("idx,sample_id")


def test_unknown_metric_exits_2(tmp_path: Path) -> None:
    code, _, err = _run(["evaluate", str(EXAMPLE), "--out", str(tmp_path), "-m", "nope"])
    assert code == 2 and "unknown metric 'nope'" in err


def test_llm_metric_with_local_judge_exits_2_and_says_why(tmp_path: Path) -> None:
    # correctness grades on a 1-5 rubric: only an LLM judge can do that step.
    code, _, err = _run(["evaluate", str(EXAMPLE), "--out", str(tmp_path), "-m", "correctness"])
    assert code == 2 and "correctness" in err and "grade" in err and "--judge" in err


def test_bad_rows_are_reported_and_skipped_or_strict(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(
        '{"question": "q1", "answer": "a b", "reference": "a b"}\n'
        "{not json\n"
        '{"question": "q3", "answer": 5, "reference": "x"}\n'
        '{"question": "q4", "answer": "c", "reference": "c"}\n'
    )
    code, out, _ = _run(["evaluate", str(data), "--out", str(tmp_path / "runs"), "-m", "token_f1", "--json"])
    assert code == 0
    d = json.loads(out)
    assert d["n_samples"] == 2 and d["n_skipped"] == 2
    assert {p["row"] for p in d["skipped"]} == {2, 3}
    assert any(p["field"] == "answer" for p in d["skipped"])
    code, _, err = _run(
        ["evaluate", str(data), "--out", str(tmp_path / "runs"), "-m", "token_f1", "--strict"]
    )
    assert code == 2 and "row 2" in err and "row 3" in err


def test_missing_file_and_bad_mapping_exit_2(tmp_path: Path) -> None:
    code, _, err = _run(["evaluate", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path)])
    assert code == 2 and "missing.jsonl" in err
    code, _, err = _run(["evaluate", str(EXAMPLE), "--out", str(tmp_path), "--map", "questio=x"])
    assert code == 2


def test_map_option_reads_other_columns(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("my_q,my_a,gold\nwhat?,the cat,the cat\nwho?,a cat,the dog\n")
    code, out, err = _run(
        [
            "evaluate",
            str(data),
            "--out",
            str(tmp_path / "r"),
            "-m",
            "exact_match",
            "--json",
            "--map",
            "question=my_q",
            "--map",
            "answer=my_a",
            "--map",
            "reference=gold",
        ]
    )
    assert code == 0, err
    assert json.loads(out)["metrics"]["exact_match"]["mean"] == pytest.approx(0.5)


def test_dry_run_calls_nothing(tmp_path: Path, fake_openai_server) -> None:  # type: ignore[no-untyped-def]
    code, out, err = _run(
        [
            "evaluate",
            str(EXAMPLE),
            "--out",
            str(tmp_path),
            "-m",
            "faithfulness,answer_relevance",
            "--judge",
            "openai-compatible:test-model",
            "--base-url",
            fake_openai_server.url,
            "--dry-run",
            "--json",
        ]
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["dry_run"] is True and d["estimate"]["requests"] > 0 and d["estimate"]["prompt_tokens"] > 0
    assert fake_openai_server.total_requests == 0


def test_metrics_command_lists_fields() -> None:
    code, out, _ = _run(["metrics", "--json"])
    assert code == 0
    rows = {json.loads(line)["name"]: json.loads(line) for line in out.splitlines()}
    assert (
        rows["faithfulness"]["requires"] == ["answer", "contexts"]
        or "contexts" in rows["faithfulness"]["requires"]
    )
    assert rows["token_f1"]["needs_llm"] is False and rows["faithfulness"]["needs_llm"] is True


def test_evaluate_with_http_judge_records_usage_and_uses_cache(tmp_path: Path, fake_openai_server) -> None:  # type: ignore[no-untyped-def]
    args = [
        "evaluate",
        str(EXAMPLE),
        "--out",
        str(tmp_path),
        "-m",
        "faithfulness,answer_relevance",
        "--json",
        "--judge",
        "openai-compatible:test-model",
        "--base-url",
        fake_openai_server.url,
    ]
    code, out, err = _run(args)
    assert code == 0, err
    d = json.loads(out)
    assert d["usage"]["requests"] == fake_openai_server.total_requests > 0
    assert d["usage"]["prompt_tokens"] > 0 and d["usage"]["completion_tokens"] > 0
    assert (
        d["metrics"]["faithfulness"]["n_scored"] + d["metrics"]["faithfulness"]["n_invalid"] == d["n_samples"]
    )
    fake_openai_server.reset_counters()
    code, out, _ = _run(args)
    assert code == 0 and fake_openai_server.total_requests == 0
    assert json.loads(out)["usage"]["cached_requests"] > 0


def test_agreement_json_keys(tmp_path: Path, fake_openai_server) -> None:  # type: ignore[no-untyped-def]
    src = ROOT / "tests" / "dataset" / "data" / "judgements_sample.jsonl"
    data = tmp_path / "faith.jsonl"
    data.write_text("".join(line + "\n" for line in src.read_text().splitlines() if '"faithfulness"' in line))
    code, out, err = _run(
        [
            "agreement",
            str(data),
            "--judge",
            "openai-compatible:m",
            "--base-url",
            fake_openai_server.url,
            "--json",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0, err
    reports = [json.loads(line) for line in out.splitlines()]
    kinds = {r["kind"]: r for r in reports}
    assert set(kinds) == {"pair", "binary"}
    assert set(kinds["pair"]) == {
        "file",
        "aspect",
        "metric",
        "judge",
        "kind",
        "accuracy",
        "ci95",
        "n",
        "n_invalid",
    }
    assert set(kinds["binary"]) == {
        "file",
        "aspect",
        "metric",
        "judge",
        "kind",
        "accuracy",
        "kappa",
        "tpr",
        "tnr",
        "auc",
        "balanced_accuracy",
        "ci95",
        "n",
        "n_invalid",
        "base_rate",
        "threshold",
        "confusion",
        "disagreements",
    }
    assert set(kinds["binary"]["ci95"]) == {"accuracy", "kappa", "tpr", "tnr", "auc", "balanced_accuracy"}
    assert kinds["pair"]["n"] + kinds["pair"]["n_invalid"] == 2


def test_agreement_refuses_a_metric_the_local_judge_cannot_compute(tmp_path: Path) -> None:
    src = ROOT / "tests" / "dataset" / "data" / "judgements_sample.jsonl"
    code, _, err = _run(["agreement", str(src), "--json", "--out", str(tmp_path), "--metric", "correctness"])
    assert code == 2
    assert "cannot" in err or "does not have" in err


def test_resume_from_the_cli_scores_only_what_is_missing(tmp_path: Path, fake_openai_server) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    args = [
        "evaluate",
        str(EXAMPLE),
        "--out",
        str(tmp_path),
        "-m",
        "faithfulness",
        "--json",
        "--no-cache",
        "--judge",
        "openai-compatible:test-model",
        "--base-url",
        fake_openai_server.url,
    ]
    code, out, _ = _run(args)
    assert code == 0
    run_id = json.loads(out)["run_id"]
    first = fake_openai_server.total_requests
    # Simulate a crash after 9 of 12 jobs: drop three recorded scores.
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        db.execute("DELETE FROM scores WHERE run_id = ? AND idx >= 9", (run_id,))
    fake_openai_server.reset_counters()
    code, out, err = _run(["evaluate", "--resume", run_id, "--out", str(tmp_path), "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["run_id"] == run_id and d["status"] == "finished"
    assert d["metrics"]["faithfulness"]["n_scored"] + d["metrics"]["faithfulness"]["n_invalid"] == 12
    assert 0 < fake_openai_server.total_requests <= first * 3 / 12 + 2


def test_dry_run_needs_no_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = [
        "evaluate",
        str(EXAMPLE),
        "--out",
        str(tmp_path),
        "-m",
        "faithfulness",
        "--judge",
        "openai:gpt-4o-mini",
    ]
    code, out, err = _run([*args, "--dry-run", "--json"])
    assert code == 0, err
    assert json.loads(out)["estimate"]["requests"] == 24  # 12 samples x (extract + verify)
    # A real run still refuses at once, naming the variable, before any call.
    code, _, err = _run(args)
    assert code == 2 and "OPENAI_API_KEY" in err
    import os

    assert "OPENAI_API_KEY" not in os.environ  # the placeholder did not leak
