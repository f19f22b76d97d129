"""Claim-level correctness against a reference (Ragas): factual correctness, answer correctness."""

from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.metrics._common import (
    blank,
    check_lang,
    cosine_rows,
    empty_input,
    quote_list,
    support_probability,
)
from ragmeter.metrics._shared import claim_sets, question_of, sample_lang
from ragmeter.metrics.base import Metric, Score, register_metric
from ragmeter.statements import YES_NO_RE, polarity, stated_answer

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge

MODES = ("f1", "precision", "recall")


def _fbeta(p: float, r: float, beta: float) -> float:
    if p + r == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * p * r / (b2 * p + r)


async def factual_parts(
    judge: Judge, sample: Sample, lang: str, mode: str, beta: float
) -> tuple[Score, dict[str, float] | None]:
    """The factual correctness Score and its parts (precision, recall, f1) when valid."""
    assert sample.answer is not None and sample.reference is not None
    yes_no = _yes_no_parts(sample, mode)
    if yes_no is not None:
        return yes_no
    sets = await claim_sets(judge, sample, lang, answer=True, reference=mode != "precision")
    a_claims = sets.answer or []
    r_claims = sets.reference or []
    if not a_claims:
        return Score.invalid(
            "NoClaims",
            "no claims could be extracted from the answer, so its correctness cannot be measured",
            details={"n_answer_claims": 0, "lang": lang},
        ), None
    if mode != "precision" and not r_claims:
        return Score.invalid(
            "NoClaims",
            "no claims could be extracted from the reference, so recall cannot be measured",
            details={"n_reference_claims": 0, "lang": lang},
        ), None
    # a short answer ("Canberra.", "1989", "北京。") states its fact only with the question: each
    # side is read as the statement it makes together with the question (short_answer_claim)
    q = question_of(sample)
    answer = stated_answer(sample.answer, q, lang) or sample.answer.strip()
    reference = stated_answer(sample.reference, q, lang) or sample.reference.strip()
    jobs = [judge.verify_claims(a_claims, [reference], lang=lang)]
    if mode != "precision":
        jobs.append(judge.verify_claims(r_claims, [answer], lang=lang))
    found = await asyncio.gather(*jobs)
    a_verdicts = found[0]
    r_verdicts = found[1] if mode != "precision" else []
    if mode == "precision":
        r_claims = []  # extracted (shared with other metrics) but not used in precision mode
    if len(a_verdicts) != len(a_claims) or (mode != "precision" and len(r_verdicts) != len(r_claims)):
        return Score.invalid(
            "JudgeOutputError", "the judge returned a verdict count that differs from the claims"
        ), None
    # Expected counts: a verdict's confidence when the judge gives one (see support_probability).
    tp = sum(support_probability(v) for v in a_verdicts)
    fp = len(a_verdicts) - tp
    fn = sum(1.0 - support_probability(v) for v in r_verdicts)
    precision = tp / (tp + fp)
    recall = tp / (tp + fn) if (tp + fn) else 0.0
    f = _fbeta(precision, recall, beta)
    value = {"f1": f, "precision": precision, "recall": recall}[mode]
    unsupported = [c for c, v in zip(a_claims, a_verdicts, strict=True) if not v.supported]
    missing = [c for c, v in zip(r_claims, r_verdicts, strict=True) if not v.supported]
    n_tp = sum(1 for v in a_verdicts if v.supported)
    reason = f"{mode} {value:.3f}: {n_tp} of {len(a_claims)} answer claims supported by the reference"
    if mode != "precision":
        reason += f", {len(r_claims) - fn:.3g} of {len(r_claims)} reference claims found in the answer"
    if unsupported:
        reason += f"; unsupported: {quote_list(unsupported, limit=2)}"
    if missing and mode != "precision":
        reason += f"; missing: {quote_list(missing, limit=2)}"
    details: dict[str, Any] = {
        "mode": mode,
        "tp": tp,
        "fp": fp,
        "fn": fn if mode != "precision" else None,
        "precision": precision,
        "recall": recall if mode != "precision" else None,
        "f_beta": f if mode != "precision" else None,
        "beta": beta,
        "answer_claims": [
            {"claim": c, **sets.hedge_fields(c), "in_reference": v.supported}
            for c, v in zip(a_claims, a_verdicts, strict=True)
        ],
        "reference_claims": [
            {"claim": c, **sets.hedge_fields(c), "in_answer": v.supported}
            for c, v in zip(r_claims, r_verdicts, strict=True)
        ],
        "lang": lang,
    }
    return Score(value=value, reason=reason, details=details), {
        "precision": precision,
        "recall": recall,
        "f1": f,
    }


def _yes_no_parts(sample: Sample, mode: str) -> tuple[Score, dict[str, float] | None] | None:
    """A bare yes / no reference to a question ("No." for "Can the Great Wall be seen from the
    Moon?"): it states nothing without the question, so no claim can be checked against it; the
    answer is read for what it says to the question (:func:`ragmeter.statements.polarity`), and
    precision, recall and F1 are all 1.0 when it says the same, 0.0 when it says the opposite.
    None (the claim reading) when it is not such a pair or the answer says neither."""
    q = question_of(sample)
    if q is None or not YES_NO_RE.match(str(sample.reference)):
        return None
    expected = polarity(str(sample.reference))
    said = polarity(str(sample.answer), q)
    if expected is None or said is None:
        return None
    value = 1.0 if said == expected else 0.0
    words = {True: "yes", False: "no"}
    reason = (
        f"{mode} {value:.3f}: the reference answers the yes/no question \"{words[expected]}\"; "
        f"the answer says \"{words[said]}\""
    )
    details = {"mode": mode, "yes_no": {"reference": words[expected], "answer": words[said]}}
    return Score(value=value, reason=reason, details=details), {"precision": value, "recall": value, "f1": value}


