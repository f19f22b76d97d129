"""Which retrieved items are relevant: by ids, or by text overlap with the reference contexts.

Two ways to judge a sample's retrieval, chosen by ``match``:

- ``"ids"``: the ranking is ``context_ids``; the judgements are ``reference_context_ids`` with their
  grades. Grades come from ``metadata["reference_context_grades"]`` (a list aligned with
  ``reference_context_ids``, or a ``{id: grade}`` mapping, e.g. read from TREC qrels); without
  grades every reference id has grade 1.
- ``"text"``: for data without ids. A retrieved chunk counts as relevant when it overlaps a
  reference context enough: ``overlap(a, b) = |tokens(a) ∩ tokens(b)| / min(|tokens(a)|,
  |tokens(b)|)`` (multiset intersection of :func:`ragmeter.text.tokenize` tokens; English by word,
  Chinese by character) must be >= ``threshold`` (default :data:`DEFAULT_OVERLAP_THRESHOLD` = 0.5).
  Dividing by the shorter text is containment: a chunk that is a piece of the reference, or one that
  contains it, both score high, so figures survive re-chunking. Each retrieved chunk takes the id of
  the best-overlapping reference context (``ref:1``, ``ref:2``... in reference order, ties to the
  first); a later chunk that matches an already-matched reference is a duplicate of it and is
  dropped like any duplicate id; a chunk that matches none gets its own non-relevant id (identical
  chunk texts share one). Grades come from ``metadata["reference_context_grades"]`` aligned with
  ``reference_contexts``.
- ``"auto"`` (default): ids when the sample has ``reference_context_ids`` and retrieved ids
  (``context_ids``, or no contexts at all), else text when it has ``reference_contexts``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.text import tokenize

__all__ = [
    "DEFAULT_OVERLAP_THRESHOLD",
    "GRADES_KEY",
    "MATCH_MODES",
    "Judged",
    "NoJudgements",
    "judge_sample",
    "text_overlap",
]

#: Token-overlap containment a retrieved chunk needs with a reference context to count as relevant.
DEFAULT_OVERLAP_THRESHOLD = 0.5
#: Metadata key holding the grades of the reference contexts (list aligned, or {id: grade}).
GRADES_KEY = "reference_context_grades"
MATCH_MODES: tuple[str, ...] = ("auto", "ids", "text")


class NoJudgements(ValueError):
    """The sample carries nothing to judge retrieval against (no reference ids / contexts)."""


@dataclass(frozen=True)
class Judged:
    """A sample's retrieval, ready for the measures: the ranking of ids and the judgements."""

    ranking: tuple[str, ...]
    qrels: Mapping[str, float]
    mode: str  # "ids" or "text"
    n_retrieved: int  # before deduplication

    def details(self) -> dict[str, Any]:
        return {"match": self.mode, "n_retrieved": self.n_retrieved, "n_judged": len(self.qrels)}


def text_overlap(a: str, b: str) -> float:
    """Token-overlap containment of two texts in [0, 1]: shared tokens over the shorter text's count."""
    ta, tb = Counter(tokenize(a)), Counter(tokenize(b))
    na, nb = sum(ta.values()), sum(tb.values())
    if na == 0 or nb == 0:
        return 0.0
    return sum((ta & tb).values()) / min(na, nb)


def _grades(sample: Any, keys: Sequence[str]) -> dict[str, float]:
    """Grades for ``keys`` (reference ids, or ``ref:i`` labels) from the sample's metadata."""
    raw = (sample.metadata or {}).get(GRADES_KEY)
    if raw is None:
        return {k: 1.0 for k in keys}
    if isinstance(raw, Mapping):
        out = {str(k): _num(v, sample) for k, v in raw.items()}
        for k in keys:
            out.setdefault(k, 1.0)
        return out
    if isinstance(raw, (list, tuple)):
        if len(raw) != len(keys):
            raise NoJudgements(
                f"metadata {GRADES_KEY!r} has {len(raw)} grade(s) for {len(keys)} reference context(s)"
            )
        return {k: _num(v, sample) for k, v in zip(keys, raw, strict=True)}
    raise NoJudgements(f"metadata {GRADES_KEY!r} must be a list or an {{id: grade}} mapping")


def _num(v: Any, sample: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            return float(str(v))
        except ValueError:
            raise NoJudgements(f"relevance grade {v!r} is not a number") from None
    return float(v)


def _by_ids(sample: Any) -> Judged:
    refs = [str(r) for r in sample.reference_context_ids or ()]
    qrels = _grades(sample, refs)
    ranking = [str(c) for c in sample.context_ids or ()]
    return Judged(tuple(ranking), qrels, "ids", len(ranking))


def _by_text(sample: Any, threshold: float) -> Judged:
    refs = [r for r in sample.reference_contexts or () if isinstance(r, str)]
    labels = [f"ref:{i}" for i in range(1, len(refs) + 1)]
    qrels = _grades(sample, labels)
    ranking: list[str] = []
    other: dict[str, str] = {}
    for chunk in sample.contexts or ():
        best, best_i = 0.0, -1
        for i, ref in enumerate(refs):
            o = text_overlap(chunk, ref)
            if o > best:
                best, best_i = o, i
        if best_i >= 0 and best >= threshold:
            ranking.append(labels[best_i])
        else:
            key = " ".join(str(chunk).split())
            ranking.append(other.setdefault(key, f"chunk:{len(other) + 1}"))
    return Judged(tuple(ranking), qrels, "text", len(sample.contexts or ()))


def judge_sample(sample: Any, *, match: str = "auto", threshold: float = DEFAULT_OVERLAP_THRESHOLD) -> Judged:
    """The ranking and judgements of ``sample`` (see the module docstring for the modes)."""
    has_ref_ids = bool(sample.reference_context_ids)
    has_ref_text = bool(sample.reference_contexts)
    if match == "ids" or (
        match == "auto" and has_ref_ids and (sample.context_ids is not None or not sample.contexts)
    ):
        if not has_ref_ids:
            raise NoJudgements("match='ids' needs reference_context_ids")
        if sample.context_ids is None and sample.contexts:
            raise NoJudgements("match='ids' needs context_ids (the ids of the retrieved contexts)")
        return _by_ids(sample)
    if match in ("text", "auto"):
        if not has_ref_text:
            if has_ref_ids:
                raise NoJudgements(
                    "the sample has reference_context_ids but no context_ids; give the retrieved ids, "
                    "or reference_contexts to match by text"
                )
            raise NoJudgements("no reference_context_ids or reference_contexts to judge retrieval against")
        return _by_text(sample, threshold)
    raise ValueError(f"match must be one of {', '.join(MATCH_MODES)}, not {match!r}")
