"""Retrieval evaluation: measures (trec_eval conventions), relevance by ids or by text overlap,
TREC run / qrels readers, and :func:`evaluate_retrieval`. See docs/retrieval.md."""

from __future__ import annotations

from typing import Any

from ragmeter.retrieval.measures import NoRelevant
from ragmeter.retrieval.relevance import DEFAULT_OVERLAP_THRESHOLD, judge_sample, text_overlap
from ragmeter.retrieval.trec import rank_run, read_qrels, read_queries, read_trec_run

__all__ = [
    "DEFAULT_OVERLAP_THRESHOLD",
    "NoRelevant",
    "aevaluate_retrieval",
    "evaluate_retrieval",
    "judge_sample",
    "rank_run",
    "read_qrels",
    "read_queries",
    "read_trec_run",
    "retrieval_dataset",
    "text_overlap",
]

_LAZY = {"evaluate_retrieval", "aevaluate_retrieval", "retrieval_dataset"}


def __getattr__(name: str) -> Any:
    # the API module imports the runner; load it on first use so importing the metrics stays light
    if name in _LAZY:
        from ragmeter.retrieval import api

        return getattr(api, name)
    raise AttributeError(f"module 'ragmeter.retrieval' has no attribute {name!r}")
