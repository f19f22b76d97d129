"""Rank statistics for agreement with human labels (NumPy only).

Every function raises ``ValueError`` with a message saying why when the statistic is undefined
(one class absent, a constant variable, fewer than two values); none returns NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

ArrayLike = Sequence[float] | np.ndarray


def as_finite_1d(values: Any, name: str = "values") -> np.ndarray:
    """``values`` as a 1-D float64 array; ValueError on NaN, infinity or a non-numeric entry."""
    if not isinstance(values, np.ndarray):
        values = list(values)
        for i, v in enumerate(values):
            if v is None:
                raise ValueError(
                    f"{name} holds None at position {i}; None is not allowed here (leave it out)"
                )
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numbers: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"{name} holds a non-finite value at position {int(bad[0])}: {float(arr[bad[0]])}")
    return arr


def _pair(x: Any, y: Any, xname: str, yname: str, min_n: int = 1) -> tuple[np.ndarray, np.ndarray]:
    xa = as_finite_1d(x, xname)
    ya = as_finite_1d(y, yname)
    if xa.size != ya.size:
        raise ValueError(f"{xname} and {yname} differ in length ({xa.size} != {ya.size})")
    if xa.size < min_n:
        raise ValueError(f"need at least {min_n} value(s), got {xa.size}")
    return xa, ya


def binary_labels(labels: Any, name: str = "labels") -> np.ndarray:
    """``labels`` as a bool array; ValueError unless every label is 0/1 (or False/True)."""
    arr = as_finite_1d(labels, name)
    bad = np.flatnonzero((arr != 0.0) & (arr != 1.0))
    if bad.size:
        raise ValueError(f"{name} must be 0 or 1; position {int(bad[0])} holds {arr[bad[0]]!r}")
    return arr == 1.0


def rankdata(values: ArrayLike) -> np.ndarray:
    """Ranks 1..n, tied values sharing their average rank (like ``scipy.stats.rankdata``)."""
    a = as_finite_1d(values, "values")
    n = a.size
    if n == 0:
        return np.zeros(0)
    order = np.argsort(a, kind="mergesort")
    sa = a[order]
    starts = np.flatnonzero(np.r_[True, sa[1:] != sa[:-1]])
    bounds = np.r_[starts, n]
    avg = (bounds[:-1] + bounds[1:] - 1) / 2.0 + 1.0
    group = np.cumsum(np.r_[True, sa[1:] != sa[:-1]]) - 1
    ranks = np.empty(n)
    ranks[order] = avg[group]
    return ranks


def tie_group_ids(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Group id per value (equal values share one) and the number of groups."""
    _, inverse = np.unique(values, return_inverse=True)
    inverse = inverse.reshape(-1)
    return inverse, int(inverse.max()) + 1 if inverse.size else 0


def roc_auc(scores: ArrayLike, labels: Any) -> float:
    """Area under the ROC curve: the probability that a random positive scores above a random
    negative, ties counting one half (the Mann-Whitney U statistic / (n_pos * n_neg))."""
    s = as_finite_1d(scores, "scores")
    y = binary_labels(labels)
    if s.size != y.size:
        raise ValueError(f"scores and labels differ in length ({s.size} != {y.size})")
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"ROC AUC needs both classes; got {n_pos} positive and {n_neg} negative label(s)")
    r = rankdata(s)
    u = r[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def balanced_accuracy(scores: ArrayLike, labels: Any, threshold: float) -> float:
    """Mean of the true-positive and true-negative rates when ``score >= threshold`` predicts 1."""
    s = as_finite_1d(scores, "scores")
    y = binary_labels(labels)
    if s.size != y.size:
        raise ValueError(f"scores and labels differ in length ({s.size} != {y.size})")
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            f"balanced accuracy needs both classes; got {n_pos} positive and {n_neg} negative label(s)"
        )
    pred = s >= float(threshold)
    tpr = float(pred[y].mean())
    tnr = float((~pred[~y]).mean())
    return (tpr + tnr) / 2.0


