"""Adapting the local judge to a run's labels: ``ragmeter calibrate`` and ``--judge local:FILE``."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import ragmeter
from ragmeter.cli.main import cli
from ragmeter.errors import ConfigError
from ragmeter.judges.factory import make_judge, make_judge_from_recipe
from ragmeter.local.calibration_file import load_calibration, parse_calibration
from ragmeter.local.judge import LocalJudge
from ragmeter.local.refit import Bag, bag_scores
from ragmeter.run.calibrate import MIN_LABELS, acalibrate, calibrate, claim_rows, cv_folds
from ragmeter.run.label_agreement import run_agreement
from ragmeter.run.result import Result
from ragmeter.run.sync import run_sync

ROOT = Path(__file__).resolve().parents[2]
BEGIN = ROOT / "data" / "dev" / "begin_dev.jsonl"
EXAMPLES = ROOT / "examples"
N_ROWS = 60


def _cli(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def _begin_rows(n: int = N_ROWS) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in BEGIN.read_text(encoding="utf-8").splitlines()[:n]]
    return [
        {
            "id": r["id"],
            "question": r["question"],
            "contexts": r["contexts"],
            "answer": r["answer"],
            "label": r["label"],
        }
        for r in rows
    ]


@pytest.fixture(scope="module")
def begin_run(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """A run of the first 60 BEGIN dev rows (faithfulness, the packaged local judge) with their
    human labels, random-drawn."""
    out = tmp_path_factory.mktemp("begin")
    rows = _begin_rows()
    result = ragmeter.evaluate(
        [{k: v for k, v in r.items() if k != "label"} for r in rows], ["faithfulness"], None, out=out
    )
    result.add_labels(
        [{"id": r["id"], "metric": "faithfulness", "label": r["label"]} for r in rows], drawn="random"
    )
    return Result.from_store(out, result.run_id)


def _without_time(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "created_at"}


# ------------------------------------------------------------------------------------- refusals


def test_too_few_labels_are_refused_saying_how_many_more_and_of_which_class(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    assert (
        _cli(
            ["evaluate", str(EXAMPLES / "rag_samples.jsonl"), "--metrics", "faithfulness", "--out", str(out)]
        )[0]
        == 0
    )
    assert (
        _cli(["labels", "import", str(EXAMPLES / "rag_labels.jsonl"), "--run", "latest", "--out", str(out)])[
            0
        ]
        == 0
    )
    code, _, err = _cli(["calibrate", "latest", "--metric", "faithfulness", "--out", str(out)])
    assert code == 2
    result = Result.from_store(out, "latest")
    usable = [
        lab for lab in result.labels if (s := result.score(lab.idx, "faithfulness")) is not None and s.valid
    ]
    n0 = sum(1 for lab in usable if lab.value < 0.5)
    n1 = len(usable) - n0
    assert f"needs at least {MIN_LABELS} labelled samples" in err
    assert f"has {len(usable)} ({n0} labelled 0, {n1} labelled 1)" in err
    more0, more1 = max(0, 10 - n0), max(0, 10 - n1)
    assert f"label at least {max(MIN_LABELS - len(usable), more0 + more1)} more" in err
    assert f"{more0} more labelled 0" in err
    assert not (out / "calibrations").exists()


def test_one_class_only_is_refused_naming_the_missing_class(begin_run: Result, tmp_path: Path) -> None:
    rows = _begin_rows()
    result = ragmeter.evaluate(
        [{k: v for k, v in r.items() if k != "label"} for r in rows], ["faithfulness"], None, out=tmp_path
    )
    result.add_labels([{"id": r["id"], "metric": "faithfulness", "label": 1} for r in rows])
    with pytest.raises(ConfigError, match=r"0 labelled 0.*at least 10 more labelled 0"):
        calibrate(result, "faithfulness")


def test_metrics_that_cannot_be_calibrated_are_refused_with_the_reason(begin_run: Result) -> None:
    with pytest.raises(ConfigError, match=r"F1 .*Calibratable metrics: faithfulness, context_recall"):
        calibrate(begin_run, "factual_correctness")
    with pytest.raises(ConfigError, match="support combiner"):
        calibrate(begin_run, "answer_relevance")
    with pytest.raises(ConfigError, match="has no metric 'context_recall'"):
        calibrate(begin_run, "context_recall")
    code, _, err = _cli(
        ["calibrate", begin_run.run_id, "--metric", "answer_correctness", "--out", str(begin_run.store_dir)]
    )
    assert code == 2 and "similarity" in err


# ---------------------------------------------------------------------- the fit and its record


def test_the_claims_are_the_metrics_own(begin_run: Result) -> None:
    """The bags reproduce the run's stored scores under the packaged combiners (same claims,
    same features), and the 'before' agreement is ``ragmeter agreement RUN``'s, figure for figure."""
    judge = LocalJudge()
    samples = dict(begin_run.samples)
    for idx, _ in begin_run.samples[:20]:
        rows = run_sync(claim_rows(judge, samples[idx], "faithfulness"))
        score = begin_run.score(idx, "faithfulness")
        assert score is not None
        if rows is None:
            assert not score.valid
            continue
        assert bag_scores([Bag(tuple(rows), 1.0)], judge.support, judge.support_plain)[0] == pytest.approx(
            score.value, abs=1e-9
        )
    report = calibrate(begin_run, "faithfulness")
    (mine,) = run_agreement(begin_run)
    for key in ("auc", "accuracy", "kappa", "tpr", "tnr", "balanced_accuracy", "n", "base_rate"):
        assert report.before[key] == pytest.approx(mine.stats[key])
    for key, ci in mine.stats["ci95"].items():
        assert report.before["ci95"][key] == pytest.approx(ci)
    assert report.n_labels + report.n_without_claims == N_ROWS
    assert report.n_without_claims == mine.stats["n_invalid"]


