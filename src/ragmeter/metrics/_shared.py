"""Steps that several metrics share on one sample, asked so that they cost one call.

Metrics that need the same intermediate result call these helpers with the same arguments; the
LLM judge's memo (:mod:`ragmeter.judges.memo`) then answers the second asker from the first call.
When the judge offers combined steps (``judge.combine_steps``, the LLM judge), the helpers ask for
everything the sample allows in one call, so the sharing does not depend on which metrics run:

- :func:`claim_sets`: claims of the answer AND of the reference in one ``extract_claims_many``
  call (faithfulness, context recall, factual correctness, answer correctness, noise sensitivity).
- :func:`context_verdicts`: the answer's claims and the reference's claims verified against the
  contexts in one ``verify_claims`` call (faithfulness, context recall). Each verdict is about one
  claim against all contexts, exactly as in separate calls, so the formulas do not change.
- :func:`context_analysis`: per-chunk usefulness for the reference and per-sentence need for the
  question in one ``analyse_contexts`` call (context precision, context relevance).

Judges without combined steps (the local judge) get the plain steps, one per need.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.dataset.sample import Sample
from ragmeter.judges.base import Verdict
from ragmeter.metrics._common import blank, clean_texts
from ragmeter.text import detect_lang, split_sentences


def combines(judge: Any) -> bool:
    return bool(getattr(judge, "combine_steps", False)) and callable(
        getattr(judge, "extract_claims_many", None)
    )


def sample_lang(lang: str, sample: Sample) -> str:
    """The metric's ``lang``; ``"auto"`` is detected from question, answer and reference together,
    so every metric of a sample asks in the same language (and shares the same calls)."""
    if lang != "auto":
        return lang
    texts = [t for t in (sample.question, sample.answer, sample.reference) if t and t.strip()]
    return detect_lang(" ".join(texts))


def question_of(sample: Sample) -> str | None:
    return sample.question.strip() if not blank(sample.question) else None


@dataclass(frozen=True)
class ClaimSets:
    answer: list[str] | None  # None: not asked (no answer, or not needed)
    reference: list[str] | None


async def claim_sets(
    judge: Any, sample: Sample, lang: str, *, answer: bool = False, reference: bool = False
) -> ClaimSets:
    """Claims of the answer and/or the reference (stripped, empty ones dropped)."""
    ans = sample.answer if not blank(sample.answer) else None
    ref = sample.reference if not blank(sample.reference) else None
    q = question_of(sample)
    if combines(judge) and ans is not None and ref is not None:
        both = await judge.extract_claims_many([ans, ref], question=q, lang=lang)
        return ClaimSets(clean_texts(both[0]), clean_texts(both[1]))
    want = [t if flag else None for t, flag in ((ans, answer), (ref, reference))]
    found = await asyncio.gather(
        *(judge.extract_claims(t, question=q, lang=lang) for t in want if t is not None)
    )
    it = iter(found)
    out = [clean_texts(next(it)) if t is not None else None for t in want]
    return ClaimSets(out[0], out[1])


async def context_verdicts(
    judge: Any,
    sets: ClaimSets,
    contexts: Sequence[str],
    lang: str,
    *,
    answer: bool = False,
    reference: bool = False,
) -> tuple[list[Verdict] | None, list[Verdict] | None]:
    """Verdicts of the answer's and/or the reference's claims against ``contexts``."""
    a = sets.answer or []
    r = sets.reference or []
    if combines(judge) and a and r:
        verdicts = await judge.verify_claims([*a, *r], contexts, lang=lang)
        if len(verdicts) != len(a) + len(r):
            return verdicts[: len(a)] if answer else None, verdicts[len(a) :] if reference else None
        return verdicts[: len(a)], verdicts[len(a) :]
    want = [(a if answer else None), (r if reference else None)]
    found = await asyncio.gather(
        *(judge.verify_claims(c, contexts, lang=lang) for c in want if c is not None)
    )
    it = iter(found)
    out = [list(next(it)) if c is not None else None for c in want]
    return out[0], out[1]


def context_sentences(contexts: Sequence[str]) -> list[list[str]]:
    """Sentences of each context (:func:`split_sentences`; a context that does not split is one)."""
    return [split_sentences(c) or [c] for c in contexts]


async def context_analysis(
    judge: Any,
    sample: Sample,
    contexts: Sequence[str],
    lang: str,
    *,
    chunks: bool = False,
    sentences: bool = False,
) -> tuple[list[Verdict] | None, list[list[float]] | None]:
    """(chunk verdicts against the reference, per-context sentence ratings for the question)."""
    question = sample.question.strip()
    ref = sample.reference.strip() if sample.reference is not None and not blank(sample.reference) else None
    analyse = getattr(judge, "analyse_contexts", None)
    if combines(judge) and callable(analyse) and ref is not None:
        verdicts, ratings = await analyse(question, contexts, ref, lang=lang)
        return list(verdicts), [list(r) for r in ratings]
    verdicts = None
    ratings = None
    if chunks:
        if ref is None:
            raise ValueError("context_analysis(chunks=True) needs a reference")
        verdicts = list(await judge.rate_chunks(question, contexts, ref, lang=lang))
    if sentences:
        per_ctx = context_sentences(contexts)
        flat = [s for group in per_ctx for s in group]
        scores = list(await judge.rate_sentences(question, flat, lang=lang))
        if len(scores) != len(flat):
            raise _count_error("rate_sentences", len(scores), len(flat), "sentences")
        ratings, pos = [], 0
        for group in per_ctx:
            ratings.append([float(x) for x in scores[pos : pos + len(group)]])
            pos += len(group)
    return verdicts, ratings


def _count_error(step: str, got: int, want: int, what: str) -> Exception:
    from ragmeter.errors import JudgeOutputError

    return JudgeOutputError(f"{step} returned {got} values for {want} {what}")


def average_precision(useful: Sequence[bool | float]) -> float:
    """Rank-aware average precision (Ragas context precision) over verdicts in rank order::

        AP = sum_k (precision@k * v_k) / (number of useful chunks)      (0 when none is useful)

    ``v_k`` may be a probability (the local judge); then the same formula is its expectation-like
    soft version.
    """
    vals = [float(v) for v in useful]
    total = sum(vals)
    if total <= 0:
        return 0.0
    acc, hits = 0.0, 0.0
    for k, v in enumerate(vals, 1):
        hits += v
        acc += (hits / k) * v
    return min(max(acc / total, 0.0), 1.0)
