"""LlamaIndex's retrieval evaluators (``llama_index.core.evaluation.retrieval``) over ragmeter's
retrieval measures, which equal trec_eval's (:mod:`ragmeter.retrieval.measures`).

::

    from ragmeter.evaluators import RetrieverEvaluator

    ev = RetrieverEvaluator.from_metric_names(["hit_rate", "mrr", "precision", "recall", "ap", "ndcg"],
                                              retriever=index.as_retriever(similarity_top_k=5))
    result = ev.evaluate(query="...", expected_ids=["node-1", "node-7"])
    result.metric_vals_dict        # {"hit_rate": 1.0, "mrr": 0.5, ...}

Each query's expected ids are its relevant documents (grade 1), the retriever's node ids its
ranking, with no cutoff (the whole list the retriever returned, as LlamaIndex reads it). With
llama-index-core installed, results are LlamaIndex's own ``RetrievalEvalResult`` and
``RetrievalMetricResult``; without it, classes with the same fields.

Where the figures differ from LlamaIndex's own metrics (docs/integrations.md): a retrieved id
that repeats counts once, at its first rank (trec_eval; LlamaIndex counts each occurrence), and
nDCG's ideal ranking holds every expected id (trec_eval; LlamaIndex's holds at most as many as
were retrieved, so a retriever that returns fewer ids than there are relevant ones scores higher
there). Hit rate, MRR, precision, recall and AP are the same on lists without repeats.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragmeter.errors import ConfigError
from ragmeter.retrieval import measures
from ragmeter.run.sync import run_sync

__all__ = [
    "RETRIEVAL_METRICS",
    "BaseRetrievalEvaluator",
    "MultiModalRetrieverEvaluator",
    "RetrievalEvalMode",
    "RetrievalEvalResult",
    "RetrievalMetricResult",
    "RetrieverEvaluator",
]

try:
    from llama_index.core.evaluation.retrieval.base import BaseRetrievalEvaluator as _FrameworkEvaluator
    from llama_index.core.evaluation.retrieval.base import RetrievalEvalMode, RetrievalEvalResult
    from llama_index.core.evaluation.retrieval.metrics_base import BaseRetrievalMetric as _FrameworkMetric
    from llama_index.core.evaluation.retrieval.metrics_base import RetrievalMetricResult
except ImportError:
    from enum import Enum

    class RetrievalEvalMode(str, Enum):  # type: ignore[no-redef]
        """Stand-in for LlamaIndex's: which nodes a multi-modal retriever's result is read for."""

        TEXT = "text"
        IMAGE = "image"

    class RetrievalMetricResult(BaseModel):  # type: ignore[no-redef]
        """The fields of LlamaIndex's ``RetrievalMetricResult``."""

        score: float = Field(..., description="Score for the metric")
        metadata: dict[str, Any] = Field(default_factory=dict, description="Metadata for the metric result")

        def __str__(self) -> str:
            return f"Score: {self.score}\nMetadata: {self.metadata}"

        def __float__(self) -> float:
            return self.score

    class RetrievalEvalResult(BaseModel):  # type: ignore[no-redef]
        """The fields of LlamaIndex's ``RetrievalEvalResult``."""

        model_config = ConfigDict(arbitrary_types_allowed=True)
        query: str
        expected_ids: list[str]
        expected_texts: list[str] | None = None
        retrieved_ids: list[str]
        retrieved_texts: list[str]
        mode: RetrievalEvalMode = RetrievalEvalMode.TEXT
        metric_dict: dict[str, RetrievalMetricResult]

        @property
        def metric_vals_dict(self) -> dict[str, float]:
            return {k: v.score for k, v in self.metric_dict.items()}

        def __str__(self) -> str:
            return f"Query: {self.query}\nMetrics: {self.metric_vals_dict!s}\n"

    class _FrameworkMetric(BaseModel):  # type: ignore[no-redef]
        """Stand-in for LlamaIndex's ``BaseRetrievalMetric``."""

        model_config = ConfigDict(arbitrary_types_allowed=True)

    class _FrameworkEvaluator(BaseModel):  # type: ignore[no-redef]
        """Stand-in for LlamaIndex's ``BaseRetrievalEvaluator`` (a pydantic model with ``metrics``)."""

        model_config = ConfigDict(arbitrary_types_allowed=True)
        metrics: list[Any] = Field(..., description="List of metrics to evaluate")


