"""Judge-free retrieval metrics: hit rate, MRR, precision@k, recall@k, average precision (MAP when
aggregated), nDCG@k with graded relevance, R-precision.

Each scores one sample's ranking (``context_ids``, or ``contexts`` matched by text) against its
judgements (``reference_context_ids`` with optional grades, or ``reference_contexts``); see
:mod:`ragmeter.retrieval.relevance` for how relevance is decided and
:mod:`ragmeter.retrieval.measures` for the formulas (trec_eval's conventions). The run's summary
gives the mean over samples with a bootstrap CI, so ``average_precision`` aggregates to MAP.

Parameters (all keyword): ``k`` (cutoff; None = the whole list), ``match`` (``auto``/``ids``/``text``),
``overlap_threshold`` (text-overlap containment for ``match="text"``, default 0.5), ``relevance_level``
(lowest grade that counts as relevant, default 1), ``gain`` (nDCG: ``linear`` or ``exponential``)
and ``name`` (the metric's name in the run; default: the registered name when ``k`` is the
default, else a short ``@k`` name such as ``ndcg@5``, so several cutoffs can run together).

Samples with nothing to judge against, or whose judgements hold no relevant id, are invalid with
kind ``NoJudgements`` / ``NoRelevant``. Empty retrieval scores 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ragmeter.errors import ConfigError
from ragmeter.metrics.base import Metric, Score, register_metric
from ragmeter.retrieval import measures
from ragmeter.retrieval.relevance import (
    DEFAULT_OVERLAP_THRESHOLD,
    MATCH_MODES,
    Judged,
    NoJudgements,
    judge_sample,
)

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge

__all__ = [
    "AT_K_NAMES",
    "NDCG",
    "RETRIEVAL_METRICS",
    "AveragePrecision",
    "HitRate",
    "MeanReciprocalRank",
    "PrecisionAtK",
    "RPrecision",
    "RecallAtK",
    "RetrievalMetric",
    "metric_from_at_name",
]


class RetrievalMetric(Metric):
    """Shared parameters and the score() of every retrieval metric (no judge call)."""

    requires: ClassVar[tuple[str, ...]] = ()  # ids or texts: checked per sample in score()
    steps: ClassVar[tuple[str, ...]] = ()
    default_k: ClassVar[int | None] = 10
    short: ClassVar[str] = ""  # the prefix of "@k" names
    uses_k: ClassVar[bool] = True

    def __init__(
        self,
        *,
        k: int | None = None,
        match: str = "auto",
        overlap_threshold: float = DEFAULT_OVERLAP_THRESHOLD,
        relevance_level: float = 1,
        name: str | None = None,
        **extra: Any,
    ) -> None:
        if extra:
            raise ConfigError(f"metric {type(self).name!r}: unknown parameter(s) {', '.join(sorted(extra))}")
        if k is None:
            k = self.default_k
        elif not self.uses_k:
            raise ConfigError(f"metric {type(self).name!r} takes no k (its cutoff is R)")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise ConfigError(f"metric {type(self).name!r}: k must be a positive integer, got {k!r}")
        if match not in MATCH_MODES:
            raise ConfigError(f"match must be one of {', '.join(MATCH_MODES)}, not {match!r}")
        if not 0.0 < float(overlap_threshold) <= 1.0:
            raise ConfigError(f"overlap_threshold must be in (0, 1], got {overlap_threshold!r}")
        self.k = k
        self.match = match
        self.overlap_threshold = float(overlap_threshold)
        self.relevance_level = float(relevance_level)
        if name is None:
            name = type(self).name if k == self.default_k else f"{self.short}@{k}"
        self._name = name
        self.name = name  # type: ignore[misc]  # per-instance name, so several cutoffs can run together

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"match": self.match, "overlap_threshold": self.overlap_threshold}
        if self.uses_k:
            p["k"] = self.k
        if self.relevance_level != 1:
            p["relevance_level"] = self.relevance_level
        if self._name != type(self).name:
            p["name"] = self._name
        return p

    def spec(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "params": self.params(),
            "metric": type(self).name,
        }

    def measure(self, judged: Judged) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self, value: float, judged: Judged) -> str:
        cut = f"@{self.k}" if self.uses_k and self.k is not None else ""
        return f"{self.short}{cut} = {value:.3f} ({judged.mode} match, {judged.n_retrieved} retrieved)"

    async def score(self, sample: Sample, judge: Judge) -> Score:
        try:
            judged = judge_sample(sample, match=self.match, threshold=self.overlap_threshold)
        except NoJudgements as e:
            return Score.invalid("NoJudgements", str(e))
        try:
            value = self.measure(judged)
        except measures.NoRelevant as e:
            return Score.invalid("NoRelevant", f"{e}: {self.name} is undefined", details=judged.details())
        details = judged.details()
        details["ranking"] = list(measures.dedupe(judged.ranking))[: self.k or None]
        details["relevant"] = sorted(d for d, g in judged.qrels.items() if g >= self.relevance_level)
        return Score(value=value, reason=self.describe(value, judged), details=details)


@register_metric("hit_rate")
class HitRate(RetrievalMetric):
    """1 when any relevant context is in the top k (default 10), else 0."""

    name = "hit_rate"
    short = "hit_rate"

    def measure(self, judged: Judged) -> float:
        return measures.hit_rate(judged.ranking, judged.qrels, self.k, relevance_level=self.relevance_level)


@register_metric("mrr")
class MeanReciprocalRank(RetrievalMetric):
    """Reciprocal rank of the first relevant context (MRR when averaged); no cutoff by default."""

    name = "mrr"
    short = "mrr"
    default_k = None

    def measure(self, judged: Judged) -> float:
        return measures.reciprocal_rank(
            judged.ranking, judged.qrels, self.k, relevance_level=self.relevance_level
        )


@register_metric("precision_at_k")
class PrecisionAtK(RetrievalMetric):
    """Relevant contexts in the top k (default 10) divided by k."""

    name = "precision_at_k"
    short = "precision"

    def measure(self, judged: Judged) -> float:
        return measures.precision(judged.ranking, judged.qrels, self.k, relevance_level=self.relevance_level)


@register_metric("recall_at_k")
class RecallAtK(RetrievalMetric):
    """Relevant contexts in the top k (default 10) divided by all relevant contexts."""

    name = "recall_at_k"
    short = "recall"

    def measure(self, judged: Judged) -> float:
        return measures.recall(judged.ranking, judged.qrels, self.k, relevance_level=self.relevance_level)


@register_metric("average_precision")
class AveragePrecision(RetrievalMetric):
    """Average precision over the relevant contexts (MAP when averaged); no cutoff by default."""

    name = "average_precision"
    short = "map"
    default_k = None

    def measure(self, judged: Judged) -> float:
        return measures.average_precision(
            judged.ranking, judged.qrels, self.k, relevance_level=self.relevance_level
        )


@register_metric("ndcg_at_k")
class NDCG(RetrievalMetric):
    """nDCG at k (default 10) with graded relevance; gain 'linear' (default) or 'exponential'."""

    name = "ndcg_at_k"
    short = "ndcg"

    def __init__(self, *, gain: str = "linear", **kwargs: Any) -> None:
        if gain not in measures.GAINS:
            raise ConfigError(f"gain must be one of {', '.join(measures.GAINS)}, not {gain!r}")
        self.gain = gain
        super().__init__(**kwargs)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "gain": self.gain}

    def measure(self, judged: Judged) -> float:
        return measures.ndcg(
            judged.ranking, judged.qrels, self.k, gain=self.gain, relevance_level=self.relevance_level
        )


@register_metric("r_precision")
class RPrecision(RetrievalMetric):
    """Precision at rank R, where R is the number of relevant contexts."""

    name = "r_precision"
    short = "r_precision"
    default_k = None
    uses_k = False

    def measure(self, judged: Judged) -> float:
        return measures.r_precision(judged.ranking, judged.qrels, relevance_level=self.relevance_level)


RETRIEVAL_METRICS: Mapping[str, type[RetrievalMetric]] = {
    cls.name: cls
    for cls in (HitRate, MeanReciprocalRank, PrecisionAtK, RecallAtK, AveragePrecision, NDCG, RPrecision)
}

#: ``name@k`` prefixes and the metric each means: ``ndcg@5`` is ``ndcg_at_k`` with k=5.
AT_K_NAMES: Mapping[str, str] = {
    "hit_rate": "hit_rate",
    "hits": "hit_rate",
    "mrr": "mrr",
    "p": "precision_at_k",
    "precision": "precision_at_k",
    "recall": "recall_at_k",
    "map": "average_precision",
    "ap": "average_precision",
    "ndcg": "ndcg_at_k",
}


def metric_from_at_name(name: str, **kwargs: Any) -> RetrievalMetric | None:
    """``"ndcg@5"`` -> ``NDCG(k=5)``; None when ``name`` is not of that form.

    The hook ``get_metric`` can call for names it does not know (``--metrics ndcg@5,recall@20``).
    """
    prefix, sep, k_text = name.strip().partition("@")
    if not sep or prefix.lower() not in AT_K_NAMES:
        return None
    try:
        k = int(k_text)
    except ValueError:
        raise ConfigError(f"metric {name!r}: the cutoff after '@' must be an integer") from None
    kwargs = {key: v for key, v in kwargs.items() if key not in ("k",)}
    cls = RETRIEVAL_METRICS[AT_K_NAMES[prefix.lower()]]
    factory: Callable[..., RetrievalMetric] = cls
    kwargs.setdefault("name", name.strip())
    return factory(k=k, **kwargs)
