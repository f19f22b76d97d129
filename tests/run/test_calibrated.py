"""Agreement on a run's own labels (ragmeter agreement RUN) and the calibrated estimate of the
human mean in the summary, gates, console and report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import ragmeter
from ragmeter.cli.main import cli
from ragmeter.dataset.sample import Sample
from ragmeter.log import RunStore
from ragmeter.metrics.base import Metric, Score
from ragmeter.report.gates import threshold_checks
from ragmeter.run.label_agreement import run_agreement
from ragmeter.run.result import Result
from ragmeter.stats.ppi import ppi_mean


def _cli(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


class Given(Metric):
    """A metric that reads its score from the sample's metadata (``s``; ``None``: invalid)."""

    name = "given"
    requires = ("answer",)
    threshold = 0.5

    async def score(self, sample: Sample, judge: Any) -> Score:
        value = sample.metadata.get("s")
        if value is None:
            return Score.invalid("JudgeOutputError", "no verdict")
        return Score(float(value), "given")


def _run(tmp_path: Path, n: int = 60, seed: int = 1, invalid: int = 0) -> tuple[Result, np.ndarray]:
    """A run of ``n`` samples whose 'given' scores are a lenient judge's view of the true labels."""
    rng = np.random.default_rng(seed)
    truth = (rng.random(n) < 0.6).astype(float)
    scores = np.clip(0.4 * truth + 0.5 + rng.normal(0, 0.1, n), 0, 1)
    rows = []
    for i in range(n):
        s = None if i < invalid else round(float(scores[i]), 4)
        rows.append({"id": f"s{i}", "question": f"q{i}?", "answer": f"a{i}", "s": s})
    return ragmeter.evaluate(rows, [Given()], None, out=tmp_path), truth


def _label(result: Result, truth: np.ndarray, idxs: Any, drawn: str = "random") -> None:
    with RunStore(result.store_dir or ".") as store:
        store.put_labels(
            result.run_id, [ragmeter.log.Label(int(i), "given", float(truth[i]), drawn=drawn) for i in idxs]
        )


def _draw(result: Result) -> tuple[int, ...]:
    with RunStore(result.store_dir or ".") as store:
        return store.label_draw(result.run_id).order


# ----------------------------------------------------------------------------------- agreement RUN


def test_agreement_of_a_run_equals_agreement_of_its_exported_labels(tmp_path: Path) -> None:
    rows = [
        {"id": f"s{i}", "question": f"question {i}?", "reference": f"the answer is {i}",
         "answer": f"the answer is {i}" if i % 3 else f"no idea {i}"}
        for i in range(30)
    ]  # fmt: skip
    r = ragmeter.evaluate(rows, ["token_f1"], None, out=tmp_path / "runs")
    rng = np.random.default_rng(0)
    with RunStore(tmp_path / "runs") as store:
        for idx in range(30):
            drawn = "random" if idx < 20 else "picked"
            store.put_label(r.run_id, idx, "token_f1", int(rng.random() < 0.7), drawn=drawn)
    code, run_out, err = _cli(["agreement", r.run_id, "--out", str(tmp_path / "runs"), "--json"])
    assert code == 0, err
    (by_run,) = [json.loads(line) for line in run_out.splitlines()]
    exported = tmp_path / "labels.jsonl"
    assert _cli(["labels", "export", r.run_id, "--out", str(tmp_path / "runs"), "-O", str(exported)])[0] == 0
    code, file_out, err = _cli(["agreement", str(exported), "--out", str(tmp_path / "cache"), "--json"])
    assert code == 0, err
    (by_file,) = [json.loads(line) for line in file_out.splitlines()]
    assert by_run["labels"] == {"random": 20, "picked": 10} and by_run["run"] == r.run_id
    for d in by_run["disagreements"]:
        assert r.keys[d.pop("idx")] == d.pop("key") and d.pop("drawn") in ("random", "picked")
    for key in ("file", "run", "labels", "judge"):
        by_run.pop(key, None)
        by_file.pop(key, None)
    assert by_run == by_file  # the same figures, to the last digit
    assert by_run["kind"] == "binary" and by_run["n"] == 30
    assert {"accuracy", "kappa", "tpr", "tnr", "auc", "confusion", "base_rate"} <= set(by_run)


