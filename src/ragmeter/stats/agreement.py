"""Agreement of a metric with human judgements: the numbers ``ragmeter agreement`` reports.

:func:`agreement_summary` returns exactly these keys per kind:

- ``pair``: ``accuracy`` (share of pairs where the preferred variant scores higher, a tie counting
  one half), ``ci95`` ([lo, hi]), ``n``, ``n_invalid``.
- ``point`` with binary labels: at ``threshold`` (a score at or above it is the judge's "pass"),
  ``accuracy``, ``kappa`` (Cohen's, of the verdict against the label), ``tpr`` (share of the
  label-1 rows the judge passes), ``tnr`` (share of the label-0 rows it fails),
  ``balanced_accuracy`` (their mean); and ``auc`` (ROC AUC of the score, no threshold); ``ci95``
  holds an interval for each of these six.
- ``point`` with graded labels: ``spearman``, ``kendall`` (tau-b), ``auc`` (label >= 0.5 is
  positive), ``ci95`` ({"spearman": ..., "kendall": ..., "auc": ...}).
- every ``point`` summary also: ``n``, ``n_invalid``, ``base_rate`` (the mean label: the share of
  label-1 rows when binary), ``threshold``, ``confusion`` ({"tp", "fn", "fp", "tn"}: label >= 0.5
  against the judge's verdict) and ``disagreements``: the rows where the verdict and the label
  disagree, worst first (by ``gap``, the distance between the score, on the label's scale, and
  the label), each ``{"id", "position", "score", "label", "gap"}`` (``position`` in the input,
  ``id`` from ``ids``).

An invalid score (None) is left out of every statistic and counted in ``n_invalid`` (for pairs: a
pair where either variant's score is invalid); ``n`` counts what was used. A statistic that is
undefined on the data (no valid rows, one class only, a constant score) is ``None`` and so is its
interval; never NaN. Intervals are percentile bootstraps (TPR, TNR, balanced accuracy and AUC
resample within each class; accuracy and kappa resample rows).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ragmeter.stats.bootstrap import bootstrap_ci, kendall_tau_b_bootstrap_ci, paired_bootstrap_ci
from ragmeter.stats.rank import (
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    kendall_tau_b,
    pair_credits,
    roc_auc,
    spearman,
    true_negative_rate,
    true_positive_rate,
)

KINDS: tuple[str, ...] = ("pair", "point")
LABEL_KINDS: tuple[str, ...] = ("binary", "graded")
CONFIDENCE = 0.95


def _score(value: Any, what: str, i: int) -> float | None:
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} at position {i} is not a number: {value!r}") from None
    if not math.isfinite(f):
        raise ValueError(f"{what} at position {i} is not finite ({value!r}); an invalid score must be None")
    return f


def _label(value: Any, i: int) -> float:
    if value is None:
        raise ValueError(f"label at position {i} is missing")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"label at position {i} is not a number: {value!r}") from None
    if not math.isfinite(f) or not 0.0 <= f <= 1.0:
        raise ValueError(f"label at position {i} must be in [0, 1], got {value!r}")
    return f


def _maybe(fn: Callable[..., float], *args: Any) -> float | None:
    try:
        return float(fn(*args))
    except ValueError:
        return None


def _maybe_ci(fn: Callable[..., tuple[float, float]], *args: Any, **kwargs: Any) -> list[float] | None:
    try:
        lo, hi = fn(*args, **kwargs)
    except ValueError:
        return None
    return [float(lo), float(hi)]


def agreement_summary(
    kind: str,
    label_kind: str | None = None,
    *,
    preferred: Sequence[float | None] | None = None,
    other: Sequence[float | None] | None = None,
    scores: Sequence[float | None] | None = None,
    labels: Sequence[float] | None = None,
    threshold: float = 0.5,
    higher_is_better: bool = True,
    n_resamples: int = 2000,
    seed: int = 0,
    ids: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """Agreement statistics for one file and aspect (see the module docstring for the keys).

    ``kind="pair"``: give ``preferred`` and ``other``, the metric's scores of the variant people
    preferred and of the other one, pair by pair. ``kind="point"``: give ``label_kind``
    (``"binary"`` or ``"graded"``), ``scores`` and ``labels`` (0/1, or 0..1 when graded).
    ``threshold`` is the metric's passing value: a score at or above it is the judge's "pass"
    verdict (accuracy, kappa, TPR, TNR, balanced accuracy, the confusion table). With
    ``higher_is_better=False`` a lower score counts as better (pairs) and as positive (points).
    ``ids`` (points): one per row, named in ``disagreements``.
    """
    sign = 1.0 if higher_is_better else -1.0
    if kind == "pair":
        if preferred is None or other is None:
            raise ValueError("a pair summary needs `preferred` and `other` scores")
        if len(preferred) != len(other):
            raise ValueError(f"preferred and other differ in length ({len(preferred)} != {len(other)})")
        pairs: list[tuple[float, float]] = []
        for i, (p_raw, o_raw) in enumerate(zip(preferred, other, strict=True)):
            p = _score(p_raw, "preferred score", i)
            o = _score(o_raw, "other score", i)
            if p is not None and o is not None:
                pairs.append((p, o))
        n_invalid = len(preferred) - len(pairs)
        out: dict[str, Any] = {"accuracy": None, "ci95": None, "n": len(pairs), "n_invalid": n_invalid}
        if pairs:
            p_arr = sign * np.array([p for p, _ in pairs])
            o_arr = sign * np.array([o for _, o in pairs])
            credits = pair_credits(p_arr, o_arr)
            out["accuracy"] = float(credits.mean())
            out["ci95"] = _maybe_ci(
                bootstrap_ci, credits, n_resamples=n_resamples, confidence=CONFIDENCE, seed=seed
            )
        return out

    if kind != "point":
        raise ValueError(f"unknown judgement kind {kind!r}; one of {', '.join(KINDS)}")
    if label_kind not in LABEL_KINDS:
        raise ValueError(f"unknown label kind {label_kind!r}; one of {', '.join(LABEL_KINDS)}")
    if scores is None or labels is None:
        raise ValueError("a point summary needs `scores` and `labels`")
    if len(scores) != len(labels):
        raise ValueError(f"scores and labels differ in length ({len(scores)} != {len(labels)})")
    lab_all = [_label(v, i) for i, v in enumerate(labels)]
    if ids is not None and len(ids) != len(scores):
        raise ValueError(f"ids and scores differ in length ({len(ids)} != {len(scores)})")
    kept: list[tuple[float, float, int]] = []
    for i, (raw, lab) in enumerate(zip(scores, lab_all, strict=True)):
        value = _score(raw, "score", i)
        if value is not None:
            kept.append((value, lab, i))
    n_invalid = len(scores) - len(kept)
    raw_arr = np.array([s for s, _, _ in kept], dtype=np.float64)
    s_arr = sign * raw_arr
    y_arr = np.array([lab for _, lab, _ in kept], dtype=np.float64)
    boot = {"n_resamples": n_resamples, "confidence": CONFIDENCE, "seed": seed}
    if label_kind == "binary":
        bad = [i for i, v in enumerate(lab_all) if v not in (0.0, 1.0)]
        if bad:
            raise ValueError(f"binary label at position {bad[0]} must be 0 or 1, got {lab_all[bad[0]]!r}")
    y_pos = y_arr >= 0.5  # binary: the label is 1; graded: a label of one half or more
    verdict = s_arr >= sign * threshold  # the judge says "passes"
    tp = int((verdict & y_pos).sum())
    fp = int((verdict & ~y_pos).sum())
    fn = int((~verdict & y_pos).sum())
    tn = int((~verdict & ~y_pos).sum())
    # how far the score (on the label's scale) is from the label, where the verdict disagrees
    gaps = np.abs((raw_arr if higher_is_better else 1.0 - raw_arr) - y_arr)
    wrong = np.flatnonzero(verdict != y_pos)
    order = wrong[np.lexsort((wrong, -gaps[wrong]))] if wrong.size else wrong
    disagreements = [
        {
            "id": None if ids is None else ids[kept[j][2]],
            "position": kept[j][2],
            "score": kept[j][0],
            "label": kept[j][1],
            "gap": float(gaps[j]),
        }
        for j in order
    ]
    common: dict[str, Any] = {
        "n": len(kept),
        "n_invalid": n_invalid,
        "base_rate": float(y_arr.mean()) if kept else None,
        "threshold": float(threshold),
        "confusion": {"tp": tp, "fn": fn, "fp": fp, "tn": tn},
        "disagreements": disagreements,
    }

    if label_kind == "binary":
        y_bin = y_arr == 1.0

        def bal(s: np.ndarray, y: np.ndarray) -> float:
            return balanced_accuracy(s, y, sign * threshold)

        def acc(s: np.ndarray, y: np.ndarray) -> float:
            return accuracy(s >= sign * threshold, y)

        def kap(s: np.ndarray, y: np.ndarray) -> float:
            return cohen_kappa(s >= sign * threshold, y)

        def tpr(s: np.ndarray, y: np.ndarray) -> float:
            return true_positive_rate(s >= sign * threshold, y)

        def tnr(s: np.ndarray, y: np.ndarray) -> float:
            return true_negative_rate(s >= sign * threshold, y)

        stats: dict[str, Any] = {}
        cis: dict[str, Any] = {}
        # class rates and rank statistics resample within each class; accuracy and kappa resample rows
        for name, fn_, strata in (
            ("accuracy", acc, None), ("kappa", kap, None), ("tpr", tpr, y_bin), ("tnr", tnr, y_bin),
            ("balanced_accuracy", bal, y_bin), ("auc", roc_auc, y_bin),
        ):  # fmt: skip
            value = _maybe(fn_, s_arr, y_bin) if kept else None
            stats[name] = value
            cis[name] = (
                None
                if value is None
                else _maybe_ci(paired_bootstrap_ci, fn_, s_arr, y_bin, strata=strata, **boot)
            )
        return {**stats, "ci95": cis, **common}

    rho = _maybe(spearman, s_arr, y_arr) if kept else None
    tau = _maybe(kendall_tau_b, s_arr, y_arr) if kept else None
    auc = _maybe(roc_auc, s_arr, y_pos) if kept else None
    return {
        "spearman": rho,
        "kendall": tau,
        "auc": auc,
        "ci95": {
            "spearman": None
            if rho is None
            else _maybe_ci(paired_bootstrap_ci, spearman, s_arr, y_arr, **boot),
            "kendall": None if tau is None else _maybe_ci(kendall_tau_b_bootstrap_ci, s_arr, y_arr, **boot),
            "auc": None
            if auc is None
            else _maybe_ci(paired_bootstrap_ci, roc_auc, s_arr, y_pos, strata=y_pos, **boot),
        },
        **common,
    }
