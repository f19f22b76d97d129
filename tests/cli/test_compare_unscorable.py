"""Unscorable is not better: a candidate whose answers the judge cannot score regresses (issue 18, 6).

The measured case: 40 WikiEval-like samples (the 10 dev questions of data/dev/wikieval_dev.jsonl,
each with its context and four answers: grounded, written without the context, complete,
incomplete), and a candidate B with 14 of the 40 answers turned into hedges ("I am not sure.") or
small talk ("Thanks for asking! Have a great day!"). The local judge finds no claim in those, so
B's faithfulness is invalid there; over the 26 pairs both runs scored, nothing changed. Before,
``compare --fail-on-regression -m faithfulness`` read "no clear change" and exited 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragmeter.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
WIKIEVAL = ROOT / "data" / "dev" / "wikieval_dev.jsonl"
HEDGES = ("I am not sure.", "I don't know.", "I'm not sure about that.", "Sorry, I can't answer that.")
SMALL_TALK = ("Thanks for asking! Have a great day!", "Great question! I hope this helps.")


def wikieval_like() -> list[dict[str, Any]]:
    """40 samples: per dev question, its context and four answers of known quality."""
    rows = {r["id"]: r for r in map(json.loads, WIKIEVAL.read_text(encoding="utf-8").splitlines())}
    samples = []
    for i in range(10):
        ff, ar, cr = (rows[f"wikieval-dev-{aspect}-{i}"] for aspect in ("ff", "ar", "cr"))
        answers = {
            "grounded": ff["a"]["answer"],
            "ungrounded": ff["b"]["answer"],
            "complete": ar["a"]["answer"],
            "incomplete": ar["b"]["answer"],
        }
        for kind, answer in answers.items():
            samples.append(
                {"id": f"wikieval-{i}-{kind}", "question": ff["question"], "contexts": cr["a"]["contexts"],
                 "answer": answer}
            )  # fmt: skip
    return samples


def hedged(samples: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """B: every third answer (14 of 40) a hedge or small talk; the ids changed."""
    out, changed = [], []
    for i, s in enumerate(samples):
        if i % 3 == 0:
            k = i // 3
            text = HEDGES[(k // 2) % len(HEDGES)] if k % 2 == 0 else SMALL_TALK[(k // 2) % len(SMALL_TALK)]
            s = dict(s, answer=text)
            changed.append(s["id"])
        out.append(s)
    return out, changed


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("unscorable")
    samples = wikieval_like()
    b_rows, changed = hedged(samples)
    empty = [dict(s, answer="") if i % 3 == 0 else s for i, s in enumerate(samples)]
    out = tmp / "runs"
    for run_id, rows in (("A", samples), ("B", b_rows), ("E", empty)):
        code, _, err = _run(
            ["evaluate", str(_write(tmp / f"{run_id}.jsonl", rows)), "--out", str(out), "--run-id", run_id,
             "-m", "faithfulness", "--no-progress", "--json"]
        )  # fmt: skip
        assert code == 0, err
    return {"out": str(out), "changed": changed, "tmp": tmp}


def _json(runs: dict[str, Any], a: str, b: str, *extra: str) -> dict[str, Any]:
    code, out, err = _run(["compare", a, b, "--out", runs["out"], "--json", *extra])
    assert code == 0, err
    return json.loads(out)["metrics"]["faithfulness"]  # type: ignore[no-any-return]


def test_hedged_candidate_is_worse_not_unchanged(runs: dict[str, Any]) -> None:
    f = _json(runs, "A", "B")
    assert len(runs["changed"]) == 14
    # the judge finds nothing to check in the hedges and small talk: invalid in B, valid in A
    assert f["n_invalid_a"] == 0 and f["n_invalid_b"] >= 10
    assert f["n_new_invalid"] == f["n_invalid_b"] and f["n_new_valid"] == 0
    assert f["new_invalid_kinds"] == {"NoClaims": f["n_invalid_b"]}
    assert {c["key"] for c in f["new_invalid"]} <= {f"id:{k}" for k in runs["changed"]}
    # over the pairs both runs scored nothing changed: the pairs alone say "no clear change"
    assert f["n_pairs"] == 40 - f["n_invalid_b"] and abs(f["diff"]) < 1e-6
    assert f["ci95"][0] <= 0 <= f["ci95"][1] or max(map(abs, f["ci95"])) < 1e-6
    assert f["verdict"] == "worse"


def test_fail_on_regression_fails_on_newly_invalid_samples(runs: dict[str, Any]) -> None:
    n = _json(runs, "A", "B")["n_new_invalid"]
    junit = runs["tmp"] / "unscorable.xml"
    code, out, err = _run(
        ["compare", "A", "B", "--out", runs["out"], "--fail-on-regression", "--junit", str(junit)]
    )
    assert code == 1
    assert (
        f"gate failed: faithfulness: {n} sample(s) scored validly in A have no valid score in B (NoClaims: {n})"
        in err
    )
    assert "above the allowed 0" in err
    assert "worse" in out and f"{n} newly invalid" in out and f"faithfulness: {n} newly invalid in B" in out
    assert "faithfulness no newly invalid scores (at most 0)" in junit.read_text(encoding="utf-8")
    # the allowance is a count: exactly n passes, n - 1 does not
    gate = ["compare", "A", "B", "--out", runs["out"], "--fail-on-regression", "--max-new-invalid"]
    assert _run([*gate, str(n)])[0] == 0 and _run([*gate, str(n - 1)])[0] == 1
    assert _json(runs, "A", "B", "--max-new-invalid", str(n))["verdict"] == "no clear change"


def test_the_reverse_is_an_improvement(runs: dict[str, Any]) -> None:
    f = _json(runs, "B", "A")
    assert f["n_new_valid"] == f["n_invalid_a"] > 0 and f["n_new_invalid"] == 0 and f["verdict"] == "better"
    assert _run(["compare", "B", "A", "--out", runs["out"], "--fail-on-regression"])[0] == 0


def test_empty_answers_not_scored_in_b_are_newly_invalid(runs: dict[str, Any]) -> None:
    f = _json(runs, "A", "E")
    assert f["n_unscored"] == 14 and f["n_invalid_b"] == 0
    assert f["n_new_invalid"] == 14 and f["new_invalid_kinds"] == {"not scored": 14}
    assert f["verdict"] == "worse"
    assert _run(["compare", "A", "E", "--out", runs["out"], "--fail-on-regression"])[0] == 1


def test_bad_allowance_is_a_usage_error(runs: dict[str, Any]) -> None:
    code, _, err = _run(["compare", "A", "B", "--out", runs["out"], "--max-new-invalid", "0.1"])
    assert code == 2 and "--max-new-invalid" in err
