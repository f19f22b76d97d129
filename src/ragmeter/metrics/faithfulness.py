"""Faithfulness (Ragas paper, Es et al. 2023, section 3): is the answer grounded in the contexts?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragmeter.metrics._common import (
    check_lang,
    checked_contexts,
    quote_list,
    support_probability,
)
from ragmeter.metrics._shared import claim_sets, context_verdicts, sample_lang
from ragmeter.metrics.base import Metric, Score, register_metric

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge


@register_metric("faithfulness")
class Faithfulness(Metric):
    """Share of the answer's claims that the retrieved contexts support.

    Inputs: ``answer`` and ``contexts`` (``question`` is passed to claim extraction when present,
    to resolve pronouns and ellipsis in the answer).

    Algorithm (Ragas): split the answer into atomic, self-contained claims, then decide for each
    claim whether it can be inferred from the contexts::

        faithfulness = |supported claims| / |claims|

    counted as the expected number of supported claims, ``sum_i P(claim_i supported)``, where
    ``P`` is the verdict's confidence when the judge gives one (the local judge) and 1/0 otherwise
    (an LLM judge: then this is exactly the count above).

    Judge calls: 2 per sample whatever the number of contexts or claims --
    ``extract_claims(answer, question=, lang=)`` once, then ``verify_claims(claims, contexts,
    lang=)`` once for all claims against all contexts. With an LLM judge and a sample that has a
    reference, both calls are shared with context recall (and the extraction with factual
    correctness): the reference's claims are extracted in the same call, and both claim sets are
    verified in the one ``check_contexts`` call that also serves context precision and relevance
    (:mod:`ragmeter.metrics._shared`); the score reads the answer's verdicts only.

    Edge cases: an answer from which no claim can be extracted ("Hello!", "I don't know") is an
    invalid score with kind ``NoClaims`` (Ragas returns NaN; a number would be a guess: 1.0 calls
    an evasive answer faithful, 0.0 calls it a hallucination). An empty (whitespace-only) answer
    or no non-empty context is invalid (``EmptyInput``). A judge that returns a different number
    of verdicts than claims gives an invalid score (``JudgeOutputError``). Judge errors propagate;
    the runner records them as invalid scores.

    ``lang``: ``"auto"`` (detected from question, answer and reference), ``"en"`` or ``"zh"``; chooses the
    judge's prompt language.
    """

    name = "faithfulness"
    requires = ("answer", "contexts")
    steps = ("extract_claims", "verify_claims")

    def __init__(self, lang: str = "auto") -> None:
        self.lang = check_lang(lang)

    def params(self) -> dict[str, Any]:
        return {"lang": self.lang}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        contexts, bad = checked_contexts(sample, "answer")
        if bad is not None:
            return bad
        answer = sample.answer
        assert answer is not None
        lang = sample_lang(self.lang, sample)

        sets = await claim_sets(judge, sample, lang, answer=True)
        claims = sets.answer or []
        if not claims:
            return Score.invalid(
                "NoClaims",
                "no claims could be extracted from the answer, so there is nothing to verify "
                "(an empty, evasive or purely conversational answer)",
                details={"n_claims": 0, "lang": lang},
            )

        verdicts = (await context_verdicts(judge, sample, sets, contexts, lang, answer=True))[0] or []
        if len(verdicts) != len(claims):
            return Score.invalid(
                "JudgeOutputError",
                f"the judge returned {len(verdicts)} verdicts for {len(claims)} claims",
                details={"claims": claims, "n_claims": len(claims), "lang": lang},
            )

        rows = [
            {
                "claim": claim,
                **sets.hedge_fields(claim),
                "supported": bool(v.supported),
                "reason": v.reason,
                "evidence": v.evidence,
                "confidence": v.confidence,
            }
            for claim, v in zip(claims, verdicts, strict=True)
        ]
        n = len(rows)
        unsupported = [c for c, v in zip(claims, verdicts, strict=True) if not v.supported]
        n_supported = n - len(unsupported)
        if unsupported:
            reason = (
                f"{n_supported} of {n} claims supported by the contexts; "
                f"unsupported: {quote_list(unsupported)}"
            )
        else:
            reason = f"all {n} claims supported by the contexts"
        value = sum(support_probability(v) for v in verdicts) / n
        if abs(value - n_supported / n) >= 0.005:  # a judge that gives its confidence (the local one)
            reason += f" (expected share {value:.2f}, from the judge's confidence in each verdict)"
        return Score(
            value=value,
            reason=reason,
            details={"claims": rows, "n_claims": n, "n_supported": n_supported, "lang": lang},
        )