def _check_mode(mode: str, beta: float, name: str) -> None:
    if mode not in MODES:
        raise ConfigError(f"{name}: mode must be one of {', '.join(MODES)}, not {mode!r}")
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not math.isfinite(beta) or beta <= 0:
        raise ConfigError(f"{name}: beta must be a positive number, not {beta!r}")


@register_metric("factual_correctness")
class FactualCorrectness(Metric):
    """Claim-level precision / recall / F-beta of the answer against the reference (Ragas).

    Inputs: ``answer``, ``reference``. The answer and the reference are each split into claims;
    the answer's claims are verified against the reference, the reference's against the answer::

        TP = answer claims supported by the reference      FP = answer claims not supported
        FN = reference claims not supported by the answer
        precision = TP / (TP + FP)      recall = TP / (TP + FN)
        f1 (F-beta) = (1 + b^2) P R / (b^2 P + R)

    (Ragas' definition, TP counted on the answer side in both ratios.) ``mode``: ``"f1"``
    (default), ``"precision"`` or ``"recall"``; ``beta`` (default 1).

    Judge calls: 3 per sample (2 in precision mode) -- the claims of answer and reference (one
    combined call with an LLM judge, shared with faithfulness and context recall), then
    ``verify_claims(answer claims, [reference])`` and ``verify_claims(reference claims, [answer])``.

    Invalid: empty answer or reference (``EmptyInput``); no claim from the answer, or (f1 and
    recall modes) from the reference (``NoClaims``); verdict count mismatch (``JudgeOutputError``).
    """

    name = "factual_correctness"
    requires = ("answer", "reference")
    steps = ("extract_claims", "verify_claims")

    def __init__(self, mode: str = "f1", beta: float = 1.0, lang: str = "auto") -> None:
        _check_mode(mode, beta, self.name)
        self.mode = mode
        self.beta = float(beta)
        self.lang = check_lang(lang)

    def params(self) -> dict[str, Any]:
        return {"mode": self.mode, "beta": self.beta, "lang": self.lang}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        for f in ("answer", "reference"):
            if blank(getattr(sample, f)):
                return empty_input(f)
        score, _ = await factual_parts(judge, sample, sample_lang(self.lang, sample), self.mode, self.beta)
        return score


@register_metric("answer_correctness")
class AnswerCorrectness(Metric):
    """Weighted factual and semantic agreement of answer and reference (Ragas answer correctness)::

        answer_correctness = w_f * factual_f1 + w_s * cos(E(answer), E(reference))

    with Ragas' default weights ``(w_f, w_s) = (0.75, 0.25)`` (``weights=`` to change; they must
    sum to a positive number and are normalised). ``factual_f1`` is :class:`FactualCorrectness`
    in f1 mode (claim-level; Ragas classifies the statements into TP/FP/FN in one prompt and uses
    ``TP / (TP + (FP + FN) / 2)`` -- ours is the same F1 computed from per-claim verdicts). The
    cosine is clipped to [0, 1].

    Inputs: ``answer``, ``reference``. Judge calls: those of factual correctness (3; the claim
    extraction shared) plus one ``embed``. Invalid whenever factual correctness is, or when the
    embedding reply is unusable.
    """

    name = "answer_correctness"
    requires = ("answer", "reference")
    steps = ("extract_claims", "verify_claims", "embed")

    def __init__(self, weights: tuple[float, float] = (0.75, 0.25), lang: str = "auto") -> None:
        w = tuple(float(x) for x in weights)
        if len(w) != 2 or any(x < 0 or not math.isfinite(x) for x in w) or sum(w) <= 0:
            raise ConfigError(
                f"answer_correctness: weights must be two non-negative numbers, not {weights!r}"
            )
        self.weights = (w[0] / sum(w), w[1] / sum(w))
        self.lang = check_lang(lang)

    def params(self) -> dict[str, Any]:
        return {"weights": list(self.weights), "lang": self.lang}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        for f in ("answer", "reference"):
            if blank(getattr(sample, f)):
                return empty_input(f)
        assert sample.answer is not None and sample.reference is not None
        lang = sample_lang(self.lang, sample)
        (factual, parts), emb = await asyncio.gather(
            factual_parts(judge, sample, lang, "f1", 1.0),
            judge.embed([sample.answer.strip(), sample.reference.strip()]),
        )
        if parts is None:
            return factual
        rows, why = cosine_rows(emb, 2)
        if rows is None:
            return Score.invalid("EmbeddingError", why)
        sim = min(max(float(rows[0] @ rows[1]), 0.0), 1.0)
        wf, ws = self.weights
        value = wf * parts["f1"] + ws * sim
        return Score(
            value=value,
            reason=f"{wf:g} x factual F1 {parts['f1']:.3f} + {ws:g} x similarity {sim:.3f}",
            details={
                **dict(factual.details),
                "factual_f1": parts["f1"],
                "similarity": sim,
                "weights": list(self.weights),
            },
        )