def test_cross_validation_is_deterministic(begin_run: Result) -> None:
    a = calibrate(begin_run, "faithfulness", seed=3)
    b = calibrate(begin_run, "faithfulness", seed=3)
    assert a.to_dict() == b.to_dict()
    assert _without_time(a.calibration.to_dict()) == _without_time(b.calibration.to_dict())
    c = calibrate(begin_run, "faithfulness", seed=4)
    assert c.after != a.after  # other folds: other out-of-fold scores
    assert c.before == a.before  # the packaged judge does not depend on the folds
    assert c.calibration.support == a.calibration.support  # nor does the fit on all labels


def test_folds_keep_groups_together_and_each_class_spread() -> None:
    groups = [f"conv{i // 3}" for i in range(60)]  # 20 conversations of 3 turns
    labels = [float((i // 3) % 2) for i in range(60)]
    fold = cv_folds(groups, labels, 5, seed=0)
    assert (fold == cv_folds(groups, labels, 5, seed=0)).all()
    for g in set(groups):
        assert len({int(fold[i]) for i in range(60) if groups[i] == g}) == 1
    for cls in (0.0, 1.0):
        per_fold = Counter(int(fold[i]) for i in range(60) if labels[i] == cls)
        assert sorted(per_fold.values()) == [6, 6, 6, 6, 6]
    assert not (fold == cv_folds(groups, labels, 5, seed=1)).all()


def test_labels_that_disagree_with_the_packaged_judge_move_the_scores_towards_them(
    begin_run: Result, tmp_path: Path
) -> None:
    """A labeller whose standard is the opposite of the judge's on a feature the judge leans on:
    answers that copy the knowledge nearly word for word are 'not faithful' (say, a policy against
    verbatim copying), the others are. Refitted on those labels, the judge agrees with them better
    out of fold, and the scores of the calibrated judge move towards them."""
    rows = _begin_rows()
    judge = LocalJudge()
    samples = dict(begin_run.samples)
    labels = []
    for idx, sample in begin_run.samples:
        feats = run_sync(claim_rows(judge, samples[idx], "faithfulness"))
        if feats is None:
            continue
        verbatim = np.mean([f["bigram_cov"] for f in feats]) >= 0.8
        labels.append({"id": sample.id, "metric": "faithfulness", "label": 0 if verbatim else 1})
    assert 10 <= sum(lab["label"] for lab in labels) <= len(labels) - 10
    result = ragmeter.evaluate(
        [{k: v for k, v in r.items() if k != "label"} for r in rows], ["faithfulness"], None, out=tmp_path
    )
    result.add_labels(labels, drawn="random")
    report = calibrate(result, "faithfulness")
    assert report.after["auc"] > report.before["auc"] + 0.2
    assert report.gain["auc"] > 0.2 and report.gain["ci95"][0] > 0
    y = {lab["id"]: lab["label"] for lab in labels}
    calibrated = ragmeter.evaluate(
        [{k: v for k, v in r.items() if k != "label"} for r in rows], ["faithfulness"], report.judge()
    )
    before = {s.id: result.score(i, "faithfulness") for i, s in result.samples}
    after = {s.id: calibrated.score(i, "faithfulness") for i, s in calibrated.samples}
    err_before = np.mean([abs(before[k].value - y[k]) for k in y])  # type: ignore[union-attr]
    err_after = np.mean([abs(after[k].value - y[k]) for k in y])  # type: ignore[union-attr]
    assert err_after < err_before - 0.1


# ------------------------------------------------------------------------------ the file


def test_the_file_round_trips_through_judge_local_file(begin_run: Result, tmp_path: Path) -> None:
    out = begin_run.store_dir
    assert out is not None
    code, stdout, err = _cli(
        ["calibrate", begin_run.run_id, "--metric", "faithfulness", "--out", str(out), "--json"]
    )
    assert code == 0, err
    printed = json.loads(stdout)
    path = Path(printed["file"])
    assert path == out / "calibrations" / f"{begin_run.run_id}-faithfulness.json"
    cal = load_calibration(path)
    assert cal.metric == "faithfulness" and cal.record["fitted_on"]["run"] == begin_run.run_id
    assert cal.record["agreement"]["before"]["auc"] == pytest.approx(printed["before"]["auc"])
    assert cal.support.features == LocalJudge().support.features  # the packaged combiner's names
    judge = make_judge(f"local:{path}")
    assert (
        isinstance(judge, LocalJudge)
        and judge.support == cal.support
        and judge.support_plain == cal.support_plain
    )
    assert isinstance(make_judge_from_recipe({"spec": f"local:{path}"}), LocalJudge)

    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k != "label"}) + "\n" for r in _begin_rows(12))
    )
    code, stdout, err = _cli(
        [
            "evaluate",
            str(data),
            "--metrics",
            "faithfulness",
            "--out",
            str(tmp_path / "r"),
            "--judge",
            f"local:{path}",
            "--json",
        ]
    )
    assert code == 0, err
    run = Result.from_store(tmp_path / "r", "latest")
    combiner = run.meta["judge"]["support_combiner"]
    assert combiner["version"] == "calibrated"
    prov = combiner["calibration"]
    assert prov["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (
        prov["file"] == str(path.resolve())
        and prov["run"] == begin_run.run_id
        and prov["metric"] == "faithfulness"
    )
    assert run.meta["judge_recipe"]["spec"] == f"local:{path.resolve()}"
    code, shown, _ = _cli(["runs", "show", run.run_id, "--out", str(tmp_path / "r")])
    assert code == 0 and f"calibrated with {path.resolve()}" in " ".join(shown.split())
    assert f"faithfulness labels of run {begin_run.run_id}" in " ".join(shown.split())
    # the scores are the calibrated combiners' on the metric's own claims
    judge_ = LocalJudge(calibration=path)
    for idx, sample in run.samples:
        score = run.score(idx, "faithfulness")
        assert score is not None
        rows = run_sync(claim_rows(judge_, sample, "faithfulness"))
        if rows is not None:
            assert score.value == pytest.approx(
                bag_scores([Bag(tuple(rows), 1.0)], cal.support, cal.support_plain)[0]
            )
    # the packaged judge's run and the calibrated one are different judges to compare
    plain = ragmeter.evaluate(str(data), ["faithfulness"], None, out=tmp_path / "r")
    code, stdout, _ = _cli(["compare", plain.run_id, run.run_id, "--out", str(tmp_path / "r")])
    assert "different judges" in stdout


