"""`ragmeter evaluate --pipeline / --retriever`: run and score in one go."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter.cli.main import cli
from ragmeter.run.result import Result

MODULE = """
CORPUS = {"a": "The Eiffel Tower is 330 metres tall.", "b": "Photosynthesis happens in chloroplasts.",
          "c": "The GIL lets one thread run bytecode."}

def answer(question):
    key = "a" if "Eiffel" in question else "b" if "photosynthesis" in question else "c"
    if "boom" in question:
        raise ValueError("boom")
    return {"answer": CORPUS[key], "contexts": [{"text": CORPUS[key], "id": key}]}

def retrieve(question):
    first = "a" if "Eiffel" in question else "c"
    return [{"text": CORPUS[k], "id": k} for k in [first, "b"]]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    name = f"my_rag_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    rows = [
        {
            "id": "1",
            "question": "How tall is the Eiffel Tower?",
            "reference": "The Eiffel Tower is 330 metres tall.",
            "reference_context_ids": ["a"],
        },
        {
            "id": "2",
            "question": "Where does photosynthesis happen?",
            "reference": "In chloroplasts.",
            "reference_context_ids": ["b"],
        },
        {"id": "3", "question": "boom?", "reference": "x", "reference_context_ids": ["c"]},
    ]
    (tmp_path / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return tmp_path / f"{name}.py"


def _run(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def test_evaluate_with_pipeline_records_answers_contexts_latency(project: Path) -> None:
    mod = project.stem
    code, out, err = _run(
        [
            "evaluate",
            "questions.jsonl",
            "--pipeline",
            f"{mod}:answer",
            "-m",
            "token_f1,hit_rate",
            "--out",
            "runs",
            "--json",
            "--no-progress",
        ]
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["n_samples"] == 2 and d["n_skipped"] == 1
    assert "ValueError: boom" in json.dumps(d["skipped"])
    assert d["metrics"]["hit_rate"]["mean"] == 1.0
    result = Result.from_store(Path("runs"), d["run_id"])
    assert result.meta["pipeline"]["spec"] == f"{mod}:answer" and result.meta["pipeline"]["n_failed"] == 1
    sample = result.samples[0][1]
    assert sample.answer.startswith("The Eiffel Tower") and sample.context_ids == ("a",)
    assert sample.metadata["latency_s"] >= 0


def test_evaluate_with_retriever_scores_retrieval_metrics(project: Path) -> None:
    mod = project.stem
    code, out, err = _run(
        [
            "evaluate",
            "questions.jsonl",
            "--retriever",
            f"{mod}:retrieve",
            "--out",
            "runs",
            "--json",
            "--no-progress",
        ]
    )
    assert code == 0, err
    d = json.loads(out)
    assert {"hit_rate", "mrr", "ndcg_at_k", "recall_at_k"} <= set(d["metrics"])
    # q1: [a, b] rel a -> rr 1; q2: [c, b] rel b -> rr 0.5; q3: [c, b] rel c -> rr 1
    assert d["metrics"]["mrr"]["mean"] == pytest.approx((1 + 0.5 + 1) / 3)


def test_bad_pipeline_spec_exits_2(project: Path) -> None:
    code, _, err = _run(["evaluate", "questions.jsonl", "--pipeline", "nope_module:fn", "--out", "runs"])
    assert code == 2 and "cannot import module 'nope_module'" in err
    code, _, err = _run(["evaluate", "questions.jsonl", "--pipeline", "x", "--out", "runs"])
    assert code == 2 and "module:function" in err