def _measure(fn: Callable[..., float], **kw: Any) -> Callable[[list[str], dict[str, float]], float]:
    return lambda ranking, qrels: fn(ranking, qrels, **kw)


#: LlamaIndex's metric names -> ragmeter's measure over (ranking, qrels), no cutoff
RETRIEVAL_METRICS: dict[str, Callable[[list[str], dict[str, float]], float]] = {
    "hit_rate": _measure(measures.hit_rate),
    "mrr": _measure(measures.reciprocal_rank),
    "precision": _measure(measures.precision),
    "recall": _measure(measures.recall),
    "ap": _measure(measures.average_precision),
    "ndcg": _measure(measures.ndcg),
}


class RagmeterRetrievalMetric(_FrameworkMetric):  # type: ignore[misc]
    """One of :data:`RETRIEVAL_METRICS` as a LlamaIndex retrieval metric (``metric_name``,
    ``compute``): ragmeter's measure over the whole ranking, each expected id relevant."""

    name: str

    @property
    def metric_name(self) -> str:  # type: ignore[override]
        return self.name

    def compute(
        self,
        query: str | None = None,
        expected_ids: Sequence[str] | None = None,
        retrieved_ids: Sequence[str] | None = None,
        expected_texts: Sequence[str] | None = None,
        retrieved_texts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> RetrievalMetricResult:
        if not expected_ids:
            raise ValueError(
                "expected ids must be provided (a query with no relevant id has no retrieval metric)"
            )
        qrels = {str(i): 1.0 for i in expected_ids}
        ranking = [str(i) for i in retrieved_ids or ()]
        return RetrievalMetricResult(score=float(RETRIEVAL_METRICS[self.name](ranking, qrels)))


def _metric_names(names: Sequence[str]) -> list[str]:
    unknown = [n for n in names if n not in RETRIEVAL_METRICS]
    if unknown or not names:
        raise ConfigError(
            f"unknown retrieval metric(s) {unknown or list(names)!r}; known: {', '.join(RETRIEVAL_METRICS)}"
        )
    return list(dict.fromkeys(names))


class BaseRetrievalEvaluator(_FrameworkEvaluator):  # type: ignore[misc]
    """``metrics``: LlamaIndex's metric names (``hit_rate``, ``mrr``, ``precision``, ``recall``,
    ``ap``, ``ndcg``) or metric objects of those names. Subclasses say how a query's ranking is got
    (:meth:`_aget_retrieved_ids_and_texts`). With llama-index-core installed this is a
    ``llama_index.core.evaluation.BaseRetrievalEvaluator``, its ``metrics`` LlamaIndex retrieval
    metrics that ragmeter's measures compute."""

    def __init__(self, metrics: Sequence[Any], **kwargs: Any) -> None:
        names = _metric_names([getattr(m, "metric_name", m) for m in metrics])
        try:
            super().__init__(metrics=[RagmeterRetrievalMetric(name=n) for n in names], **kwargs)
        except ValueError as exc:  # pydantic's ValidationError: a missing or wrong argument
            raise ConfigError(f"{type(self).__name__}: {exc}") from exc

    @classmethod
    def from_metric_names(cls, metric_names: Sequence[str], **kwargs: Any) -> BaseRetrievalEvaluator:
        """LlamaIndex's constructor: the metrics by name, the rest (``retriever=``...) as keywords."""
        return cls(metrics=metric_names, **kwargs)

    async def _aget_retrieved_ids_and_texts(
        self, query: str, mode: RetrievalEvalMode = RetrievalEvalMode.TEXT
    ) -> tuple[list[str], list[str]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def score(
        self, expected_ids: Sequence[str], retrieved_ids: Sequence[str]
    ) -> dict[str, RetrievalMetricResult]:
        """The metrics of one ranking against its expected ids (each relevant, grade 1)."""
        return {
            m.metric_name: m.compute(expected_ids=list(expected_ids), retrieved_ids=list(retrieved_ids))
            for m in self.metrics
        }

    async def aevaluate(
        self,
        query: str,
        expected_ids: Sequence[str],
        expected_texts: Sequence[str] | None = None,
        mode: RetrievalEvalMode | str = RetrievalEvalMode.TEXT,
        **kwargs: Any,
    ) -> RetrievalEvalResult:
        """Retrieve for ``query`` and score the ranking against ``expected_ids``."""
        if kwargs:
            raise ConfigError(f"{type(self).__name__}.evaluate: unknown argument(s) {sorted(kwargs)}")
        mode = RetrievalEvalMode(mode)
        retrieved_ids, retrieved_texts = await self._aget_retrieved_ids_and_texts(query, mode)
        return RetrievalEvalResult(
            query=query,
            expected_ids=list(expected_ids),
            expected_texts=list(expected_texts) if expected_texts is not None else None,
            retrieved_ids=retrieved_ids,
            retrieved_texts=retrieved_texts,
            mode=mode,
            metric_dict=self.score(expected_ids, retrieved_ids),
        )

    def evaluate(
        self,
        query: str,
        expected_ids: Sequence[str],
        expected_texts: Sequence[str] | None = None,
        mode: RetrievalEvalMode | str = RetrievalEvalMode.TEXT,
        **kwargs: Any,
    ) -> RetrievalEvalResult:
        """Sync form of :meth:`aevaluate` (works inside a running event loop too)."""
        return run_sync(self.aevaluate(query, expected_ids, expected_texts, mode, **kwargs))

    async def aevaluate_dataset(
        self,
        dataset: Any,
        workers: int = 2,
        show_progress: bool = False,
        **kwargs: Any,
    ) -> list[RetrievalEvalResult]:
        """Every query of ``dataset``: LlamaIndex's ``EmbeddingQAFinetuneDataset`` (``queries``: id ->
        text, ``relevant_docs``: id -> expected node ids) or a mapping with those two keys; at most
        ``workers`` queries at once; results in the dataset's query order."""
        queries = _field(dataset, "queries")
        relevant = _field(dataset, "relevant_docs")
        missing = [qid for qid in queries if qid not in relevant]
        if missing:
            raise ConfigError(f"dataset: query {missing[0]!r} has no relevant_docs entry")
        if workers < 1:
            raise ConfigError(f"workers must be >= 1, got {workers}")
        from ragmeter.judges.types import NO_USAGE
        from ragmeter.run.progress import Progress

        gate = asyncio.Semaphore(workers)
        progress = Progress(len(queries), enabled=show_progress, description="retrieval")

        async def one(qid: str) -> RetrievalEvalResult:
            async with gate:
                result = await self.aevaluate(queries[qid], relevant[qid], **kwargs)
            progress.advance(invalid=False, usage=NO_USAGE)
            return result

        try:
            return list(await asyncio.gather(*(one(qid) for qid in queries)))
        finally:
            progress.close()


def _field(dataset: Any, name: str) -> Mapping[str, Any]:
    value = dataset.get(name) if isinstance(dataset, Mapping) else getattr(dataset, name, None)
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"dataset has no {name!r} mapping: pass an EmbeddingQAFinetuneDataset or a dict with "
            "'queries' (id -> text) and 'relevant_docs' (id -> expected node ids)"
        )
    return value


async def _retrieve(retriever: Any, query: str) -> list[Any]:
    if hasattr(retriever, "aretrieve"):
        return list(await retriever.aretrieve(query))
    if hasattr(retriever, "retrieve"):
        return list(await asyncio.to_thread(retriever.retrieve, query))
    if callable(retriever):
        got = retriever(query)
        return list(await got if asyncio.iscoroutine(got) else got)
    raise ConfigError(f"not a retriever: {retriever!r} (it needs aretrieve, retrieve, or to be callable)")


def _node_of(item: Any) -> Any:
    return getattr(item, "node", item)


def _id_and_text(item: Any) -> tuple[str, str]:
    """A LlamaIndex ``NodeWithScore`` / node, a LangChain ``Document`` (``id``), a dict with
    ``id``/``text``, or a plain id string."""
    node = _node_of(item)
    if isinstance(node, str):
        return node, ""
    if isinstance(node, Mapping):
        doc_id = node.get("id", node.get("node_id", node.get("doc_id")))
        text = node.get("text", node.get("page_content", ""))
    else:
        doc_id = getattr(node, "node_id", None) or getattr(node, "id_", None) or getattr(node, "id", None)
        text = getattr(node, "text", None) or getattr(node, "page_content", "") or ""
    if doc_id is None:
        raise ConfigError(f"a retrieved item has no id: {item!r}")
    return str(doc_id), str(text)


class RetrieverEvaluator(BaseRetrievalEvaluator):
    """LlamaIndex's ``RetrieverEvaluator``: ``retriever`` is a LlamaIndex retriever (``aretrieve``),
    any object with ``retrieve``, or a callable ``query -> items``; ``node_postprocessors`` run on
    its nodes first, as LlamaIndex does."""

    retriever: Any = Field(..., description="Retriever to evaluate")
    node_postprocessors: list[Any] | None = Field(default=None, description="Optional post-processor")

    def __init__(
        self,
        metrics: Sequence[Any],
        retriever: Any,
        node_postprocessors: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            metrics, retriever=retriever, node_postprocessors=list(node_postprocessors or ()), **kwargs
        )

    async def _nodes(self, query: str) -> list[Any]:
        nodes = await _retrieve(self.retriever, query)
        for post in self.node_postprocessors or ():
            nodes = list(post.postprocess_nodes(nodes, query_str=query))
        return nodes

    async def _aget_retrieved_ids_and_texts(
        self, query: str, mode: RetrievalEvalMode = RetrievalEvalMode.TEXT
    ) -> tuple[list[str], list[str]]:
        pairs = [_id_and_text(n) for n in await self._nodes(query)]
        return [i for i, _ in pairs], [t for _, t in pairs]


def is_image_node(item: Any) -> bool:
    """A LlamaIndex ``ImageNode`` (by class), or a dict / object whose ``image``, ``image_path``,
    ``image_url`` or ``image_mimetype`` is set."""
    node = _node_of(item)
    if type(node).__name__ == "ImageNode":
        return True
    keys = ("image", "image_path", "image_url", "image_mimetype")
    if isinstance(node, Mapping):
        return any(node.get(k) for k in keys)
    return any(getattr(node, k, None) for k in keys)


class MultiModalRetrieverEvaluator(RetrieverEvaluator):
    """LlamaIndex's ``MultiModalRetrieverEvaluator``: ``mode="text"`` scores the text nodes of
    the retriever's result, ``mode="image"`` its image nodes, each list on its own, as LlamaIndex
    keeps them apart."""

    async def _aget_retrieved_ids_and_texts(
        self, query: str, mode: RetrievalEvalMode = RetrievalEvalMode.TEXT
    ) -> tuple[list[str], list[str]]:
        nodes = await self._nodes(query)
        want_image = RetrievalEvalMode(mode) == RetrievalEvalMode.IMAGE
        pairs = [_id_and_text(n) for n in nodes if is_image_node(n) == want_image]
        return [i for i, _ in pairs], [t for _, t in pairs]