def test_agreement_run_text_output_and_errors(tmp_path: Path) -> None:
    r, truth = _run(tmp_path, n=20)
    code, _, err = _cli(["agreement", r.run_id, "--out", str(tmp_path)])
    assert code == 2 and "has no labels" in err and "ragmeter labels import" in err
    _label(r, truth, range(15))
    _label(r, truth, range(15, 20), drawn="picked")
    code, out, err = _cli(["agreement", "latest", "--out", str(tmp_path)])
    assert code == 0, err
    assert "labels: 15 random, 5 picked" in out and "picked labels count here" in out
    assert "kappa" in out and "judge passes" in out
    reports = run_agreement(Result.from_store(tmp_path, r.run_id))
    assert [rep.metric for rep in reports] == ["given"]
    code, _, err = _cli(["agreement", "nope.jsonl", "--out", str(tmp_path)])
    assert code == 2 and "does not exist" in err


# ----------------------------------------------------------------------------------- calibrated


def test_calibrated_uses_the_random_labels_on_the_prefix_of_the_draw(tmp_path: Path) -> None:
    r, truth = _run(tmp_path, n=60)
    assert "calibrated" not in r.to_dict()["metrics"]["given"]
    order = _draw(r)
    _label(r, truth, order[:30])
    _label(r, truth, order[31:35])  # behind a skipped sample: held back
    _label(r, truth, order[40:45], drawn="picked")  # picked: agreement only
    again = Result.from_store(tmp_path, r.run_id)
    cal = again.summary()["given"].calibrated
    assert cal is not None and cal["method"] == "ppi++"
    assert (cal["n_labels"], cal["n_held_back"], cal["n_picked"], cal["n_imputed"]) == (30, 4, 5, 0)
    scores = {i: again.score(i, "given").value for i, _ in again.samples}  # type: ignore[union-attr]
    lab = list(order[:30])
    expect = ppi_mean([truth[i] for i in lab], [scores[i] for i in lab], [scores[i] for i in order[30:]])
    assert cal["mean"] == pytest.approx(expect.mean) and cal["lambda"] == pytest.approx(expect.lam)
    assert cal["ci95"] == pytest.approx([max(0.0, expect.ci[0]), min(1.0, expect.ci[1])])
    assert cal["labels_only_mean"] == pytest.approx(float(np.mean([truth[i] for i in lab])))
    d = json.loads(_cli(["runs", "show", r.run_id, "--out", str(tmp_path), "--json"])[1])
    assert d["metrics"]["given"]["calibrated"]["n_labels"] == 30
    code, out, _ = _cli(["runs", "show", r.run_id, "--out", str(tmp_path)])
    assert code == 0 and "calibrated to people's labels" in out and "30 random labels" in out
    assert "The 95% CI is of the judge's mean" in out


def test_invalid_scores_enter_as_the_judge_mean_and_are_counted(tmp_path: Path) -> None:
    r, truth = _run(tmp_path, n=50, invalid=5)
    order = _draw(r)
    _label(r, truth, order[:25])
    cal = Result.from_store(tmp_path, r.run_id).summary()["given"].calibrated
    assert cal is not None and cal["n_imputed"] == 5 and cal["n_samples"] == 50
    valid = [s.value for s in r.scores("given") if s is not None and s.valid]
    fill = sum(valid) / len(valid)
    pred = {i: (fill if i < 5 else r.score(i, "given").value) for i in range(50)}  # type: ignore[union-attr]
    lab = list(order[:25])
    expect = ppi_mean([truth[i] for i in lab], [pred[i] for i in lab], [pred[i] for i in order[25:]])
    assert cal["mean"] == pytest.approx(expect.mean)


def test_too_few_labels_no_interval_and_the_gate(tmp_path: Path) -> None:
    r, truth = _run(tmp_path, n=40)
    order = _draw(r)
    _label(r, truth, order[:4])
    res = Result.from_store(tmp_path, r.run_id)
    cal = res.summary()["given"].calibrated
    assert cal is not None and cal["mean"] is None and cal["ci95"] is None and cal["needed"] == 6
    (check,) = threshold_checks(res, {"given": 0.1}, gate="calibrated")
    assert not check.passed and "6 more needed" in check.message
    _label(r, truth, order[4:40])  # every sample: the labels alone
    res = Result.from_store(tmp_path, r.run_id)
    cal = res.summary()["given"].calibrated
    assert cal is not None and cal["lambda"] == 0.0 and cal["mean"] == pytest.approx(truth.mean())
    (check,) = threshold_checks(res, {"given": 0.1}, gate="calibrated")
    assert check.passed and check.value == pytest.approx(cal["ci95"][0])
    (check,) = threshold_checks(res, {"given": 0.99}, gate="calibrated")
    assert not check.passed and "calibrated 95% CI lower end" in check.message


