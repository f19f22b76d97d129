"""compare_runs: matching by key, paired statistics, invalid scores, comparability, regressions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

import ragmeter
from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError
from ragmeter.judges.types import Usage
from ragmeter.log.store import ScoreRow
from ragmeter.metrics.base import Score
from ragmeter.report.comparison import compare_runs
from ragmeter.run.result import Result

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"

Value = float | str | None  # a number, "invalid", or None (not scored)


def _result(
    run_id: str,
    values: dict[str, list[Value]],
    *,
    ids: list[str] | None = None,
    judge: dict[str, Any] | None = None,
    metric_params: dict[str, Any] | None = None,
    higher_is_better: bool = True,
) -> Result:
    n = len(next(iter(values.values())))
    ids = ids or [f"s{i}" for i in range(n)]
    samples = [(i, Sample(question=f"question {sid}?", answer="a", id=sid)) for i, sid in enumerate(ids)]
    rows = []
    for metric, vals in values.items():
        for i, v in enumerate(vals):
            if v is None:
                continue
            score = (
                Score.invalid("JudgeOutputError", "unparseable", raw="{")
                if v == "invalid"
                else Score(value=float(v), reason=f"{metric} {v} in {run_id}")  # type: ignore[arg-type]
            )
            rows.append(ScoreRow(i, metric, score, Usage(), [], 0.0))
    meta = {
        "judge": judge or {"name": "local", "embedder": {"name": "usem3"}},
        "prompt_versions": {},
        "metrics": [
            {"name": m, "version": 1, "params": metric_params or {}, "higher_is_better": higher_is_better}
            for m in values
        ],
    }
    return Result(
        run_id=run_id, meta=meta, samples=samples, problems=[], rows=rows, metric_names=list(values)
    )


def test_pairs_match_by_key_not_position_and_report_only_in_each_run() -> None:
    a = _result("A", {"m": [0.1, 0.2, 0.3]}, ids=["x", "y", "z"])
    b = _result("B", {"m": [0.35, 0.15, 0.9]}, ids=["z", "x", "w"])
    c = compare_runs(a, b)
    assert c.n_matched == 2 and c.only_a == ("id:y",) and c.only_b == ("id:w",)
    m = c.metrics["m"]
    # x: 0.1 -> 0.15, z: 0.3 -> 0.35
    assert m.n_pairs == 2 and m.mean_a == pytest.approx(0.2) and m.mean_b == pytest.approx(0.25)
    assert m.diff == pytest.approx(0.05) and (m.wins, m.ties, m.losses) == (2, 0, 0)
    assert not c.comparable and any("different evaluation sets" in i for i in c.issues)


def test_invalid_and_missing_scores_leave_the_pair_out() -> None:
    a = _result("A", {"m": [0.5, "invalid", 0.5, None, 0.2]})
    b = _result("B", {"m": [0.5, 0.9, "invalid", 0.7, 0.4]})
    m = compare_runs(a, b).metrics["m"]
    assert m.n_pairs == 2 and m.n_invalid_a == 1 and m.n_invalid_b == 1 and m.n_unscored == 1
    assert (m.wins, m.ties, m.losses) == (1, 1, 0) and m.diff == pytest.approx(0.1)


def test_a_score_lost_in_b_is_newly_invalid_and_one_gained_newly_valid() -> None:
    a = _result("A", {"m": [0.5, "invalid", 0.5, None, 0.2, 0.8, "invalid"]})
    b = _result("B", {"m": [0.5, 0.9, "invalid", 0.7, 0.4, None, "invalid"]})
    m = compare_runs(a, b).metrics["m"]
    # s2: valid in A, invalid in B; s5: valid in A, not scored in B; s6: invalid in both (neither)
    assert (m.n_new_invalid, m.n_new_valid) == (2, 2)
    assert [(c.key, c.value_a, c.value_b, c.error_b) for c in m.new_invalid] == [
        ("id:s2", 0.5, None, "JudgeOutputError"),
        ("id:s5", 0.8, None, "not scored"),
    ]
    assert [(c.key, c.error_a, c.value_b) for c in m.new_valid] == [("id:s1", "JudgeOutputError", 0.9),
                                                                     ("id:s3", "not scored", 0.7)]
    assert m.new_invalid_kinds == {"JudgeOutputError": 1, "not scored": 1}
    assert m.new_invalid[0].reason_b == "unparseable" and "not scored" in m.new_invalid[1].reason_b
    d = m.to_dict()
    assert d["n_new_invalid"] == 2 and d["new_invalid"][1]["error_b"] == "not scored" and d["verdict"] == "worse"


def test_float_noise_is_no_change_not_better() -> None:
    """Scores that differ by float noise (two identical runs of the local judge can differ by
    ~1e-9): every pair ties, the verdict is "no change", nothing regresses or improves; a run
    against itself the same."""
    values = [0.9, 0.2, 0.8, 0.4, 0.7, 0.6, 0.3, 0.9, 0.5, 0.6, 0.25, 0.75, 1.0, 0.0, 0.5]
    noisy = [v + 1.7e-9 for v in values]
    a, b = _result("A", {"m": values}), _result("B", {"m": noisy})
    m = compare_runs(a, b).metrics["m"]
    assert m.diff is not None and 0 < m.diff < 1e-8 and m.ci95 is not None and m.ci95[0] > 0
    assert (m.wins, m.ties, m.losses) == (0, 15, 0)
    assert m.ci_verdict() == "no clear change" and m.verdict() == "no change"
    assert compare_runs(a, a).metrics["m"].verdict() == "no change"
    # a real difference on the same data still reads better
    up = _result("C", {"m": [min(1.0, v + 0.05) for v in values]})
    assert compare_runs(a, up).metrics["m"].verdict() == "better"


def test_unscorable_is_not_better_verdict_and_gate() -> None:
    """Identical scores where both runs scored, three samples unscorable in B: B regressed."""
    values = [0.9, 0.2, 0.8, 0.4, 0.7, 0.6, 0.3, 0.9, 0.5, 0.6]
    hedged = ["invalid" if i in (0, 2, 7) else v for i, v in enumerate(values)]
    a, b = _result("A", {"m": values}), _result("B", {"m": hedged})
    c = compare_runs(a, b)
    m = c.metrics["m"]
    assert m.n_pairs == 7 and m.diff == 0.0 and m.ci_verdict() == "no clear change"
    assert m.n_new_invalid == 3 and m.verdict() == "worse" and c.regressions() == ["m"]
    assert m.verdict(max_new_invalid=2) == "worse" and m.verdict(max_new_invalid=3) == "no clear change"
    assert c.regressions(max_new_invalid=3) == [] and c.to_dict(max_new_invalid=3)["regressions"] == []
    # the reverse is an improvement: A's unscorable answers scored in B
    back = compare_runs(b, a)
    assert back.metrics["m"].n_new_valid == 3 and back.metrics["m"].verdict() == "better"
    assert back.regressions() == [] and back.metrics["m"].verdict(max_new_invalid=3) == "no clear change"
    # B better on the pairs does not excuse a sample it lost; nor does one it gained
    better_pairs = _result("B2", {"m": [min(1.0, v + 0.3) if v != "invalid" else v for v in hedged]})
    m2 = compare_runs(a, better_pairs).metrics["m"]
    assert m2.ci_verdict() == "better" and m2.verdict() == "worse"
    mixed = compare_runs(_result("A", {"m": ["invalid", 0.5, 0.5]}), _result("B", {"m": [0.5, "invalid", 0.5]}))
    assert (mixed.metrics["m"].n_new_invalid, mixed.metrics["m"].n_new_valid) == (1, 1)
    assert mixed.metrics["m"].verdict() == "worse"  # gross, not net: the lost sample is another one
    # nothing valid anywhere: nothing to say
    none = compare_runs(_result("A", {"m": ["invalid", None]}), _result("B", {"m": ["invalid", "invalid"]}))
    assert none.metrics["m"].verdict() == "no pairs" and none.regressions() == []
    # every sample lost: no pair, and still a regression
    lost = compare_runs(_result("A", {"m": [0.5, 0.6]}), _result("B", {"m": ["invalid", None]}))
    assert lost.metrics["m"].n_pairs == 0 and lost.metrics["m"].verdict() == "worse"
    with pytest.raises(ConfigError, match="count >= 0"):
        c.regressions(max_new_invalid=-1)


def test_gate_checks_name_the_newly_invalid_samples() -> None:
    from ragmeter.report.gates import regression_checks

    a = _result("A", {"m": [0.9, 0.8, 0.7, 0.6]})
    b = _result("B", {"m": ["invalid", 0.8, None, 0.6]})
    checks = {ch.rule: ch for ch in regression_checks(compare_runs(a, b))}
    assert checks["regression"].passed
    new = checks["new_invalid"]
    assert not new.passed and new.value == 2 and new.bound == 0
    assert new.name == "m no newly invalid scores (at most 0)"
    assert "2 sample(s) scored validly in A have no valid score in B (JudgeOutputError: 1, not scored: 1)" in (
        new.message
    )
    assert "id:s0, id:s2; above the allowed 0" in new.message
    assert all(ch.passed for ch in regression_checks(compare_runs(a, b), max_new_invalid=2))


def test_statistics_match_reference_computations() -> None:
    rng = np.random.default_rng(0)
    va = rng.uniform(0.3, 1.0, 15).round(3)
    vb = np.clip(va - rng.uniform(0.0, 0.4, 15), 0, 1).round(3)
    c = compare_runs(_result("A", {"m": list(va)}), _result("B", {"m": list(vb)}), n_resamples=2000, seed=0)
    m = c.metrics["m"]
    d = vb - va
    ref_p = sps.permutation_test(
        (d[d != 0],), np.mean, permutation_type="samples", alternative="two-sided", n_resamples=np.inf
    ).pvalue
    assert m.p_value == pytest.approx(ref_p, abs=1e-9) and m.exact
    idx = np.random.default_rng(0).integers(0, 15, size=(2000, 15))
    lo, hi = np.quantile(d[idx].mean(axis=1), [0.025, 0.975])
    assert m.ci95 == pytest.approx((lo, hi))
    assert c.regressions() == ["m"] and c.regressions(margin=0.5) == []
    # the most-worsened sample comes first, with both reasons
    worst = int(np.argmin(d))
    assert m.worsened[0].key == f"id:s{worst}" and m.worsened[0].diff == pytest.approx(d[worst])
    assert m.worsened[0].reason_a == f"m {va[worst]} in A" and m.worsened[0].reason_b == f"m {vb[worst]} in B"


def test_lower_is_better_metric_regresses_when_it_rises() -> None:
    a = _result("A", {"noise": [0.1] * 10}, higher_is_better=False)
    b = _result("B", {"noise": [0.6] * 10}, higher_is_better=False)
    m = compare_runs(a, b).metrics["noise"]
    assert (m.wins, m.losses) == (0, 10) and m.regressed(0.02)
    assert not compare_runs(b, a).metrics["noise"].regressed(0.02)


def test_not_comparable_when_judge_or_metric_parameters_differ_but_not_operational_settings() -> None:
    base = _result(
        "A", {"m": [0.5, 0.6]}, judge={"name": "openai:x", "config": {"temperature": 0, "concurrency": 8}}
    )
    same = _result(
        "B", {"m": [0.5, 0.6]}, judge={"name": "openai:x", "config": {"temperature": 0, "concurrency": 2}}
    )
    other = _result(
        "C", {"m": [0.5, 0.6]}, judge={"name": "openai:y", "config": {"temperature": 0, "concurrency": 8}}
    )
    params = _result(
        "D",
        {"m": [0.5, 0.6]},
        judge={"name": "openai:x", "config": {"temperature": 0}},
        metric_params={"k": 3},
    )
    assert compare_runs(base, same).comparable
    c = compare_runs(base, other)
    assert (
        not c.comparable and "different judges" in c.issues[0] and "'openai:x' vs 'openai:y'" in c.issues[0]
    )
    c = compare_runs(base, params)
    assert not c.comparable and any("metric m differs" in i and "params.k" in i for i in c.issues)
    assert c.metrics["m"].diff == 0.0  # still computed


def test_metrics_option_and_errors() -> None:
    a = _result("A", {"m": [0.5], "n": [0.1]})
    b = _result("B", {"m": [0.5], "o": [0.1]})
    c = compare_runs(a, b)
    assert list(c.metrics) == ["m"] and c.metrics_only_a == ("n",) and c.metrics_only_b == ("o",)
    with pytest.raises(ConfigError, match="not scored by both runs"):
        compare_runs(a, b, metrics=["n"])
    with pytest.raises(ConfigError, match="margin"):
        c.regressions(-0.1)
    with pytest.raises(ConfigError, match="run store"):
        compare_runs("A", "B")


def _unfaithful(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """B: every answer replaced by the next sample's answer, unsupported by this sample's contexts."""
    return [dict(r, answer=rows[(i + 1) % len(rows)]["answer"]) for i, r in enumerate(rows)]


def test_unfaithful_answers_regress_and_a_rerun_does_not(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    metrics = ["faithfulness", "token_f1"]
    a = ragmeter.evaluate(rows, metrics, None, out=tmp_path)
    rerun = ragmeter.evaluate(rows, metrics, None, out=tmp_path)
    b = ragmeter.evaluate(_unfaithful(rows), metrics, None, out=tmp_path)

    same = compare_runs(a.run_id, rerun.run_id, store=tmp_path)
    assert same.comparable and same.n_matched == len(rows)
    assert same.regressions() == [] and same.metrics["faithfulness"].ci95 == (0.0, 0.0)
    assert same.metrics["faithfulness"].p_value == 1.0

    worse = compare_runs(a.run_id, b.run_id, store=tmp_path)
    assert worse.comparable  # same questions and references: only the answers changed
    assert worse.n_matched == len(rows) and worse.n_only_a == worse.n_only_b == 0
    f = worse.metrics["faithfulness"]
    assert "faithfulness" in worse.regressions(margin=0.02)
    assert (
        f.diff is not None
        and f.diff < -0.2
        and f.losses > f.wins
        and f.p_value is not None
        and f.p_value < 0.01
    )
    assert f.worsened and "unsupported" in f.worsened[0].reason_b


def test_no_match_says_why() -> None:
    a = _result("A", {"m": [0.5, 0.6]}, ids=["x", "y"])
    b = ragmeter.Result(
        run_id="B",
        meta=a.meta,
        samples=[(i, Sample(question=f"question {k}?", answer="a")) for i, k in enumerate("xy")],
        problems=[],
        rows=[],
        metric_names=["m"],
    )
    c = compare_runs(a, b)
    assert c.n_matched == 0 and c.metrics["m"].n_pairs == 0 and c.metrics["m"].diff is None
    assert any("no sample matched: A's keys are id:..., B's qr:..." in i for i in c.issues)
    assert c.regressions() == []
