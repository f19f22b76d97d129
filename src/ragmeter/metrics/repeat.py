"""Repeated judging: score a sample N times with a sampling judge and report mean and spread."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.judges.memo import repetition
from ragmeter.metrics.base import Metric, Score

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge

DEFAULT_TEMPERATURE = 0.7


class Repeated(Metric):
    """Wrap ``metric`` so each sample is scored ``n`` times (``--samples N``).

    Each repeat runs under :func:`ragmeter.judges.memo.repetition`: an LLM judge sends it as a
    separate request (the repeat index is part of the memo and cache keys) sampled at
    ``temperature`` when its own config has temperature 0. The score's value is the mean of the
    valid repeats; ``details`` has ``samples`` (each repeat's value, None when invalid), ``mean``,
    ``std`` (population standard deviation), ``n_valid`` and the first valid repeat's details.
    All repeats invalid -> the first repeat's invalid score, with the values listed.

    The wrapper keeps the metric's name, requirements, steps and threshold, so runs, reports and
    gates read it as the metric itself; ``params`` adds ``samples`` and ``temperature``.
    """

    def __init__(self, metric: Metric, n: int, temperature: float = DEFAULT_TEMPERATURE) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"samples must be a positive integer, not {n!r}")
        if not 0 < float(temperature) <= 2:
            raise ConfigError(f"repeated judging needs a temperature in (0, 2], not {temperature!r}")
        self.inner = metric
        self.n = n
        self.temperature = float(temperature)
        # instance attributes shadow the class ones so the runner sees the inner metric
        for attr in ("name", "requires", "steps", "higher_is_better", "threshold", "version"):
            setattr(self, attr, getattr(metric, attr))

    def params(self) -> dict[str, Any]:
        return {**self.inner.params(), "samples": self.n, "temperature": self.temperature}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        scores: list[Score] = []
        for i in range(self.n):
            with repetition(i, self.temperature):
                scores.append(await self.inner.score(sample, judge))
        values = [s.value for s in scores if s.valid and s.value is not None]
        listed = [s.value if s.valid else None for s in scores]
        if not values:
            first = scores[0]
            return Score.invalid(
                first.error.kind if first.error else "Invalid",
                f"all {self.n} repeats invalid: {first.reason}",
                raw=first.error.raw if first.error else None,
                details={"samples": listed, "n_valid": 0},
            )
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        first_valid = next(s for s in scores if s.valid)
        return Score(
            value=mean,
            reason=f"mean of {len(values)} of {self.n} repeats {mean:.3f} (std {std:.3f}); first: {first_valid.reason}",
            details={
                "samples": listed,
                "mean": mean,
                "std": std,
                "n_valid": len(values),
                "n_samples": self.n,
                "first": dict(first_valid.details),
            },
        )
