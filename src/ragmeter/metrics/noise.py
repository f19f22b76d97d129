"""Noise sensitivity (Ragas): how often the answer states wrong things taken from the contexts."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.metrics._common import check_lang, checked_contexts, quote_list
from ragmeter.metrics._shared import claim_sets, sample_lang
from ragmeter.metrics.base import Metric, Score, register_metric

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge


@register_metric("noise_sensitivity")
class NoiseSensitivity(Metric):
    """Share of the answer's claims that are incorrect AND supported by a retrieved context (Ragas).

    Inputs: ``answer``, ``reference``, ``contexts``. With answer claims ``a_i``, reference claims
    ``r_j`` and contexts ``c_k``:

    - ``incorrect(a_i)``: ``a_i`` is not supported by the reference;
    - ``relevant(c_k)``: ``c_k`` supports at least one reference claim;
    - ``relevant_faithful(a_i)``: some relevant ``c_k`` supports ``a_i``;
    - ``irrelevant_faithful(a_i)``: some irrelevant ``c_k`` supports ``a_i``, and no relevant one.

    ::

        mode "relevant"   (default): mean_i [ relevant_faithful(a_i)   and incorrect(a_i) ]
        mode "irrelevant":           mean_i [ irrelevant_faithful(a_i) and incorrect(a_i) ]

    Lower is better (0 = the answer repeats no wrong statement from the contexts).

    Judge calls: k + 2 per sample for k contexts -- claims of answer and reference (one call,
    shared with faithfulness / context recall / factual correctness), one ``verify_claims`` per
    context checking answer and reference claims together, and ``verify_claims(answer claims,
    [reference])`` (shared with factual correctness). Ragas makes 2k + 3.

    Invalid: an empty input (``EmptyInput``), no claim from the answer or the reference
    (``NoClaims``), a verdict count mismatch (``JudgeOutputError``).
    """

    name = "noise_sensitivity"
    requires = ("answer", "reference", "contexts")
    steps = ("extract_claims", "verify_claims")
    higher_is_better = False

    def __init__(self, mode: str = "relevant", lang: str = "auto") -> None:
        if mode not in ("relevant", "irrelevant"):
            raise ConfigError(f"noise_sensitivity: mode must be 'relevant' or 'irrelevant', not {mode!r}")
        self.mode = mode
        self.lang = check_lang(lang)

    def params(self) -> dict[str, Any]:
        return {"mode": self.mode, "lang": self.lang}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        contexts, bad = checked_contexts(sample, "answer", "reference")
        if bad is not None:
            return bad
        assert sample.reference is not None
        lang = sample_lang(self.lang, sample)
        sets = await claim_sets(judge, sample, lang, answer=True, reference=True)
        a, r = sets.answer or [], sets.reference or []
        if not a or not r:
            which = "answer" if not a else "reference"
            return Score.invalid(
                "NoClaims", f"no claims could be extracted from the {which}", details={"lang": lang}
            )
        per_ctx, vs_ref = await asyncio.gather(
            asyncio.gather(*(judge.verify_claims([*a, *r], [c], lang=lang) for c in contexts)),
            judge.verify_claims(a, [sample.reference.strip()], lang=lang),
        )
        if len(vs_ref) != len(a) or any(len(v) != len(a) + len(r) for v in per_ctx):
            return Score.invalid(
                "JudgeOutputError", "the judge returned a verdict count that differs from the claims"
            )
        incorrect = [not v.supported for v in vs_ref]
        a_in = [[v.supported for v in vs[: len(a)]] for vs in per_ctx]  # [context][answer claim]
        relevant = [any(v.supported for v in vs[len(a) :]) for vs in per_ctx]
        rel_faithful = [any(a_in[k][i] and relevant[k] for k in range(len(contexts))) for i in range(len(a))]
        irr_faithful = [
            any(a_in[k][i] and not relevant[k] for k in range(len(contexts))) and not rel_faithful[i]
            for i in range(len(a))
        ]
        chosen = rel_faithful if self.mode == "relevant" else irr_faithful
        hits = [c for c, f, w in zip(a, chosen, incorrect, strict=True) if f and w]
        value = len(hits) / len(a)
        reason = f"{len(hits)} of {len(a)} answer claims are incorrect and come from {self.mode} contexts"
        if hits:
            reason += f": {quote_list(hits, limit=2)}"
        return Score(
            value=value,
            reason=reason,
            details={
                "mode": self.mode,
                "relevant_contexts": relevant,
                "answer_claims": [
                    {
                        "claim": c,
                        **sets.hedge_fields(c),
                        "incorrect": w,
                        "relevant_faithful": rf,
                        "irrelevant_faithful": irf,
                    }
                    for c, w, rf, irf in zip(a, incorrect, rel_faithful, irr_faithful, strict=True)
                ],
                "lang": lang,
            },
        )
