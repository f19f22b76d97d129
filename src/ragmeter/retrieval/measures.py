"""Retrieval measures over one query: a ranked list of ids and graded relevance judgements (qrels).

Pure functions, no judge. The conventions are trec_eval's, so figures agree with ``trec_eval`` /
``pytrec_eval`` (the tests check every measure against pytrec_eval):

- ``ranking`` is deduplicated first: an id counts at its first occurrence only, later occurrences
  are removed (they take no rank position). The cutoff ``k`` applies to the deduplicated list.
- ``qrels`` maps id -> grade. An id is relevant when its grade >= ``relevance_level`` (default 1);
  ids missing from ``qrels`` and negative grades count as grade 0. ``R`` is the number of relevant
  ids in ``qrels`` (retrieved or not).
- ``k`` larger than the list: the list is simply shorter; precision@k still divides by ``k``
  (trec_eval's P_k). ``k=None`` means no cutoff.
- Empty retrieval scores 0 on every measure. ``R == 0`` makes every measure undefined:
  :class:`NoRelevant` is raised, and the metric turns it into an invalid score (never 0, never NaN).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "GAINS",
    "NoRelevant",
    "average_precision",
    "dedupe",
    "hit_rate",
    "ndcg",
    "precision",
    "r_precision",
    "recall",
    "reciprocal_rank",
]

#: nDCG gain functions: ``linear`` (gain = grade, trec_eval's ndcg) and ``exponential``
#: (gain = 2**grade - 1, Burges et al. 2005; equal to linear for binary relevance).
GAINS: tuple[str, ...] = ("linear", "exponential")


class NoRelevant(ValueError):
    """The judgements hold no relevant id for this query: recall, AP, nDCG... are undefined."""


def dedupe(ranking: Iterable[str]) -> list[str]:
    """The ranking with each id kept at its first occurrence only."""
    seen: set[str] = set()
    out: list[str] = []
    for doc in ranking:
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


def _grade(qrels: Mapping[str, float], doc: str) -> float:
    g = float(qrels.get(doc, 0.0))
    return g if g > 0 else 0.0


def _prepare(
    ranking: Sequence[str], qrels: Mapping[str, float], k: int | None, relevance_level: float
) -> tuple[list[str], int]:
    if k is not None and (not isinstance(k, int) or k < 1):
        raise ValueError(f"k must be a positive integer or None, got {k!r}")
    n_rel = sum(1 for g in qrels.values() if float(g) >= relevance_level)
    if n_rel == 0:
        raise NoRelevant("no relevant id in the judgements for this query")
    ranked = dedupe(ranking)
    if k is not None:
        ranked = ranked[:k]
    return ranked, n_rel


def _is_rel(qrels: Mapping[str, float], doc: str, level: float) -> bool:
    return doc in qrels and float(qrels[doc]) >= level


def hit_rate(
    ranking: Sequence[str], qrels: Mapping[str, float], k: int | None = None, *, relevance_level: float = 1
) -> float:
    """1.0 when a relevant id is in the top ``k``, else 0.0."""
    ranked, _ = _prepare(ranking, qrels, k, relevance_level)
    return 1.0 if any(_is_rel(qrels, d, relevance_level) for d in ranked) else 0.0


def reciprocal_rank(
    ranking: Sequence[str], qrels: Mapping[str, float], k: int | None = None, *, relevance_level: float = 1
) -> float:
    """1 / rank of the first relevant id in the top ``k`` (0.0 when there is none)."""
    ranked, _ = _prepare(ranking, qrels, k, relevance_level)
    for i, d in enumerate(ranked, start=1):
        if _is_rel(qrels, d, relevance_level):
            return 1.0 / i
    return 0.0


def precision(
    ranking: Sequence[str], qrels: Mapping[str, float], k: int | None = None, *, relevance_level: float = 1
) -> float:
    """Relevant ids in the top ``k``, divided by ``k`` (by the list length when ``k`` is None)."""
    ranked, _ = _prepare(ranking, qrels, k, relevance_level)
    denom = k if k is not None else len(ranked)
    if denom == 0:
        return 0.0
    return sum(1 for d in ranked if _is_rel(qrels, d, relevance_level)) / denom


def recall(
    ranking: Sequence[str], qrels: Mapping[str, float], k: int | None = None, *, relevance_level: float = 1
) -> float:
    """Relevant ids in the top ``k``, divided by ``R``."""
    ranked, n_rel = _prepare(ranking, qrels, k, relevance_level)
    return sum(1 for d in ranked if _is_rel(qrels, d, relevance_level)) / n_rel


def average_precision(
    ranking: Sequence[str], qrels: Mapping[str, float], k: int | None = None, *, relevance_level: float = 1
) -> float:
    """Sum of precision@i at each relevant rank i <= k, divided by ``R`` (MAP when averaged)."""
    ranked, n_rel = _prepare(ranking, qrels, k, relevance_level)
    hits = 0
    total = 0.0
    for i, d in enumerate(ranked, start=1):
        if _is_rel(qrels, d, relevance_level):
            hits += 1
            total += hits / i
    return total / n_rel


def r_precision(ranking: Sequence[str], qrels: Mapping[str, float], *, relevance_level: float = 1) -> float:
    """Precision at rank ``R`` (the number of relevant ids)."""
    _, n_rel = _prepare(ranking, qrels, None, relevance_level)
    ranked = dedupe(ranking)[:n_rel]
    return sum(1 for d in ranked if _is_rel(qrels, d, relevance_level)) / n_rel


def _gain(grade: float, gain: str) -> float:
    if gain == "linear":
        return grade
    if gain == "exponential":
        return 2.0**grade - 1.0
    raise ValueError(f"gain must be one of {', '.join(GAINS)}, not {gain!r}")


def ndcg(
    ranking: Sequence[str],
    qrels: Mapping[str, float],
    k: int | None = None,
    *,
    gain: str = "linear",
    relevance_level: float = 1,
) -> float:
    """Normalised discounted cumulative gain at ``k`` with graded relevance.

    ``DCG@k = sum_{i<=k} gain(grade_i) / log2(i + 1)``; the ideal DCG sorts every judged grade
    (retrieved or not) in decreasing order and cuts it at ``k``. ``gain``: ``"linear"`` (trec_eval)
    or ``"exponential"`` (``2**grade - 1``).
    """
    ranked, _ = _prepare(ranking, qrels, k, relevance_level)
    dcg = sum(_gain(_grade(qrels, d), gain) / math.log2(i + 1) for i, d in enumerate(ranked, start=1))
    ideal_grades = sorted((_grade(qrels, d) for d in qrels), reverse=True)
    if k is not None:
        ideal_grades = ideal_grades[:k]
    idcg = sum(_gain(g, gain) / math.log2(i + 1) for i, g in enumerate(ideal_grades, start=1))
    if idcg <= 0:
        raise NoRelevant("no positive grade in the judgements for this query")
    return dcg / idcg