def test_evaluate_labels_option_gates_on_the_calibrated_bound(tmp_path: Path) -> None:
    data = Path(__file__).resolve().parents[2] / "examples"
    args = ["evaluate", str(data / "rag_samples.jsonl"), "--metrics", "faithfulness", "--out", str(tmp_path),
            "--no-progress", "--labels", str(data / "rag_labels.jsonl"), "--fail-under"]  # fmt: skip
    code, out, err = _cli([*args, "faithfulness=0.3", "--gate", "calibrated", "--json"])
    assert code == 0, err
    d = json.loads(out)
    cal = d["metrics"]["faithfulness"]["calibrated"]
    assert cal["n_labels"] == 12 and cal["mean"] == pytest.approx(8 / 12)
    assert d["gates"][0]["passed"] and "labels: 12 imported" in err
    code, _, err = _cli([*args, "faithfulness=0.6", "--gate", "calibrated"])
    assert code == 1 and "calibrated 95% CI lower end" in err


def test_report_shows_the_calibrated_estimate_and_the_agreement(tmp_path: Path) -> None:
    from ragmeter.report.html_data import report_data

    r, truth = _run(tmp_path, n=30)
    _label(r, truth, _draw(r)[:20])
    data = report_data(Result.from_store(tmp_path, r.run_id))
    (m,) = data["metrics"]
    assert m["calibrated"]["n_labels"] == 20
    (a,) = data["agreement"]
    assert a["metric"] == "given" and a["labels"] == {"random": 20, "picked": 0}
    assert all("idx" in d for d in a["disagreements"])
    assert data["agreement"] == [
        rep.to_dict() for rep in run_agreement(Result.from_store(tmp_path, r.run_id))
    ]


def test_compare_gets_a_calibrated_difference_when_both_runs_are_labelled(tmp_path: Path) -> None:
    from ragmeter.report.comparison import compare_runs

    a, truth_a = _run(tmp_path, n=60, seed=1)
    b, truth_b = _run(tmp_path, n=60, seed=2)
    c = compare_runs(a.run_id, b.run_id, store=tmp_path)
    assert c.metrics["given"].calibrated is None
    assert "on the judge's scale" in c.to_dict()["ci"]
    order = _draw(a)
    assert order == _draw(b)  # the same questions: the same draw
    _label(a, truth_a, order[:30])
    _label(b, truth_b, order[:25])
    c = compare_runs(a.run_id, b.run_id, store=tmp_path)
    cal = c.metrics["given"].calibrated
    assert cal is not None and cal["n_labels"] == 25 and cal["n_pairs"] == 60
    fa = {i: a.score(i, "given").value for i in range(60)}  # type: ignore[union-attr]
    fb = {i: b.score(i, "given").value for i in range(60)}  # type: ignore[union-attr]
    lab = list(order[:25])
    expect = ppi_mean(
        [truth_b[i] - truth_a[i] for i in lab],
        [fb[i] - fa[i] for i in lab],
        [fb[i] - fa[i] for i in order[25:]],
    )
    assert cal["diff"] == pytest.approx(expect.mean)
    assert cal["ci95"] == pytest.approx([max(-1.0, expect.ci[0]), min(1.0, expect.ci[1])])
    assert c.to_dict()["metrics"]["given"]["calibrated"]["n_labels"] == 25
    code, out, _ = _cli(["compare", a.run_id, b.run_id, "--out", str(tmp_path)])
    assert code == 0 and "calibrated to people's labels: B - A" in out


def test_a_result_whose_store_is_gone_reads_no_labels_and_creates_nothing(tmp_path: Path) -> None:
    import shutil

    r, truth = _run(tmp_path / "runs", n=12)
    _label(r, truth, range(12))
    again = Result.from_store(tmp_path / "runs", r.run_id)
    shutil.rmtree(tmp_path / "runs")
    assert again.labels == []
    # the Result reads its record on demand (docs/runs.md): with the store gone, a clear error
    with pytest.raises(ragmeter.RunError, match="no run store"):
        again.to_dict()
    assert not (tmp_path / "runs").exists()
