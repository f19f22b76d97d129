"""CLI: compare (table, --json, --fail-on-regression), evaluate gates, JUnit XML, exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers.examples import write_swapped_answers
from ragmeter.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
METRICS = "faithfulness,token_f1"


def _run(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def _evaluate(data: Path, out: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    code, stdout, err = _run(
        ["evaluate", str(data), "--out", str(out), "-m", METRICS, "--json", "--no-progress", *extra]
    )
    return code, json.loads(stdout) if stdout.strip() else {}, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A baseline run, a re-run of the same data, and a run whose answers are deliberately unfaithful."""
    tmp = tmp_path_factory.mktemp("runs")
    bad = write_swapped_answers(tmp / "unfaithful.jsonl")
    out = tmp / "store"
    ids = {}
    for name, data in (("a", EXAMPLE), ("rerun", EXAMPLE), ("bad", bad)):
        code, d, err = _evaluate(data, out)
        assert code == 0, err
        ids[name] = d["run_id"]
    return {"out": out, "tmp": tmp, **ids}


def _xml_cases(path: Path) -> list[ET.Element]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert int(suite.get("tests", "-1")) == len(cases) == int(root.get("tests", "-1"))
    failures = [c for c in cases if c.find("failure") is not None]
    assert int(suite.get("failures", "-1")) == len(failures) == int(root.get("failures", "-1"))
    for case in cases:
        assert case.get("name") and case.get("classname", "").startswith("ragmeter.")
    return cases


def test_compare_json_has_the_documented_keys(runs: dict[str, Any]) -> None:
    code, out, err = _run(
        ["compare", runs["a"], runs["bad"], "--out", str(runs["out"]), "--json", "--margin", "0.02"]
    )
    assert code == 0, err  # no gate asked for
    d = json.loads(out)
    assert {
        "run_a",
        "run_b",
        "n_matched",
        "n_only_a",
        "n_only_b",
        "comparable",
        "metrics",
        "regressions",
    } <= set(d)
    assert d["run_a"] == runs["a"] and d["run_b"] == runs["bad"] and d["n_matched"] == 12
    assert d["n_only_a"] == d["n_only_b"] == 0 and d["comparable"] is True
    for m in d["metrics"].values():
        assert {"mean_a", "mean_b", "diff", "ci95", "p_value", "wins", "ties", "losses"} <= set(m)
    assert "faithfulness" in d["regressions"]
    assert "permutation" in d["test"]


def test_regression_gate_fails_on_unfaithful_answers_with_junit(runs: dict[str, Any]) -> None:
    junit = runs["tmp"] / "compare.xml"
    code, out, err = _run(
        ["compare", runs["a"], runs["bad"], "--out", str(runs["out"]), "--fail-on-regression", "--margin", "0.02",
         "--junit", str(junit)]
    )  # fmt: skip
    assert code == 1
    assert "gate failed: faithfulness: B - A = -" in err and "regression: the CI's upper end" in err
    assert "faithfulness" in out and "worse" in out and "worse in B" in out
    cases = {c.get("name"): c for c in _xml_cases(junit)}
    failure = cases["faithfulness no regression (margin 0.02)"].find("failure")
    assert failure is not None and "regression" in failure.get("message", "")


def test_regression_gate_passes_on_a_rerun(runs: dict[str, Any]) -> None:
    junit = runs["tmp"] / "same.xml"
    code, out, err = _run(
        [
            "compare",
            runs["a"],
            runs["rerun"],
            "--out",
            str(runs["out"]),
            "--fail-on-regression",
            "--junit",
            str(junit),
        ]
    )
    assert code == 0, err
    assert "NOT COMPARABLE" not in out + err
    assert all(c.find("failure") is None for c in _xml_cases(junit))


def test_compare_warns_loudly_when_not_comparable(runs: dict[str, Any], tmp_path: Path) -> None:
    half = tmp_path / "half.jsonl"
    half.write_text(
        "".join(EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:6]), encoding="utf-8"
    )
    code, d, err = _evaluate(half, runs["out"])
    assert code == 0, err
    code, out, err = _run(["compare", runs["a"], d["run_id"], "--out", str(runs["out"])])
    assert code == 0
    assert "NOT COMPARABLE" in out and "warning: the runs are NOT COMPARABLE" in err
    assert "only in A 6" in out


def test_compare_unknown_run_exits_2(runs: dict[str, Any]) -> None:
    code, _, err = _run(["compare", runs["a"], "nope", "--out", str(runs["out"])])
    assert code == 2 and "no run 'nope'" in err


def test_fail_under_passes_fails_and_names_the_metric(tmp_path: Path) -> None:
    junit = tmp_path / "gates.xml"
    code, d, err = _evaluate(
        EXAMPLE, tmp_path / "s", "--fail-under", "token_f1=0.1,faithfulness=0.99", "--junit", str(junit)
    )
    assert code == 1 and d["metrics"]["faithfulness"]["mean"] < 0.99
    assert [(g["name"], g["passed"]) for g in d["gates"]] == [
        ("token_f1 mean >= 0.1", True),
        ("faithfulness mean >= 0.99", False),
    ]
    assert (
        "gate failed: faithfulness: mean" in err
        and "is not >= 0.99" in err
        and "token_f1" not in err.split("gate")[1]
    )
    cases = {c.get("name"): c for c in _xml_cases(junit)}
    assert cases["token_f1 mean >= 0.1"].find("failure") is None
    assert cases["faithfulness mean >= 0.99"].find("failure") is not None
    code, _, err = _evaluate(EXAMPLE, tmp_path / "s", "--fail-under", "token_f1=0.1")
    assert code == 0, err


