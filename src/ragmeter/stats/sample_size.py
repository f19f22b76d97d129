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

This is the labels-only interval. The label-corrected (PPI++) estimate of a run's human mean, the
one reports show beside the judge's mean, tunes its weight on the judge so that it is never
meaningfully wider than the labels-only interval, and is narrower the better the judge agrees
with the labels: the count here is what the labels need on their own, an upper bound for the
calibrated interval, not a promise of its width.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

METHOD = "labels-only normal approximation, variance bound p(1-p), p = (sum + z^2/2) / (n + z^2)"


@dataclass(frozen=True)
class LabelsNeeded:
    """``n`` labels given; ``n_needed`` in all for a ``confidence`` interval of ``± half_width``;
    ``more``: how many to add (0 when there are enough); ``p``: the mean used for the variance
    bound. ``n_population``: the samples there are to label (None: no limit); ``reachable`` is
    False when ``n_needed`` exceeds it, and ``more`` is then what is left to label."""

    n: int
    n_needed: int
    more: int
    half_width: float
    confidence: float
    p: float
    n_population: int | None = None
    reachable: bool = True

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
            "method": METHOD,
        }


def labels_needed(
    labels: Sequence[float],
    half_width: float = 0.10,
    confidence: float = 0.95,
    n_population: int | None = None,
) -> LabelsNeeded:
    """How many labels a ``confidence`` interval of ``± half_width`` needs, given the ``labels``
    so far (values in [0, 1], drawn uniformly at random); see the module docstring."""
    if not 0.0 < float(half_width) <= 0.5:
        raise ValueError(f"half_width must be in (0, 0.5], got {half_width!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence!r}")
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


__all__ = ["METHOD", "LabelsNeeded", "labels_needed"]
