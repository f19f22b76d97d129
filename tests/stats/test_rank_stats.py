from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ragmeter.stats import (
    balanced_accuracy,
    kendall_tau_b,
    pair_accuracy,
    pair_credits,
    rankdata,
    roc_auc,
    spearman,
)


def _brute_kendall_tau_b(x: list[float], y: list[float]) -> float:
    c = d = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        sx = np.sign(x[i] - x[j])
        sy = np.sign(y[i] - y[j])
        if sx == 0:
            tx += 1
        if sy == 0:
            ty += 1
        if sx * sy > 0:
            c += 1
        elif sx * sy < 0:
            d += 1
    n0 = len(x) * (len(x) - 1) / 2
    return (c - d) / math.sqrt((n0 - tx) * (n0 - ty))


def _brute_auc(scores: list[float], labels: list[int]) -> float:
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    total = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return total / (len(pos) * len(neg))


def test_rankdata_average_ties() -> None:
    assert rankdata([10, 20, 20, 5, 20]).tolist() == [2.0, 4.0, 4.0, 1.0, 4.0]
    assert rankdata([]).tolist() == []


def test_roc_auc_hand_values() -> None:
    # positives 0.35, 0.8; negatives 0.1, 0.4: 3 of 4 pairs ordered right
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75
    # a tie counts one half
    assert roc_auc([0.5, 0.5], [0, 1]) == 0.5
    assert roc_auc([0.2, 0.5, 0.5, 0.9], [0, 1, 0, 1]) == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    assert roc_auc([1, 2, 3], [True, False, False]) == 0.0


def test_roc_auc_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    scores = np.round(rng.random(80), 1).tolist()
    labels = (rng.random(80) > 0.4).astype(int).tolist()
    assert roc_auc(scores, labels) == pytest.approx(_brute_auc(scores, labels))


def test_roc_auc_errors() -> None:
    with pytest.raises(ValueError, match="both classes; got 3 positive and 0 negative"):
        roc_auc([0.1, 0.2, 0.3], [1, 1, 1])
    with pytest.raises(ValueError, match="must be 0 or 1"):
        roc_auc([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError, match="differ in length"):
        roc_auc([0.1, 0.2], [0, 1, 1])
    with pytest.raises(ValueError, match="non-finite"):
        roc_auc([float("nan"), 0.2], [0, 1])


def test_balanced_accuracy_hand_value() -> None:
    # predictions at 0.5: [1, 1, 0, 0, 1]; TPR = 2/3, TNR = 1/2
    assert balanced_accuracy([0.9, 0.6, 0.4, 0.2, 0.7], [1, 1, 1, 0, 0], 0.5) == pytest.approx(7 / 12)
    # the threshold itself counts as positive
    assert balanced_accuracy([0.5, 0.4], [1, 0], 0.5) == 1.0
    with pytest.raises(ValueError, match="both classes"):
        balanced_accuracy([0.5, 0.4], [0, 0], 0.5)


def test_spearman_hand_value() -> None:
    # y ranks [1, 2, 3.5, 5, 3.5]: cov 8, var_x 10, var_y 9.5
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / math.sqrt(95))
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="constant"):
        spearman([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="at least 2"):
        spearman([1], [1])


def test_kendall_hand_value() -> None:
    # C = 8, D = 1, one tie in y: (8 - 1) / sqrt(10 * 9)
    assert kendall_tau_b([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(7 / math.sqrt(90))
    with pytest.raises(ValueError, match="constant"):
        kendall_tau_b([1, 2, 3], [4, 4, 4])


def test_kendall_matches_brute_force_with_ties() -> None:
    rng = np.random.default_rng(5)
    x = np.round(rng.random(120), 1).tolist()
    y = np.round(np.asarray(x) + rng.random(120) * 0.4, 1).tolist()
    assert kendall_tau_b(x, y) == pytest.approx(_brute_kendall_tau_b(x, y))


def test_pair_accuracy_ties_count_half() -> None:
    assert pair_credits([1, 0.5, 0.2], [0, 0.5, 0.9]).tolist() == [1.0, 0.5, 0.0]
    assert pair_accuracy([1, 0.5, 0.2], [0, 0.5, 0.9]) == 0.5
    with pytest.raises(ValueError, match="at least one pair"):
        pair_accuracy([], [])


def test_against_scipy_when_available() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(11)
    x = np.round(rng.random(200), 2)
    y = np.round(x * 0.5 + rng.random(200) * 0.5, 1)
    assert spearman(x, y) == pytest.approx(scipy_stats.spearmanr(x, y).statistic)
    assert kendall_tau_b(x, y) == pytest.approx(scipy_stats.kendalltau(x, y).statistic)
    labels = y >= 0.5
    u = scipy_stats.mannwhitneyu(x[labels], x[~labels]).statistic
    assert roc_auc(x, labels) == pytest.approx(u / (labels.sum() * (~labels).sum()))
    assert rankdata(x).tolist() == pytest.approx(scipy_stats.rankdata(x).tolist())
