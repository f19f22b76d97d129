"""Prediction-powered inference of a mean (PPI++), NumPy only.

The judge's scores ``f`` on all ``N + n`` samples of a run and people's labels ``Y`` on ``n`` of
them, drawn uniformly at random, give an estimate of the *human* mean, the mean label over the
samples, with a confidence interval that holds whatever the judge's bias (Angelopoulos, Bates,
Fannjiang, Jordan, Zrnic, "Prediction-powered inference", Science 382, 2023; power tuning:
Angelopoulos, Duchi, Zrnic, "PPI++: Efficient prediction-powered inference", arXiv:2311.01453,
2023)::

    theta = lambda * mean(f over the N unlabelled) + mean(Y - lambda * f over the n labelled)
    se^2  = var(lambda * f, unlabelled) / N + var(Y - lambda * f, labelled) / n
    CI    = theta +- z * se

``lambda = 0`` is the labels alone (the classical interval); ``lambda = 1`` is PPI. PPI++ picks
the ``lambda`` that minimises the estimated variance,
``cov(Y, f) / ((1 + n / N) var(f))`` over the labelled (covariance) and all (variance) samples,
clipped to [0, 1]: the interval is about as narrow as the labels alone when the judge says
nothing about the labels and narrower the better it tracks them. It is an asymptotic
(normal-approximation) interval, like the reference's.

:func:`ppi_mean` is the reference implementation's ``ppi_py.ppi_mean_ci`` (ppi-python, by the
authors) for one dimension, without sample weights, written out: the same point estimate,
``lambda`` and interval on the same inputs (a test holds them equal).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from ragmeter.stats.rank import as_finite_1d


@dataclass(frozen=True)
class MeanEstimate:
    """A PPI++ estimate of a mean: ``mean``, ``ci`` (at ``confidence``), its standard error ``se``,
    the power-tuning ``lam`` used, ``n_labels`` and ``n_unlabelled``; ``labels_only_mean`` and
    ``labels_only_ci`` are the classical estimate from the labels alone (``lam = 0``)."""

    mean: float
    ci: tuple[float, float]
    se: float
    lam: float
    n_labels: int
    n_unlabelled: int
    confidence: float
    labels_only_mean: float
    labels_only_ci: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "ci": [self.ci[0], self.ci[1]],
            "se": self.se,
            "lambda": self.lam,
            "n_labels": self.n_labels,
            "n_unlabelled": self.n_unlabelled,
            "confidence": self.confidence,
            "labels_only_mean": self.labels_only_mean,
            "labels_only_ci": [self.labels_only_ci[0], self.labels_only_ci[1]],
        }


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for ``confidence`` (1.959964 for 0.95)."""
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")
    return NormalDist().inv_cdf(1.0 - (1.0 - float(confidence)) / 2.0)


def power_tuning(labels: np.ndarray, pred_labelled: np.ndarray, pred_unlabelled: np.ndarray) -> float:
    """PPI++'s ``lambda`` for a mean: ``cov(Y, f) / ((1 + n / N) var(f))``, clipped to [0, 1]
    (the covariance over the labelled samples, divided by n; the variance over all samples,
    divided by n + N - 1); 0 when the judge's scores do not vary."""
    n, big_n = labels.size, pred_unlabelled.size
    cov = float(((labels - labels.mean()) * (pred_labelled - pred_labelled.mean())).sum()) / n
    var = float(np.var(np.concatenate([pred_labelled, pred_unlabelled]), ddof=1))
    if not var > 0.0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(
    labels: Sequence[float] | np.ndarray,
    pred_labelled: Sequence[float] | np.ndarray,
    pred_unlabelled: Sequence[float] | np.ndarray,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
) -> MeanEstimate:
    """The PPI++ estimate of the mean of ``labels``' population (see the module docstring).

    ``labels`` and ``pred_labelled``: the people's labels and the judge's scores of the same ``n``
    samples, a uniformly random draw from the population; ``pred_unlabelled``: the judge's scores
    of the other ``N`` samples. ``lam``: a fixed power-tuning value (None: PPI++'s). Needs at
    least two labels and one unlabelled sample (ValueError otherwise); every value finite.
    """
    y = as_finite_1d(labels, "labels")
    fl = as_finite_1d(pred_labelled, "pred_labelled")
    fu = as_finite_1d(pred_unlabelled, "pred_unlabelled")
    if y.size != fl.size:
        raise ValueError(f"labels and pred_labelled differ in length ({y.size} != {fl.size})")
    if y.size < 2:
        raise ValueError(f"a prediction-powered interval needs at least 2 labels, got {y.size}")
    if fu.size < 1:
        raise ValueError("a prediction-powered estimate needs at least one unlabelled sample")
    z = z_value(confidence)
    n, big_n = y.size, fu.size
    if lam is None:
        lam = power_tuning(y, fl, fu)
    elif not math.isfinite(float(lam)):
        raise ValueError(f"lam must be a finite number, got {lam!r}")
    lam = float(lam)
    mean = float((lam * fu).mean() + (y - lam * fl).mean())
    se = math.sqrt(float((lam * fu).std()) ** 2 / big_n + float((y - lam * fl).std()) ** 2 / n)
    only_mean = float(y.mean())
    only_se = float(y.std()) / math.sqrt(n)
    return MeanEstimate(
        mean=mean,
        ci=(mean - z * se, mean + z * se),
        se=se,
        lam=lam,
        n_labels=n,
        n_unlabelled=big_n,
        confidence=float(confidence),
        labels_only_mean=only_mean,
        labels_only_ci=(only_mean - z * only_se, only_mean + z * only_se),
    )


__all__ = ["MeanEstimate", "power_tuning", "ppi_mean", "z_value"]
