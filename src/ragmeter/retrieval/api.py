"""Score a retriever: runs + qrels -> samples -> the usual run (means with bootstrap CIs).

``evaluate_retrieval(run, qrels)`` turns a TREC run and qrels (files or mappings) into samples with
``context_ids`` and ``reference_context_ids`` (grades in metadata) and scores them with the
retrieval metrics through :func:`ragmeter.evaluate`, so the result is a normal :class:`Result`
(recorded in a run store with ``out=``). No judge is needed or called.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.dataset.sample import Dataset, Sample
from ragmeter.errors import ConfigError, DatasetError
from ragmeter.judges.base import StepsNotImplemented
from ragmeter.retrieval.relevance import GRADES_KEY
from ragmeter.retrieval.trec import Qrels, rank_run, read_qrels, read_queries, read_trec_run

__all__ = [
    "DEFAULT_RETRIEVAL_METRICS",
    "NoJudge",
    "aevaluate_retrieval",
    "evaluate_retrieval",
    "retrieval_dataset",
]

#: What evaluate_retrieval scores when no metrics are given.
DEFAULT_RETRIEVAL_METRICS: tuple[str, ...] = (
    "hit_rate",
    "mrr",
    "precision_at_k",
    "recall_at_k",
    "average_precision",
    "ndcg_at_k",
    "r_precision",
)


class NoJudge(StepsNotImplemented):
    """A judge that does nothing: for judge-free metrics (retrieval, lexical)."""

    name = "none"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "none"}

    async def embed(self, texts: Sequence[str]) -> np.ndarray:  # pragma: no cover - never supported
        raise self._unsupported("embed")


RunLike = str | Path | Mapping[str, Any]


def _load_run(run: RunLike) -> tuple[dict[str, list[str]], str]:
    if isinstance(run, (str, Path)):
        raw: Mapping[str, Any] = read_trec_run(run)
        source = str(run)
    else:
        raw, source = run, "<run>"
    out: dict[str, list[str]] = {}
    for qid, docs in raw.items():
        if isinstance(docs, Mapping):
            out[str(qid)] = rank_run({str(d): float(s) for d, s in docs.items()})
        elif isinstance(docs, (list, tuple)):
            out[str(qid)] = [str(d) for d in docs]
        else:
            raise DatasetError(
                "a run maps each query id to {docid: score} or to a ranked list of docids",
                file=source,
                field=str(qid),
            )
    return out, source


def _load_qrels(qrels: RunLike) -> Qrels:
    if isinstance(qrels, (str, Path)):
        return read_qrels(qrels)
    return {str(q): {str(d): int(g) for d, g in docs.items()} for q, docs in qrels.items()}


def retrieval_dataset(
    run: RunLike,
    qrels: RunLike,
    *,
    queries: str | Path | Mapping[str, str] | None = None,
    include_unretrieved: bool = True,
) -> Dataset:
    """One sample per query: ``id`` = qid, ``question`` = the query text (or the qid),
    ``context_ids`` = the ranking, ``reference_context_ids`` = judged docids, grades in
    ``metadata["reference_context_grades"]`` (a ``{docid: grade}`` mapping).

    Queries in the qrels without a run line are empty retrievals (they score 0, like
    ``trec_eval -c``) unless ``include_unretrieved=False``; queries of the run without judgements
    are left out and listed in ``Dataset.problems``.
    """
    ranked, source = _load_run(run)
    judged = _load_qrels(qrels)
    texts: Mapping[str, str] = {}
    if queries is not None:
        texts = read_queries(queries) if isinstance(queries, (str, Path)) else queries
    qids = list(ranked) + ([q for q in judged if q not in ranked] if include_unretrieved else [])
    samples: list[Sample] = []
    problems: list[DatasetError] = []
    for qid in qids:
        if qid not in judged:
            problems.append(
                DatasetError("query has no relevance judgements; not scored", file=source, field=qid)
            )
            continue
        grades = judged[qid]
        samples.append(
            Sample(
                id=qid,
                question=texts.get(qid, qid),
                context_ids=tuple(ranked.get(qid, ())),
                reference_context_ids=tuple(grades),
                metadata={GRADES_KEY: dict(grades)},
            )
        )
    return Dataset(tuple(samples), source=source, problems=tuple(problems))


async def aevaluate_retrieval(
    run: RunLike,
    qrels: RunLike,
    metrics: Any = None,
    *,
    queries: str | Path | Mapping[str, str] | None = None,
    include_unretrieved: bool = True,
    **options: Any,
) -> Any:
    """Async :func:`evaluate_retrieval`."""
    from ragmeter.metrics.base import Metric
    from ragmeter.metrics.registry import resolve_metrics
    from ragmeter.run.runner import aevaluate

    chosen = resolve_metrics(list(DEFAULT_RETRIEVAL_METRICS) if metrics is None else metrics)
    for m in chosen:
        if not isinstance(m, Metric) or m.steps:
            raise ConfigError(
                f"metric {m.name!r} needs a judge; evaluate_retrieval scores judge-free metrics"
            )
    ds = retrieval_dataset(run, qrels, queries=queries, include_unretrieved=include_unretrieved)
    options.setdefault("progress", False)
    return await aevaluate(ds, chosen, NoJudge(), **options)


def evaluate_retrieval(
    run: RunLike,
    qrels: RunLike,
    metrics: Any = None,
    *,
    queries: str | Path | Mapping[str, str] | None = None,
    include_unretrieved: bool = True,
    **options: Any,
) -> Any:
    """Score a retrieval run against qrels; returns a :class:`ragmeter.Result`.

    ``run``: a TREC run file, ``{qid: {docid: score}}`` or ``{qid: [docid, ...]}`` (ranked).
    ``qrels``: a TREC or BEIR qrels file, or ``{qid: {docid: grade}}``. ``metrics``: names or
    instances (default :data:`DEFAULT_RETRIEVAL_METRICS`), e.g. ``[get_metric("ndcg_at_k", k=5)]``.
    ``options``: run options (``out=``, ``bootstrap_resamples=``...).
    """
    from ragmeter.run.sync import run_sync

    return run_sync(
        aevaluate_retrieval(
            run, qrels, metrics, queries=queries, include_unretrieved=include_unretrieved, **options
        )
    )
