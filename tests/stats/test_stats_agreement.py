from __future__ import annotations

import json

import numpy as np
import pytest

from ragmeter.stats import agreement_summary, kendall_tau_b, roc_auc, spearman


def test_pairs_exact_keys_and_invalid() -> None:
    out = agreement_summary("pair", preferred=[1.0, 0.5, None, 0.2, 0.9], other=[0.0, 0.5, 1.0, 0.9, None])
    assert set(out) == {"accuracy", "ci95", "n", "n_invalid"}
    assert out["accuracy"] == 0.5  # (1 + 0.5 + 0) / 3
    assert out["n"] == 3 and out["n_invalid"] == 2
    lo, hi = out["ci95"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    json.dumps(out, allow_nan=False)


def test_pairs_lower_is_better() -> None:
    out = agreement_summary("pair", preferred=[0.1, 0.2], other=[0.5, 0.6], higher_is_better=False)
    assert out["accuracy"] == 1.0 and out["ci95"] == [1.0, 1.0]


def test_pairs_all_invalid() -> None:
    out = agreement_summary("pair", preferred=[None, None], other=[0.1, None])
    assert out == {"accuracy": None, "ci95": None, "n": 0, "n_invalid": 2}


def test_binary_points() -> None:
    scores = [0.9, 0.6, 0.4, 0.2, 0.7, None]
    labels = [1, 1, 1, 0, 0, 1]
    out = agreement_summary(
        "point", "binary", scores=scores, labels=labels, threshold=0.5, ids=list("abcdef")
    )
    assert set(out) == {
        "accuracy", "kappa", "tpr", "tnr", "auc", "balanced_accuracy", "ci95", "n", "n_invalid", "base_rate",
        "threshold", "confusion", "disagreements",
    }  # fmt: skip
    assert set(out["ci95"]) == {"accuracy", "kappa", "tpr", "tnr", "auc", "balanced_accuracy"}
    # at 0.5 the judge passes 0.9, 0.6, 0.7: right on 0.9, 0.6 (label 1) and 0.2 (label 0)
    assert out["accuracy"] == pytest.approx(3 / 5) and out["base_rate"] == pytest.approx(3 / 5)
    assert out["tpr"] == pytest.approx(2 / 3) and out["tnr"] == pytest.approx(1 / 2)
    # kappa: p_o = 0.6, p_e = 0.6 * 0.6 + 0.4 * 0.4 = 0.52
    assert out["kappa"] == pytest.approx((0.6 - 0.52) / 0.48)
    assert out["confusion"] == {"tp": 2, "fn": 1, "fp": 1, "tn": 1}
    assert [(d["id"], d["score"], d["label"]) for d in out["disagreements"]] == [
        ("e", 0.7, 0.0),
        ("c", 0.4, 1.0),
    ]
    assert out["n"] == 5 and out["n_invalid"] == 1
    # positives 0.9, 0.6, 0.4 vs negatives 0.2, 0.7: 4 of 6 pairs ordered right
    assert out["auc"] == pytest.approx(4 / 6)
    assert out["balanced_accuracy"] == pytest.approx(7 / 12)
    for key in ("auc", "balanced_accuracy"):
        lo, hi = out["ci95"][key]
        assert 0.0 <= lo <= out[key] <= hi <= 1.0
    json.dumps(out, allow_nan=False)


def test_binary_one_class_is_none_not_nan() -> None:
    out = agreement_summary("point", "binary", scores=[0.2, 0.4], labels=[1, 1])
    assert out["auc"] is None and out["balanced_accuracy"] is None and out["tnr"] is None
    assert out["ci95"]["auc"] is None and out["ci95"]["tnr"] is None
    assert out["accuracy"] == 0.0 and out["tpr"] == 0.0 and out["n"] == 2 and out["n_invalid"] == 0
    assert out["kappa"] == 0.0  # all wrong, labels all 1: p_o = 0 = p_e
    json.dumps(out, allow_nan=False)


def test_binary_rejects_graded_labels() -> None:
    with pytest.raises(ValueError, match="must be 0 or 1"):
        agreement_summary("point", "binary", scores=[0.2, 0.4], labels=[1, 0.5])


def test_graded_points() -> None:
    rng = np.random.default_rng(9)
    labels = np.round(rng.random(60), 1)
    scores = np.clip(labels + rng.normal(0, 0.3, 60), 0, 1)
    scores_list: list[float | None] = [float(s) for s in scores] + [None, None]
    labels_list = [float(v) for v in labels] + [0.5, 1.0]
    out = agreement_summary("point", "graded", scores=scores_list, labels=labels_list)
    assert set(out) == {
        "spearman", "kendall", "auc", "ci95", "n", "n_invalid", "base_rate", "threshold", "confusion", "disagreements",
    }  # fmt: skip
    assert set(out["ci95"]) == {"spearman", "kendall", "auc"}
    assert out["n"] == 60 and out["n_invalid"] == 2
    assert out["spearman"] == pytest.approx(spearman(scores, labels))
    assert out["kendall"] == pytest.approx(kendall_tau_b(scores, labels))
    assert out["auc"] == pytest.approx(roc_auc(scores, labels >= 0.5))
    for key in ("spearman", "kendall", "auc"):
        lo, hi = out["ci95"][key]
        assert lo <= out[key] <= hi
    assert out["spearman"] > 0.5
    json.dumps(out, allow_nan=False)


def test_graded_constant_scores() -> None:
    out = agreement_summary("point", "graded", scores=[0.5, 0.5, 0.5], labels=[0.0, 0.5, 1.0])
    assert out["spearman"] is None and out["kendall"] is None
    assert out["auc"] == 0.5  # all ties: one half
    assert out["ci95"]["spearman"] is None


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown judgement kind"):
        agreement_summary("triple")
    with pytest.raises(ValueError, match="unknown label kind"):
        agreement_summary("point", "ordinal", scores=[1.0], labels=[1.0])
    with pytest.raises(ValueError, match="label at position 1 must be in"):
        agreement_summary("point", "graded", scores=[1.0, 0.2], labels=[1.0, 2.0])
    with pytest.raises(ValueError, match="label at position 0 is missing"):
        agreement_summary("point", "graded", scores=[1.0], labels=[None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="not finite"):
        agreement_summary("pair", preferred=[float("nan")], other=[0.1])
    with pytest.raises(ValueError, match="differ in length"):
        agreement_summary("pair", preferred=[0.1], other=[0.1, 0.2])
