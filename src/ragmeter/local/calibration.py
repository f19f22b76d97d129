"""Logistic combiners of the local judge: named features -> a probability.

The weights live in small JSON files next to this module (``weights/*.json``), each with the
record of how it was made (script, data files, split, seed, date, held-out metrics). The support
combiner is trained by ``scripts/train_local_combiner.py`` on ``data/dev`` only; the
relevance combiners are set by hand (see docs/local-judge.md).
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