@pytest.fixture(scope="module")
def good_file(begin_run: Result, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return calibrate(begin_run, "faithfulness").save(tmp_path_factory.mktemp("cal") / "good.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: "not json {", "is not valid JSON: .* at line 1, column"),
        (lambda d: [1, 2], "must hold a JSON object, not list"),
        (lambda d: {**d, "format": "other"}, "\"format\" must be 'ragmeter-local-calibration'"),
        (lambda d: {**d, "version": 99}, '"version" 99 is not one this ragmeter reads'),
        (lambda d: {k: v for k, v in d.items() if k != "combiners"}, '"combiners" must be an object'),
        (
            lambda d: {**d, "combiners": {"support": d["combiners"]["support"]}},
            '"combiners.support_plain" is missing',
        ),
        (
            lambda d: {
                **d,
                "combiners": {**d["combiners"], "support": {**d["combiners"]["support"], "weights": [1.0]}},
            },
            r'"combiners.support": combiner .*1 weights for 12 features',
        ),
        (
            lambda d: {
                **d,
                "combiners": {
                    **d["combiners"],
                    "support_plain": {
                        **d["combiners"]["support_plain"],
                        "features": ["sim_max"] * 10 + ["vibes"],
                    },
                },
            },
            "does not compute: vibes",
        ),
        (lambda d: {**d, "fit": {"l2": float("nan")}}, r"file\.fit\.l2 is nan"),
        (
            lambda d: {**d, "features": {**d["features"], "combiner_version": "0"}},
            "combiner version '0'; this ragmeter's is .* run `ragmeter calibrate` again",
        ),
        (
            lambda d: {**d, "features": {**d["features"], "embedder": "bge-m3"}},
            "was fitted with the embedder 'bge-m3'",
        ),
    ],
)
def test_a_bad_file_is_refused_naming_the_file_and_what_is_wrong(
    good_file: Path, tmp_path: Path, change: Any, message: str
) -> None:
    changed = change(json.loads(good_file.read_text(encoding="utf-8")))
    bad = tmp_path / "bad.json"
    bad.write_text(changed if isinstance(changed, str) else json.dumps(changed), encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"calibration file {re.escape(str(bad))}: .*{message}"):
        make_judge(f"local:{bad}")
    code, _, err = _cli(["agreement", str(BEGIN), "--limit", "2", "--judge", f"local:{bad}"])
    assert code == 2 and f"calibration file {bad}" in err


def test_judge_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        make_judge(f"local:{tmp_path / 'missing.json'}")
    with pytest.raises(ConfigError, match="names no calibration file"):
        make_judge("local:")
    with pytest.raises(ConfigError, match="not both"):
        LocalJudge(calibration=tmp_path / "x.json", support=LocalJudge().support)
    with pytest.raises(ConfigError, match="must hold a JSON object"):
        parse_calibration("text")


def test_a_calibration_needs_the_verifier_it_was_fitted_with(good_file: Path) -> None:
    with pytest.raises(
        ConfigError, match="fitted with the verifier 'verifier:minilm-l6-int8'; this judge uses None"
    ):
        LocalJudge(calibration=good_file, verifier=None)


# -------------------------------------------------------------------------- other metrics, API


def test_context_recall_calibrates_on_the_reference_claims(tmp_path: Path) -> None:
    """context_recall verifies the reference's claims against the contexts, as faithfulness does
    the answer's: with the answer as the reference, both see the same bags."""
    rows = _begin_rows(40)
    data = [
        {
            "id": r["id"],
            "question": r["question"],
            "contexts": r["contexts"],
            "answer": r["answer"],
            "reference": r["answer"],
        }
        for r in rows
    ]
    result = ragmeter.evaluate(data, ["faithfulness", "context_recall"], None, out=tmp_path)
    for metric in ("faithfulness", "context_recall"):
        result.add_labels(
            [{"id": r["id"], "metric": metric, "label": r["label"]} for r in rows], drawn="random"
        )
    f = run_sync(acalibrate(result, "faithfulness"))
    c = run_sync(acalibrate(result, "context_recall"))
    assert c.before == f.before and c.after == f.after
    assert c.calibration.support == f.calibration.support and c.calibration.metric == "context_recall"


def test_public_api() -> None:
    assert {"calibrate", "acalibrate", "CalibrationReport"} <= set(ragmeter.__all__)
    assert ragmeter.calibrate is calibrate


def test_a_calibrated_estimate_on_the_labels_the_judge_was_fitted_on_warns(
    begin_run: Result, good_file: Path, tmp_path: Path
) -> None:
    """PPI's interval assumes the judge was not fitted on the labelled samples; a run scored with a
    calibration and labelled on the samples it was fitted on says so."""
    rows = _begin_rows()
    data = [{k: v for k, v in r.items() if k != "label"} for r in rows]
    labels = [{"id": r["id"], "metric": "faithfulness", "label": r["label"]} for r in rows]
    calibrated = ragmeter.evaluate(data, ["faithfulness"], LocalJudge(calibration=good_file), out=tmp_path / "a")
    calibrated.add_labels(labels, drawn="random")
    est = calibrated.summary()["faithfulness"].calibrated
    assert est is not None and "calibrated on the labels of 58 of these 60 labelled samples" in est["warning"]
    packaged = ragmeter.evaluate(data, ["faithfulness"], None, out=tmp_path / "b")
    packaged.add_labels(labels, drawn="random")
    est = packaged.summary()["faithfulness"].calibrated
    assert est is not None and "calibrated on" not in (est["warning"] or "")


def test_the_help_states_the_defaults_and_minimums() -> None:
    from ragmeter.local.refit import DEFAULT_L2
    from ragmeter.run.calibrate import MIN_PER_CLASS

    code, out, _ = _cli(["calibrate", "--help"])
    text = " ".join(out.split())
    assert code == 0
    assert f"[default: {DEFAULT_L2:g}]" in text
    assert f"at least {MIN_LABELS} labelled samples with claims to check, {MIN_PER_CLASS} of each class" in text
