"""How many labels an interval of a given width needs (the labelling page's "N more for ±0.10").

People's labels lie in [0, 1]. For ``n`` labels drawn uniformly at random, the normal-approximation
interval of their mean is ``mean ± z * sqrt(var / n)``, so a half-width ``h`` needs

    n_needed = ceil(z² * var / h²)

labels. The variance is not known before the labels are given, and the sample variance of a few
labels is no guide (three labels that agree have variance 0). So the variance used is the bound
``p * (1 - p)``, where ``p`` is the labels' mean pulled towards 1/2 as Wilson's interval does,
``p = (sum + z²/2) / (n + z²)``: for binary labels ``p * (1 - p)`` is their variance, for graded
labels (values between 0 and 1) it is an upper bound on it. With no label yet ``p = 1/2``: the
worst case, 97 labels for ±0.10 at 95%.

This is the labels-only interval (:func:`labels_needed`). The label-corrected (PPI++) estimate of
a run's human mean (:mod:`ragmeter.stats.ppi`), the one reports show beside the judge's mean,
tunes its weight on the judge so that it is never meaningfully wider than the labels-only
interval, and is narrower the better the judge agrees with the labels: the labels-only count is
an upper bound for it.

:func:`ppi_labels_needed` projects the PPI++ interval itself. Its standard error with ``n`` of the
``T`` samples labelled is ``se² = A / n + B / (T - n)``, ``A = var(Y - λ f)`` over the labels and
``B = var(λ f)`` over the unlabelled samples; with the labels so far giving λ, A and B, the count
is the smallest ``m >= n`` with ``z * sqrt(A / m + B / (T - m)) <= h`` (with every sample
labelled, the labels alone: ``var(Y) / T``). At ``m = n`` this is the interval the report shows.
It is as good as those estimates: with few labels, or few of one kind, they can be far off, so
use it only where the calibrated estimate itself stands (the labelling page switches to it from
10 labels on each side of 0.5, and shows the labels-only bound before).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

METHOD = "labels-only normal approximation, variance bound p(1-p), p = (sum + z^2/2) / (n + z^2)"
PPI_METHOD = (
    "ppi++ projection: smallest m with z * sqrt(A/m + B/(T-m)) <= h, A, B and lambda from the labels so far"
)


@dataclass(frozen=True)
class LabelsNeeded:
    """``n`` labels given; ``n_needed`` in all for a ``confidence`` interval of ``± half_width``;
    ``more``: how many to add (0 when there are enough); ``p``: the mean used for the variance
    bound (the labels' mean for a PPI++ projection). ``n_population``: the samples there are to
    label (None: no limit); ``reachable`` is False when ``n_needed`` exceeds it, and ``more`` is
    then what is left to label. ``method``: how the count was made (:data:`METHOD`,
    :data:`PPI_METHOD`)."""

    n: int
    n_needed: int
    more: int
    half_width: float
    confidence: float
    p: float
    n_population: int | None = None
    reachable: bool = True
    method: str = METHOD

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "n_needed": self.n_needed,
            "more": self.more,
            "half_width": self.half_width,
            "confidence": self.confidence,
            "p": self.p,
            "n_population": self.n_population,
            "reachable": self.reachable,
            "method": self.method,
        }


def labels_needed(
    labels: Sequence[float],
    half_width: float = 0.10,
    confidence: float = 0.95,
    n_population: int | None = None,
) -> LabelsNeeded:
    """How many labels a ``confidence`` interval of ``± half_width`` needs, given the ``labels``
    so far (values in [0, 1], drawn uniformly at random); see the module docstring."""
    _check(half_width, confidence)
    values = [float(v) for v in labels]
    if any(not (0.0 <= v <= 1.0) for v in values):
        raise ValueError("labels must lie in [0, 1]")
    z = NormalDist().inv_cdf(1.0 - (1.0 - float(confidence)) / 2.0)
    n = len(values)
    p = (sum(values) + z * z / 2.0) / (n + z * z)
    # round before ceil: z²p(1-p)/h² that is a whole number in exact arithmetic stays one
    n_needed = math.ceil(round(z * z * p * (1.0 - p) / (float(half_width) ** 2), 9))
    reachable = n_population is None or n_needed <= n_population
    cap = n_needed if n_population is None else min(n_needed, int(n_population))
    return LabelsNeeded(
        n=n,
        n_needed=n_needed,
        more=max(0, cap - n),
        half_width=float(half_width),
        confidence=float(confidence),
        p=p,
        n_population=None if n_population is None else int(n_population),
        reachable=reachable,
    )


def ppi_labels_needed(
    labels: Sequence[float],
    pred_labelled: Sequence[float],
    pred_unlabelled: Sequence[float],
    half_width: float = 0.10,
    confidence: float = 0.95,
) -> LabelsNeeded:
    """How many labels the PPI++ interval of ``± half_width`` needs, projected from the ``labels``
    so far, the judge's predictions of the same samples (``pred_labelled``) and of the others
    (``pred_unlabelled``); see the module docstring. At least two labels and one unlabelled
    sample (ValueError otherwise)."""
    import numpy as np

    from ragmeter.stats.ppi import ppi_mean

    _check(half_width, confidence)
    z = NormalDist().inv_cdf(1.0 - (1.0 - float(confidence)) / 2.0)
    est = ppi_mean(labels, pred_labelled, pred_unlabelled, confidence=confidence)
    y = np.asarray(labels, dtype=float)
    fl = np.asarray(pred_labelled, dtype=float)
    fu = np.asarray(pred_unlabelled, dtype=float)
    n, total = y.size, y.size + fu.size
    a = float(np.var(y - est.lam * fl))
    b = float(np.var(est.lam * fu))
    m = np.arange(n, total, dtype=float)
    se = np.sqrt(a / m + b / (total - m))
    ok = np.flatnonzero(z * se <= float(half_width) + 1e-12)
    if ok.size:
        n_needed, reachable = int(m[ok[0]]), True
    else:  # every sample labelled: the labels alone
        reachable = z * math.sqrt(float(np.var(y)) / total) <= float(half_width)
        n_needed = total if reachable else total + 1
    return LabelsNeeded(
        n=n,
        n_needed=n_needed,
        more=max(0, min(n_needed, total) - n),
        half_width=float(half_width),
        confidence=float(confidence),
        p=float(y.mean()),
        n_population=total,
        reachable=reachable,
        method=PPI_METHOD,
    )


def _check(half_width: float, confidence: float) -> None:
    if not 0.0 < float(half_width) <= 0.5:
        raise ValueError(f"half_width must be in (0, 0.5], got {half_width!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence!r}")


__all__ = ["METHOD", "PPI_METHOD", "LabelsNeeded", "labels_needed", "ppi_labels_needed"]