def test_gate_lower_uses_the_ci_lower_end(tmp_path: Path) -> None:
    code, d, _ = _evaluate(EXAMPLE, tmp_path, "--fail-under", "token_f1=0.1")
    m = d["metrics"]["token_f1"]
    bound = round((m["mean"] + m["ci95"][0]) / 2, 4)  # between the CI's lower end and the mean
    code, _, _ = _evaluate(EXAMPLE, tmp_path, "--fail-under", f"token_f1={bound}")
    assert code == 0
    code, _, err = _evaluate(EXAMPLE, tmp_path, "--fail-under", f"token_f1={bound}", "--gate", "lower")
    assert code == 1 and "95% CI lower end" in err


def test_max_invalid_and_fail_on_invalid_are_one_gate(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    rows = [
        {
            "question": "What colour is the sky?",
            "contexts": ["The sky is blue."],
            "answer": "The sky is blue.",
        },
        {
            "question": "What colour is grass?",
            "contexts": ["Grass is green."],
            "answer": "...",
        },  # no claim: invalid
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gate = ["-m", "faithfulness", "--json", "--no-progress", "--out", str(tmp_path / "s")]
    junit = tmp_path / "inv.xml"
    code, out, err = _run(["evaluate", str(data), *gate, "--max-invalid", "0.5", "--junit", str(junit)])
    assert code == 0, err
    assert json.loads(out)["metrics"]["faithfulness"]["n_invalid"] == 1
    (case,) = _xml_cases(junit)
    assert case.get("name") == "faithfulness invalid share <= 0.5" and case.find("failure") is None
    code, _, err = _run(["evaluate", str(data), *gate, "--max-invalid", "0.4"])
    assert (
        code == 1
        and "gate failed: faithfulness: 1 of 2 scores invalid (50.0%), above the allowed 40.0% (NoClaims: 1)"
        in err
    )
    code, _, err = _run(["evaluate", str(data), *gate, "--fail-on-invalid"])
    assert code == 1 and "above the allowed 0.0%" in err
    code, _, err = _run(["evaluate", str(data), *gate, "--fail-on-invalid", "--max-invalid", "0.1"])
    assert code == 2 and "give one of them" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-under", "nope=0.5"], "does not score: nope"),
        (["--fail-under", "token_f1"], "expected METRIC=BOUND"),
        (["--fail-under", "token_f1=high"], "is not a number"),
        (["--max-invalid", "2"], "2"),
        (["--dry-run", "--fail-under", "token_f1=0.5"], "cannot apply gates"),
    ],
)
def test_bad_gate_options_exit_2_before_any_run(tmp_path: Path, args: list[str], message: str) -> None:
    code, _, err = _run(
        ["evaluate", str(EXAMPLE), "--out", str(tmp_path), "-m", "token_f1", "--no-progress", *args]
    )
    assert code == 2 and message in err
    assert not (tmp_path / "runs.sqlite").exists() or "--max-invalid" in args


def test_junit_escapes_hostile_text(tmp_path: Path) -> None:
    from ragmeter.report.gates import GateCheck, write_junit

    path = write_junit(
        tmp_path / "x.xml",
        [GateCheck('m <"&>', "m", "fail_under", False, 0.1, 0.5, "reason </failure><script>\x00\x1b")],
        "suite & <x>",
    )
    (case,) = _xml_cases(path)
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "reason </failure><script>\ufffd\ufffd"


def test_nothing_measured_is_never_success(tmp_path: Path) -> None:
    """A metric without one valid score fails the run (exit 1, the invalid kinds counted) though no
    gate was asked for; --max-invalid 1 accepts it; a metric with one valid score passes."""
    data = tmp_path / "d.jsonl"
    rows = [
        {"question": "Q1?", "contexts": ["Paris is the capital of France."], "answer": "I do not know."},
        {"question": "Q2?", "contexts": ["Paris is the capital of France."], "answer": "Hello!"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["evaluate", str(data), "-m", "faithfulness", "--json", "--no-progress", "--out", str(tmp_path / "s")]
    code, out, err = _run(base)
    assert code == 1
    assert "gate failed: faithfulness: nothing measured: all 2 scores invalid (NoClaims: 2)" in err
    assert json.loads(out)["gates"][0]["rule"] == "scored"
    code, _, err = _run([*base, "--max-invalid", "1"])
    assert code == 0, err
    rows[0]["answer"] = "Paris is the capital of France."
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = _run(base)
    assert code == 0, err
    assert "gates" not in json.loads(out)


def test_an_endpoint_no_connection_reaches_exits_2_at_once(tmp_path: Path) -> None:
    """A --base-url where nothing listens: exit 2 with the URL and the cause, no retries."""
    import time

    t = time.monotonic()
    res = CliRunner().invoke(
        cli,
        [
            "evaluate", str(EXAMPLE), "-m", "faithfulness", "--no-progress", "--out", str(tmp_path / "s"),
            "--judge", "openai-compatible:m", "--base-url", "http://127.0.0.1:9/v1",
        ],
    )
    assert res.exit_code == 2
    assert "http://127.0.0.1:9/v1: the connection to 127.0.0.1:9 was refused" in res.stderr
    assert "is the server running" in res.stderr and time.monotonic() - t < 20
