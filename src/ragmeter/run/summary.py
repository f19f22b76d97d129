"""A metric's aggregate over a run: :class:`MetricSummary`, and how it is computed.

The summary is computed from :class:`MetricStats`: the metric's valid values in sample order (what
the mean, the bootstrap interval and the pass rate are over: 8 bytes a score), its invalid kinds,
its usage, the spread of repeated judgements and how many samples of its level the run has. A run
record gives these from queries on the store (:class:`~ragmeter.run.record.StoredRecord`) and a run
held in memory from its rows (:class:`~ragmeter.run.record.MemoryRecord`); the same function makes
the summary from either, so a record read back gives the figures of the run that wrote it.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.judges.types import Usage
from ragmeter.metrics.base import meets_bound


@dataclass(frozen=True)
class MetricSummary:
    """Aggregate of one metric over a run.

    ``mean`` and ``ci95`` are over the valid scores only, and are None when there is none;
    ``n_invalid`` scores failed with a recorded cause; ``n_skipped`` samples lacked a field the
    metric needs (or were not reached by an interrupted run). Only the samples of the metric's
    level count: a conversation metric's over the conversations, the others' over the rest.
    """

    name: str
    mean: float | None
    ci95: tuple[float, float] | None
    n_scored: int
    n_invalid: int
    n_skipped: int
    usage: Usage = field(default_factory=Usage)
    threshold: float | None = None
    #: the share of scores that pass the threshold: at or above it, or at or below it for a metric
    #: where lower is better (``higher_is_better`` False: redundant_calls)
    pass_rate: float | None = None
    higher_is_better: bool = True
    invalid_kinds: Mapping[str, int] = field(default_factory=dict)
    #: with repeated judging (--samples N): the mean over samples of each sample's standard
    #: deviation across its N judgements -- how noisy the judge is on these data; else None
    judge_spread: float | None = None
    #: when the run has random-drawn labels of this metric: the estimate of the *human* mean
    #: (:func:`~ragmeter.run.calibrated.calibrated_estimate`: mean, ci95, n_labels, method "ppi++",
    #: lambda, labels_only_mean, labels_only_ci95...); else None. ``mean`` and ``ci95`` above are
    #: the judge's: the interval says how far the judge's mean may move with other samples of this
    #: kind, not how far it is from what people would say
    calibrated: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = self._base_dict()
        if self.calibrated is not None:
            out["calibrated"] = dict(self.calibrated)
        return out

    def _base_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "ci95": None if self.ci95 is None else [self.ci95[0], self.ci95[1]],
            "n_scored": self.n_scored,
            "n_invalid": self.n_invalid,
            "n_skipped": self.n_skipped,
            "threshold": self.threshold,
            "pass_rate": self.pass_rate,
            "higher_is_better": self.higher_is_better,
            "invalid_kinds": dict(self.invalid_kinds),
            "judge_spread": self.judge_spread,
            "usage": self.usage.to_dict(),
        }


@dataclass
class MetricStats:
    """What a metric's summary is computed from (see the module docstring)."""

    values: array[float] = field(default_factory=lambda: array("d"))  # valid values, in sample order
    invalid_kinds: dict[str, int] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    spreads: list[float] = field(default_factory=list)
    n_level: int = 0  # the run's samples of the metric's level

    @property
    def n_invalid(self) -> int:
        return sum(self.invalid_kinds.values())


def summarize_all(
    stats: Mapping[str, MetricStats],
    specs: Mapping[str, Mapping[str, Any]],
    *,
    bootstrap_resamples: int = 2000,
) -> dict[str, MetricSummary]:
    """The summary of each metric in ``stats`` (``specs``: each one's entry in the run record's
    ``metrics``). The bootstrap intervals of metrics with as many valid scores share their index
    draws (:func:`~ragmeter.stats.bootstrap.mean_cis`): the same intervals, drawn once."""
    scored = [name for name, st in stats.items() if st.values]
    cis: dict[str, tuple[float, float]] = {}
    if scored:
        from ragmeter.stats import mean_cis  # NumPy: loaded when a summary is asked for

        found = mean_cis([stats[n].values for n in scored], n_resamples=bootstrap_resamples, seed=0)
        cis = dict(zip(scored, found, strict=True))
    return {name: _summary(name, st, specs.get(name, {}), cis.get(name)) for name, st in stats.items()}


def summarize(
    name: str, stats: MetricStats, spec: Mapping[str, Any], *, bootstrap_resamples: int = 2000
) -> MetricSummary:
    """The summary of metric ``name`` (``spec``: its entry in the run record's ``metrics``)."""
    return summarize_all({name: stats}, {name: spec}, bootstrap_resamples=bootstrap_resamples)[name]


def _summary(
    name: str, stats: MetricStats, spec: Mapping[str, Any], ci: tuple[float, float] | None
) -> MetricSummary:
    values = stats.values
    threshold = spec.get("threshold")
    higher = bool(spec.get("higher_is_better", True))
    mean = pass_rate = None
    if values:
        mean = sum(values) / len(values)
        if threshold is not None:
            pass_rate = sum(1 for v in values if meets_bound(v, threshold, higher)) / len(values)
    n_invalid = stats.n_invalid
    return MetricSummary(
        name=name,
        mean=mean,
        ci95=ci,
        n_scored=len(values),
        n_invalid=n_invalid,
        n_skipped=stats.n_level - len(values) - n_invalid,
        usage=stats.usage,
        threshold=threshold,
        pass_rate=pass_rate,
        higher_is_better=higher,
        invalid_kinds=dict(stats.invalid_kinds),
        judge_spread=sum(stats.spreads) / len(stats.spreads) if stats.spreads else None,
    )


__all__ = ["MetricStats", "MetricSummary", "summarize", "summarize_all"]
