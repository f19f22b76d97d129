"""Metric protocol, Score, and the registration of metrics and of other tools' names for them.

Finding a metric by name (``get_metric``, ``resolve_metrics``, ``list_metrics``) is in
:mod:`ragmeter.metrics.registry`, which loads the built-in metrics; this module imports no metric,
so every metric module can import it.

A metric is stateless: ``await metric.score(sample, judge)`` returns a :class:`Score` and writes
nothing to the metric object, so one instance serves any number of concurrent jobs.

A custom metric in about ten lines::

    from ragmeter import Metric, Score, register_metric

    @register_metric("answer_length")
    class AnswerLength(Metric):
        name = "answer_length"
        requires = ("answer",)

        async def score(self, sample, judge):
            n = len(sample.answer.split())
            return Score(value=min(n / 100, 1.0), reason=f"{n} words")

Batching (optional): a metric that can score many samples at once more cheaply than one by one
(arithmetic without awaits, one ``embed`` call for a whole batch) sets ``batch_size`` and
overrides ``score_batch``; the runner then hands it up to ``batch_size`` samples per call. A
metric that does neither is scored one sample at a time, as above.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ragmeter.errors import ConfigError

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge


@dataclass(frozen=True)
class ScoreError:
    """Why a score is invalid: ``kind`` is the exception class name (``JudgeOutputError``,
    ``RateLimitError``, ``TransportError``, ``UnsupportedStepError``, ``NoClaims``...),
    ``message`` says what happened, ``raw`` keeps the judge's raw reply when there was one."""

    kind: str
    message: str
    raw: str | None = None


@dataclass(frozen=True)
class Score:
    """The result of one metric on one sample.

    Valid: ``value`` is a finite float (most metrics are in [0, 1]), ``error`` is None.
    Invalid: ``value`` is None and ``error`` says why. Never NaN, never a silent 0.
    """

    value: float | None
    reason: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    error: ScoreError | None = None

    def __post_init__(self) -> None:
        if self.error is None:
            if self.value is None or not isinstance(self.value, (int, float)) or math.isnan(self.value):
                raise ValueError(
                    "a valid Score needs a finite value; use Score.invalid(...) for a failed score"
                )
            object.__setattr__(self, "value", float(self.value))
        elif self.value is not None:
            raise ValueError("an invalid Score has value None")

    @property
    def valid(self) -> bool:
        return self.error is None

    @classmethod
    def invalid(
        cls,
        kind: str,
        message: str,
        *,
        raw: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> Score:
        error = ScoreError(kind, message, raw)
        return cls(value=None, reason=message, details=dict(details or {}), error=error)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "reason": self.reason,
            "details": dict(self.details),
            "error": None
            if self.error is None
            else {"kind": self.error.kind, "message": self.error.message, "raw": self.error.raw},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Score:
        err = data.get("error")
        return cls(
            value=data.get("value"),
            reason=data.get("reason", ""),
            details=data.get("details") or {},
            error=None if not err else ScoreError(err["kind"], err["message"], err.get("raw")),
        )


def meets_bound(value: float, bound: float, higher_is_better: bool = True) -> bool:
    """Whether ``value`` is at least as good as ``bound`` (>= it, or <= it when lower is better):
    a metric's threshold, a gate's bound."""
    return value >= bound if higher_is_better else value <= bound


class Metric:
    """Base class of every metric. Subclasses set ``name``, ``requires`` and implement ``score``.

    ``requires``: sample fields that must be present and non-empty; the runner checks them before
    any judge call and skips (or, with strict, rejects) rows that lack them.
    ``steps``: judge steps the metric calls (``extract_claims``, ``verify_claims``,
    ``generate_questions``, ``embed``, ...); the runner checks ``judge.supports(step)`` for each
    before the run starts, so a metric the judge cannot compute is a ConfigError, not a number.
    ``higher_is_better`` and ``threshold`` (a passing value, or None) drive reports and gates.
    ``level``: the samples the metric scores: ``"sample"`` (plain samples and the turns of a
    conversation) or ``"conversation"`` (a conversation sample, with its ``messages``); the runner
    plans each metric on the samples of its level only.
    """

    name: ClassVar[str] = ""
    requires: ClassVar[tuple[str, ...]] = ()
    steps: ClassVar[tuple[str, ...]] = ()
    higher_is_better: ClassVar[bool] = True
    threshold: ClassVar[float | None] = None
    version: ClassVar[str] = "1"
    level: ClassVar[str] = "sample"
    #: samples the runner passes to one :meth:`score_batch` call; 0 (the default): the runner
    #: calls :meth:`score` once per sample and never calls :meth:`score_batch`
    batch_size: ClassVar[int] = 0

    async def score(self, sample: Sample, judge: Judge) -> Score:  # pragma: no cover - abstract
        raise NotImplementedError

    async def score_batch(self, samples: Sequence[Sample], judge: Judge) -> list[Score]:
        """One Score per sample, in order: the same values ``score`` gives each sample alone.

        The runner calls it (with at most ``batch_size`` samples) when ``batch_size > 0``. If it
        raises, or returns the wrong number of scores, the runner scores that batch's samples
        one by one with :meth:`score`, so an error still lands on the sample that caused it.
        This default scores each sample in turn."""
        return [await self.score(s, judge) for s in samples]

    def missing_steps(self, judge: Any) -> list[str]:
        """Steps this metric needs that ``judge`` cannot do (empty: the judge can compute it).

        A metric with more than one way to its score (e.g. answer relevance: generated questions
        with an LLM judge, a direct assessment with the local judge) overrides this."""
        return [s for s in self.steps if not judge.supports(s)]

    def params(self) -> dict[str, Any]:
        """Constructor arguments, for the run record. Override when ``__init__`` takes any."""
        return {}

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "params": self.params()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


M = TypeVar("M", bound=type[Metric])

_REGISTRY: dict[str, Callable[..., Metric]] = {}


@dataclass(frozen=True)
class MetricAlias:
    """Another tool's name for a registered metric (``answer_relevancy`` -> ``answer_relevance``).

    ``kwargs`` are the target's arguments that make it that tool's metric (``mode="irrelevant"``);
    ``difference`` says how the definitions differ, in one or two sentences (empty: none)."""

    name: str
    target: str
    source: str
    difference: str = ""
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def notice(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        target = f"{self.target}({args})" if args else self.target
        diff = f" Difference: {self.difference}" if self.difference else " Same definition."
        return f"metric {self.name!r} ({self.source}'s name) is ragmeter's {target}.{diff}"


_ALIASES: dict[str, MetricAlias] = {}


def register_alias(alias: MetricAlias) -> None:
    """Accept ``alias.name`` wherever a metric name is (CLI ``--metrics``, ``get_metric``)."""
    if alias.name in _REGISTRY or (alias.name in _ALIASES and _ALIASES[alias.name] != alias):
        raise ConfigError(f"metric name {alias.name!r} is already registered")
    _ALIASES[alias.name] = alias


def register_metric(name: str) -> Callable[[M], M]:
    """Class decorator: make a metric available by ``name`` (CLI ``--metrics``, ``get_metric``)."""

    def deco(cls: M) -> M:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ConfigError(f"metric name {name!r} is already registered")
        _REGISTRY[name] = cls
        return cls

    return deco