def _verdicts(predicted: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    p = binary_labels(np.asarray(predicted, dtype=np.float64), "predicted")
    y = binary_labels(labels)
    if p.size != y.size:
        raise ValueError(f"predicted and labels differ in length ({p.size} != {y.size})")
    if p.size == 0:
        raise ValueError("need at least one row, got none")
    return p, y


def accuracy(predicted: Any, labels: Any) -> float:
    """Share of rows where the 0/1 prediction equals the 0/1 label."""
    p, y = _verdicts(predicted, labels)
    return float((p == y).mean())


def cohen_kappa(predicted: Any, labels: Any) -> float:
    """Cohen's kappa of a 0/1 prediction against 0/1 labels: ``(p_o - p_e) / (1 - p_e)``, the
    agreement beyond what two raters with these base rates reach by chance."""
    p, y = _verdicts(predicted, labels)
    po = float((p == y).mean())
    pp, py = float(p.mean()), float(y.mean())
    pe = pp * py + (1.0 - pp) * (1.0 - py)
    if pe >= 1.0:
        raise ValueError(
            "Cohen's kappa is undefined: prediction and labels are one and the same class throughout"
        )
    return (po - pe) / (1.0 - pe)


def true_positive_rate(predicted: Any, labels: Any) -> float:
    """Share of the label-1 rows predicted 1 (sensitivity, recall)."""
    p, y = _verdicts(predicted, labels)
    if not y.any():
        raise ValueError("the true-positive rate needs a row labelled 1")
    return float(p[y].mean())


def true_negative_rate(predicted: Any, labels: Any) -> float:
    """Share of the label-0 rows predicted 0 (specificity)."""
    p, y = _verdicts(predicted, labels)
    if y.all():
        raise ValueError("the true-negative rate needs a row labelled 0")
    return float((~p[~y]).mean())


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    da = a - a.mean()
    db = b - b.mean()
    denom = math.sqrt(float(da @ da) * float(db @ db))
    if denom == 0.0:
        raise ValueError("correlation is undefined: one of the variables is constant")
    return float(np.clip(float(da @ db) / denom, -1.0, 1.0))


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman rank correlation (Pearson correlation of average ranks)."""
    xa, ya = _pair(x, y, "x", "y", min_n=2)
    return _pearson(rankdata(xa), rankdata(ya))


def kendall_sign_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``M[i, j] = sign(x_i - x_j) * sign(y_i - y_j)`` (n x n, float64): +1 concordant, -1 discordant,
    0 tied in x or y."""
    return np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's tau-b (tie-corrected): ``(C - D) / sqrt((n0 - n1) (n0 - n2))``.

    O(n^2) time, vectorised in row blocks (fine for n up to a few thousand).
    """
    xa, ya = _pair(x, y, "x", "y", min_n=2)
    n = xa.size
    block = max(1, 1_000_000 // n)
    s = 0.0
    for start in range(0, n, block):
        stop = min(n, start + block)
        dx = np.sign(xa[start:stop, None] - xa[None, :])
        dy = np.sign(ya[start:stop, None] - ya[None, :])
        s += float((dx * dy).sum())
    s /= 2.0  # every unordered pair was counted twice
    n0 = n * (n - 1) / 2.0
    n1 = sum(c * (c - 1) / 2.0 for c in np.unique(xa, return_counts=True)[1])
    n2 = sum(c * (c - 1) / 2.0 for c in np.unique(ya, return_counts=True)[1])
    denom = math.sqrt((n0 - n1) * (n0 - n2))
    if denom == 0.0:
        raise ValueError("Kendall's tau is undefined: one of the variables is constant")
    return float(np.clip(s / denom, -1.0, 1.0))


def pair_credits(score_preferred: ArrayLike, score_other: ArrayLike) -> np.ndarray:
    """Per pair: 1 when the preferred variant scores higher, 0.5 on a tie, 0 otherwise."""
    p, o = _pair(score_preferred, score_other, "score_preferred", "score_other", min_n=0)
    return np.where(p > o, 1.0, np.where(p == o, 0.5, 0.0))


def pair_accuracy(score_preferred: ArrayLike, score_other: ArrayLike) -> float:
    """Share of pairs where the preferred variant scores higher (a tie counts one half)."""
    credits = pair_credits(score_preferred, score_other)
    if credits.size == 0:
        raise ValueError("pair accuracy needs at least one pair, got none")
    return float(credits.mean())
