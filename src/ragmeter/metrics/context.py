"""Context metrics (Ragas): relevance, precision, utilization and recall of the retrieved contexts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.metrics._common import (
    check_lang,
    checked_contexts,
    quote_list,
    short,
    support_probability,
)
from ragmeter.metrics._shared import (
    average_precision,
    claim_sets,
    context_analysis,
    context_verdicts,
    sample_lang,
)
from ragmeter.metrics.base import Metric, Score, register_metric

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge, Verdict


class _LangMetric(Metric):
    def __init__(self, lang: str = "auto") -> None:
        self.lang = check_lang(lang)

    def params(self) -> dict[str, Any]:
        return {"lang": self.lang}


def _count_mismatch(step: str, got: int, want: int, what: str, lang: str) -> Score:
    return Score.invalid(
        "JudgeOutputError",
        f"{step}: the judge returned {got} results for {want} {what}",
        details={"lang": lang},
    )


@register_metric("context_relevance")
class ContextRelevance(_LangMetric):
    """Share of the context sentences needed to answer the question (Ragas paper, Es et al. 2023).

    Inputs: ``question``, ``contexts``. Each context is split into sentences
    (:func:`ragmeter.text.split_sentences`, which handles 。！？；… and mixed text)::

        context_relevance = sum over all sentences of rate(s) / |sentences|

    where ``rate(s)`` is 1.0 / 0.0 from an LLM judge (is the sentence needed to answer the
    question) or a probability from the local judge.

    Judge calls: 1 per sample whatever the number of contexts -- ``rate_sentences`` over all
    sentences of all contexts, numbered. With an LLM judge the ratings come from the sample's shared
    ``check_contexts`` call when it has an answer and a reference (after the shared claim
    extraction), or from ``analyse_contexts`` (shared with context precision) with a reference only.

    Invalid: empty question or no non-empty context (``EmptyInput``); a reply with a sentence
    number out of range, after one repair round (``JudgeOutputError``, raw reply kept).
    """

    name = "context_relevance"
    requires = ("question", "contexts")
    steps = ("rate_sentences",)

    async def score(self, sample: Sample, judge: Judge) -> Score:
        contexts, bad = checked_contexts(sample, "question")
        if bad is not None:
            return bad
        lang = sample_lang(self.lang, sample)
        _, ratings = await context_analysis(judge, sample, contexts, lang, sentences=True)
        assert ratings is not None
        from ragmeter.metrics._shared import context_sentences

        groups = context_sentences(contexts)
        if [len(r) for r in ratings] != [len(g) for g in groups]:
            return _count_mismatch(
                "rate_sentences", sum(map(len, ratings)), sum(map(len, groups)), "sentences", lang
            )
        flat = [
            (s, float(v)) for g, r in zip(groups, ratings, strict=True) for s, v in zip(g, r, strict=True)
        ]
        n = len(flat)
        total = sum(v for _, v in flat)
        needed = [s for s, v in flat if v >= 0.5]
        value = min(max(total / n, 0.0), 1.0)
        reason = f"{total:.3g} of {n} context sentences needed to answer the question"
        if needed:
            reason += f": {quote_list(needed, limit=2)}"
        return Score(
            value=value,
            reason=reason,
            details={
                "n_sentences": n,
                "needed": total,
                "contexts": [
                    [{"sentence": s, "rating": v} for s, v in zip(g, r, strict=True)]
                    for g, r in zip(groups, ratings, strict=True)
                ],
                "lang": lang,
            },
        )


def _ap_score(verdicts: Sequence[Verdict], contexts: Sequence[str], target_name: str, lang: str) -> Score:
    useful = [support_probability(v) for v in verdicts]
    value = average_precision(useful)
    n_useful = sum(1 for v in verdicts if v.supported)
    ranks = [i for i, v in enumerate(verdicts, 1) if v.supported]
    reason = (
        f"{n_useful} of {len(verdicts)} contexts useful for the {target_name}"
        + (f" (at rank {', '.join(map(str, ranks))})" if ranks else "")
        + f"; average precision {value:.3f}"
    )
    return Score(
        value=value,
        reason=reason,
        details={
            "contexts": [
                {
                    "rank": i,
                    "context": short(c, 120),
                    "useful": v.supported,
                    "reason": v.reason,
                    "evidence": v.evidence,
                }
                for i, (c, v) in enumerate(zip(contexts, verdicts, strict=True), 1)
            ],
            "n_useful": n_useful,
            "lang": lang,
        },
    )


@register_metric("context_precision")
class ContextPrecision(_LangMetric):
    """Are the useful contexts ranked first? (Ragas ``LLMContextPrecisionWithReference``.)

    Inputs: ``question``, ``contexts`` (in rank order), ``reference``. Each context gets a verdict
    ``v_k`` (1 when it was useful in arriving at the reference, else 0)::

        context_precision = sum_k (precision@k * v_k) / sum_k v_k     (0 when no context is useful)

    Judge calls: 1 per sample whatever the number of contexts -- ``rate_chunks`` for all
    contexts at once (with an LLM judge the shared ``check_contexts`` call on a sample with an
    answer, after the shared claim extraction; ``analyse_contexts``, shared with context
    relevance, on one without).

    Invalid: empty question, reference or contexts (``EmptyInput``); a reply without a verdict for
    every context, after one repair round (``JudgeOutputError``).
    """

    name = "context_precision"
    requires = ("question", "contexts", "reference")
    steps = ("rate_chunks",)

    async def score(self, sample: Sample, judge: Judge) -> Score:
        contexts, bad = checked_contexts(sample, "question", "reference")
        if bad is not None:
            return bad
        lang = sample_lang(self.lang, sample)
        verdicts, _ = await context_analysis(judge, sample, contexts, lang, chunks=True)
        assert verdicts is not None
        if len(verdicts) != len(contexts):
            return _count_mismatch("rate_chunks", len(verdicts), len(contexts), "contexts", lang)
        return _ap_score(verdicts, contexts, "reference", lang)


@register_metric("context_utilization")
class ContextUtilization(_LangMetric):
    """Context precision judged against the answer instead of a reference (Ragas
    ``LLMContextPrecisionWithoutReference``): were the contexts the answer used ranked first?

    Inputs: ``question``, ``contexts``, ``answer``. Same formula as context precision, with
    ``v_k`` = "context k was useful in arriving at the answer". Judge calls: 1 --
    ``rate_chunks(question, contexts, answer)``. Invalid cases as context precision.
    """

    name = "context_utilization"
    requires = ("question", "contexts", "answer")
    steps = ("rate_chunks",)

    async def score(self, sample: Sample, judge: Judge) -> Score:
        contexts, bad = checked_contexts(sample, "question", "answer")
        if bad is not None:
            return bad
        lang = sample_lang(self.lang, sample)
        assert sample.answer is not None
        rate_chunks: Any = getattr(judge, "rate_chunks")  # noqa: B009  (not in the Judge protocol)
        verdicts = await rate_chunks(sample.question.strip(), contexts, sample.answer.strip(), lang=lang)
        if len(verdicts) != len(contexts):
            return _count_mismatch("rate_chunks", len(verdicts), len(contexts), "contexts", lang)
        return _ap_score(verdicts, contexts, "answer", lang)


@register_metric("context_recall")
class ContextRecall(_LangMetric):
    """Share of the reference's claims that the retrieved contexts support (Ragas context recall).

    Inputs: ``contexts``, ``reference`` (``question`` helps claim extraction when present)::

        context_recall = |reference claims supported by the contexts| / |reference claims|

    Judge calls: 2 per sample -- ``extract_claims(reference)`` and ``verify_claims(claims,
    contexts)``. With an LLM judge and a sample that has an answer, both calls are shared with
    faithfulness (one extraction of answer and reference claims, one ``check_contexts`` call that
    verifies both sets and also serves context precision and relevance).

    Invalid: empty reference or contexts (``EmptyInput``); no claim extracted from the reference
    (``NoClaims``); a verdict missing for a claim (``JudgeOutputError``).
    """

    name = "context_recall"
    requires = ("contexts", "reference")
    steps = ("extract_claims", "verify_claims")

    async def score(self, sample: Sample, judge: Judge) -> Score:
        contexts, bad = checked_contexts(sample, "reference")
        if bad is not None:
            return bad
        lang = sample_lang(self.lang, sample)
        sets = await claim_sets(judge, sample, lang, reference=True)
        claims = sets.reference or []
        if not claims:
            return Score.invalid(
                "NoClaims",
                "no claims could be extracted from the reference, so recall cannot be measured",
                details={"n_claims": 0, "lang": lang},
            )
        verdicts = (await context_verdicts(judge, sample, sets, contexts, lang, reference=True))[1] or []
        if len(verdicts) != len(claims):
            return _count_mismatch("verify_claims", len(verdicts), len(claims), "reference claims", lang)
        missing = [c for c, v in zip(claims, verdicts, strict=True) if not v.supported]
        n = len(claims)
        value = sum(support_probability(v) for v in verdicts) / n  # expected share (see faithfulness)
        reason = f"{n - len(missing)} of {n} reference claims supported by the contexts"
        if missing:
            reason += f"; missing: {quote_list(missing)}"
        return Score(
            value=value,
            reason=reason,
            details={
                "claims": [
                    {
                        "claim": c,
                        **sets.hedge_fields(c),
                        "supported": v.supported,
                        "reason": v.reason,
                        "evidence": v.evidence,
                    }
                    for c, v in zip(claims, verdicts, strict=True)
                ],
                "n_claims": n,
                "n_supported": n - len(missing),
                "lang": lang,
            },
        )
