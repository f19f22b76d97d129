"""Logistic combiners of the local judge: named features -> a probability.

A combiner is ``p = sigmoid(bias + sum_i w_i * (x_i - mean_i) / scale_i)`` over *named* features
(:class:`Combiner`), with the record of how it was made (script, data, split, seed, date, sizes,
held-out metrics). The packaged ones live in small JSON files next to this module
(``weights/*.json``). The support combiners are fitted by :func:`fit_combiner` from rows of
(features, label): ``scripts/train_local_combiner.py`` makes those rows from ``data/dev`` (the
training split), its templates and perturbations, with the judge's own feature pipeline
(:meth:`ragmeter.local.judge.LocalJudge.claim_features`); refitting on other labelled claims is the
same call on other rows. The relevance combiners are set by hand (see docs/local-judge.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@dataclass(frozen=True)
class Combiner:
    """``p = sigmoid(bias + sum_i weight_i * ((x_i - mean_i) / scale_i))``."""

    name: str
    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...] = ()
    scale: tuple[float, ...] = ()
    record: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.features)
        if len(self.weights) != n:
            raise ConfigError(f"combiner {self.name!r}: {len(self.weights)} weights for {n} features")
        if not self.mean:
            object.__setattr__(self, "mean", (0.0,) * n)
        if not self.scale:
            object.__setattr__(self, "scale", (1.0,) * n)
        if len(self.mean) != n or len(self.scale) != n:
            raise ConfigError(f"combiner {self.name!r}: mean/scale do not match its {n} features")
        if any(s <= 0 for s in self.scale):
            raise ConfigError(f"combiner {self.name!r}: every scale must be positive")

    def logit(self, values: Mapping[str, float]) -> float:
        z = self.bias
        for f, w, m, s in zip(self.features, self.weights, self.mean, self.scale, strict=True):
            z += w * (float(values[f]) - m) / s
        return z

    def probability(self, values: Mapping[str, float]) -> float:
        return sigmoid(self.logit(values))

    def probabilities(self, matrix: np.ndarray) -> np.ndarray:
        """Rows of feature values (columns in ``features`` order) -> probabilities."""
        x = (np.asarray(matrix, dtype=np.float64) - np.array(self.mean)) / np.array(self.scale)
        z = self.bias + x @ np.array(self.weights)
        return 1.0 / (1.0 + np.exp(-z))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "features": list(self.features),
            "weights": list(self.weights),
            "bias": self.bias,
            "mean": list(self.mean),
            "scale": list(self.scale),
            "record": dict(self.record),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Combiner:
        try:
            return cls(
                name=str(data["name"]),
                features=tuple(str(f) for f in data["features"]),
                weights=tuple(float(w) for w in data["weights"]),
                bias=float(data["bias"]),
                mean=tuple(float(v) for v in data.get("mean", ())),
                scale=tuple(float(v) for v in data.get("scale", ())),
                record=dict(data.get("record", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"combiner weights are malformed: {exc}") from exc


@lru_cache(maxsize=8)
def load_combiner(name: str) -> Combiner:
    """The packaged combiner ``weights/<name>.json``."""
    try:
        text = (
            resources.files("ragmeter.local").joinpath("weights").joinpath(f"{name}.json").read_text("utf-8")
        )
    except FileNotFoundError as exc:
        raise ConfigError(
            f"the local judge's combiner weights {name!r} are missing from the package"
        ) from exc
    return Combiner.from_dict(json.loads(text))


def fit_combiner(
    rows: Sequence[Mapping[str, float]],
    labels: Sequence[float],
    features: Sequence[str],
    *,
    name: str,
    l2: float = 1.0,
    record: Mapping[str, Any] | None = None,
) -> Combiner:
    """A combiner fitted on ``rows`` (each a mapping with every name of ``features``) and their
    0/1 ``labels``: features standardised (mean 0, scale 1 on these rows), L2-regularised logistic
    regression (penalty ``l2`` on the weights, none on the bias), both classes weighted equally,
    Newton's method, NumPy only. ``record`` is kept in the combiner's record, with the number of
    rows and positives added."""
    if len(rows) != len(labels):
        raise ConfigError(f"fit_combiner: {len(rows)} rows for {len(labels)} labels")
    y = np.asarray([float(v) for v in labels], dtype=np.float64)
    if not len(y) or not set(np.unique(y)) <= {0.0, 1.0} or len(np.unique(y)) < 2:
        raise ConfigError("fit_combiner needs rows of both labels, 0 and 1")
    missing = [(k, f) for k, row in enumerate(rows) for f in features if f not in row]
    if missing:
        k, f = missing[0]
        raise ConfigError(f"fit_combiner: row {k} has no feature {f!r} ({len(missing)} values missing)")
    x = np.asarray([[float(row[f]) for f in features] for row in rows], dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    a = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    cw = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    reg = np.full(a.shape[1], float(l2))
    reg[-1] = 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-(a @ w)))
        g = a.T @ (cw * (p - y)) + reg * w
        h = (a * (cw * p * (1 - p))[:, None]).T @ a + np.diag(reg) + 1e-9 * np.eye(a.shape[1])
        step = np.linalg.solve(h, g)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    rec = {**dict(record or {}), "l2": float(l2), "rows": len(y), "positives": int(y.sum())}
    return Combiner(
        name=name,
        features=tuple(features),
        weights=tuple(round(float(v), 6) for v in w[:-1]),
        bias=round(float(w[-1]), 6),
        mean=tuple(round(float(v), 6) for v in mean),
        scale=tuple(round(float(v), 6) for v in scale),
        record=rec,
    )


def fixed(name: str, weights: Mapping[str, float], bias: float, note: str) -> Combiner:
    """A hand-set combiner (its record says so)."""
    feats: Sequence[str] = tuple(weights)
    return Combiner(
        name=name,
        features=tuple(feats),
        weights=tuple(float(weights[f]) for f in feats),
        bias=float(bias),
        record={"kind": "hand-set", "note": note},
    )
