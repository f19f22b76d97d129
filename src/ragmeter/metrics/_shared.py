"""Steps that several metrics share on one sample, asked so that they cost one call.

Metrics that need the same intermediate result call these helpers with the same arguments; the
LLM judge's memo (:mod:`ragmeter.judges.memo`) then answers the second asker from the first call.
When the judge offers combined steps (``judge.combine_steps``, the LLM judge), the helpers ask for
everything the sample allows in one call, so the sharing does not depend on which metrics run:

- :func:`claim_sets`: claims of the answer AND of the reference in one ``extract_claims_many``
  call (faithfulness, context recall, factual correctness, answer correctness, noise sensitivity).
- :func:`context_verdicts` and :func:`context_analysis`: ONE ``check_contexts`` call per sample
  sends the contexts once and returns the verdicts on the answer's and the reference's claims
  (faithfulness, context recall), the usefulness of each chunk for the reference (context
  precision) and the sentences the question needs (context relevance). Each verdict is about one
  claim against all contexts, exactly as in separate calls, so the formulas do not change. Both
  helpers ask the same call (the claims first, through :func:`claim_sets`), so the memo answers
  the second asker whichever metrics run. This is the route for samples with an answer AND a
  reference (what the core metrics read).
- :func:`context_analysis` on a sample with a reference but no answer: per-chunk usefulness and
  per-sentence need in one ``analyse_contexts`` call (context precision, context relevance).

So the five core metrics cost 3 calls per sample (claims, contexts, questions for answer
relevance). On a full sample a single context metric pays for the claim extraction as well (2
calls instead of 1); ``LLMJudge(combine=False)`` asks every metric's own steps instead.
Judges without combined steps (the local judge) get the plain steps, one per need.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.dataset.sample import Sample
from ragmeter.judges.base import Verdict
from ragmeter.metrics._common import blank, clean_texts
from ragmeter.statements import split_hedge, states_nothing
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
    #: the claims that were hedged, each with its text as the judge wrote it (hedge included)
    hedged: dict[str, str] = field(default_factory=dict)

    def hedge_fields(self, claim: str) -> dict[str, Any]:
        """``hedged`` (and ``as_written`` when it was) for a claim's row in a metric's details."""
        written = self.hedged.get(claim)
        return {"hedged": False} if written is None else {"hedged": True, "as_written": written}


def _bare_claims(claims: Sequence[str] | None, hedged: dict[str, str]) -> list[str]:
    """Claims without their hedges (:func:`ragmeter.statements.split_hedge`), the same rule for
    every judge: "I'm not sure, but it was completed in 1889" is verified as "It was completed in
    1889" and recorded in ``hedged``; a claim that is only a hedge ("I think so", "Maybe not") is
    none (:func:`ragmeter.statements.states_nothing`)."""
    out: list[str] = []
    for claim in clean_texts(claims):
        h = split_hedge(claim)
        if not h.hedged:
            out.append(claim)
        elif not states_nothing(claim):
            hedged.setdefault(h.text, claim)
            out.append(h.text)
    return out


async def claim_sets(
    judge: Any, sample: Sample, lang: str, *, answer: bool = False, reference: bool = False
) -> ClaimSets:
    """Claims of the answer and/or the reference (stripped, empty ones dropped, hedges taken off:
    :func:`_bare_claims`)."""
    ans = sample.answer if not blank(sample.answer) else None
    ref = sample.reference if not blank(sample.reference) else None
    q = question_of(sample)
    hedged: dict[str, str] = {}
    if combines(judge) and ans is not None and ref is not None:
        both = await judge.extract_claims_many([ans, ref], question=q, lang=lang)
        return ClaimSets(_bare_claims(both[0], hedged), _bare_claims(both[1], hedged), hedged)
    want = [t if flag else None for t, flag in ((ans, answer), (ref, reference))]
    found = await asyncio.gather(
        *(judge.extract_claims(t, question=q, lang=lang) for t in want if t is not None)
    )
    it = iter(found)
    out = [_bare_claims(next(it), hedged) if t is not None else None for t in want]
    return ClaimSets(out[0], out[1], hedged)


async def _check(judge: Any, sample: Sample, contexts: Sequence[str], lang: str) -> Any:
    """The sample's one ``check_contexts`` call: all claims of answer and reference, the reference
    as the chunks' target, the question for the sentences (memoised: every metric asks the same)."""
    sets = await claim_sets(judge, sample, lang, answer=True, reference=True)
    a = sets.answer or []
    r = sets.reference or []
    ref = sample.reference.strip() if sample.reference is not None and not blank(sample.reference) else None
    return len(a), await judge.check_contexts(question_of(sample), contexts, [*a, *r], ref, lang=lang)


def _checks(judge: Any, sample: Sample) -> bool:
    """Whether the sample's contexts go to the judge in one ``check_contexts`` call: a judge with
    combined steps and a sample with both an answer and a reference (everything the core metrics
    read). Other samples get the steps their metrics ask (see the module docstring)."""
    return (
        combines(judge)
        and callable(getattr(judge, "check_contexts", None))
        and not blank(sample.answer)
        and not blank(sample.reference)
    )


async def context_verdicts(
    judge: Any,
    sample: Sample,
    sets: ClaimSets,
    contexts: Sequence[str],
    lang: str,
    *,
    answer: bool = False,
    reference: bool = False,
) -> tuple[list[Verdict] | None, list[Verdict] | None]:
    """Verdicts of the answer's and/or the reference's claims (``sets``) against ``contexts``."""
    if _checks(judge, sample):
        n_answer, result = await _check(judge, sample, contexts, lang)
        verdicts = list(result.verdicts)
        return (verdicts[:n_answer] if answer else None), (verdicts[n_answer:] if reference else None)
    a = sets.answer or []
    r = sets.reference or []
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
    if chunks and ref is None:
        raise ValueError("context_analysis(chunks=True) needs a reference")
    if _checks(judge, sample):
        _, result = await _check(judge, sample, contexts, lang)
        verdicts = list(result.chunks) if chunks and result.chunks is not None else None
        ratings = [list(r) for r in result.ratings] if sentences and result.ratings is not None else None
        return verdicts, ratings
    analyse = getattr(judge, "analyse_contexts", None)
    if combines(judge) and callable(analyse) and ref is not None:
        both, per_chunk = await analyse(question, contexts, ref, lang=lang)
        return list(both), [list(r) for r in per_chunk]
    verdicts = None
    ratings = None
    if chunks:
        assert ref is not None
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
