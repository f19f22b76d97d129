"""LlamaIndex's judge evaluators as metrics: correctness, relevancy, guideline adherence, pairwise."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.judges.base import Rubric
from ragmeter.metrics._common import blank, check_lang, checked_contexts, empty_input
from ragmeter.metrics._shared import sample_lang
from ragmeter.metrics.base import Metric, Score, register_metric

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge

CORRECTNESS_RUBRIC = Rubric(
    name="correctness",
    criteria=(
        "Judge the relevance and correctness of the generated answer to the user query, with respect to "
        "the reference answer when one is given. Output one holistic score."
    ),
    scale=(1.0, 5.0),
    levels={
        "1": "the answer is not relevant to the query",
        "2-3": "the answer is relevant but contains mistakes",
        "4-5": "the answer is relevant and fully correct",
    },
    inputs=("question", "answer", "reference"),
    passing=4.0,
)

RELEVANCY_RUBRIC = Rubric(
    name="relevancy",
    criteria=(
        "Is the response to the query in line with the context information provided? Score 1 (YES) if the "
        "response answers the query and is in line with the contexts, otherwise 0 (NO)."
    ),
    scale=(0.0, 1.0),
    levels={"1": "YES: in line with the contexts and answers the query", "0": "NO"},
    inputs=("question", "contexts", "answer"),
    passing=1.0,
)

#: LlamaIndex's DEFAULT_GUIDELINES
DEFAULT_GUIDELINES: tuple[str, ...] = (
    "The response should fully answer the query.",
    "The response should avoid being vague or ambiguous.",
    "The response should be specific and use statistics or numbers when possible.",
)


def render_contexts(contexts: Sequence[str]) -> str:
    return "\n".join(f"[{i}] {' '.join(c.split())}" for i, c in enumerate(contexts, 1))


class _Graded(Metric):
    def __init__(self, lang: str = "auto") -> None:
        self.lang = check_lang(lang)

    def params(self) -> dict[str, Any]:
        return {"lang": self.lang}


@register_metric("correctness")
class Correctness(_Graded):
    """LlamaIndex ``CorrectnessEvaluator``: a 1-5 score of relevance and correctness, with feedback.

    Inputs: ``question``, ``answer`` (and ``reference`` when present). The value is the judge's
    score on LlamaIndex's 1-5 scale (not normalised), ``threshold`` 4.0 (LlamaIndex's
    ``score_threshold``): ``details["passing"]`` is ``score >= 4``. Levels as LlamaIndex: 1 not
    relevant; 2-3 relevant with mistakes; 4-5 relevant and fully correct.

    Judge calls: 1 -- ``grade``. Invalid: empty question or answer; a score outside 1..5 or an
    unparseable reply after one repair round (``JudgeOutputError``, raw reply kept).
    """

    name = "correctness"
    requires = ("question", "answer")
    steps = ("grade",)
    threshold = 4.0

    async def score(self, sample: Sample, judge: Judge) -> Score:
        for f in ("question", "answer"):
            if blank(getattr(sample, f)):
                return empty_input(f)
        assert sample.answer is not None
        inputs = {"question": sample.question.strip(), "answer": sample.answer.strip()}
        if not blank(sample.reference):
            assert sample.reference is not None
            inputs["reference"] = sample.reference.strip()
        lang = sample_lang(self.lang, sample)
        g = await judge.grade(CORRECTNESS_RUBRIC, inputs, lang=lang)  # type: ignore[attr-defined]
        passing = g.score >= 4.0
        return Score(
            value=g.score,
            reason=g.reason or f"score {g.score:g} of 5",
            details={"score": g.score, "passing": passing, "feedback": g.reason, "lang": lang},
        )


@register_metric("relevancy")
class Relevancy(_Graded):
    """LlamaIndex ``RelevancyEvaluator``: is the response, with its contexts, in line with the query?

    Inputs: ``question``, ``contexts``, ``answer``. The judge answers YES (1) or NO (0) with
    feedback; value 1.0 or 0.0 (a fractional score is rounded at 0.5 and kept raw in details),
    ``threshold`` 1.0. Judge calls: 1 -- ``grade``. Invalid: empty inputs, unparseable reply.
    """

    name = "relevancy"
    requires = ("question", "contexts", "answer")
    steps = ("grade",)
    threshold = 1.0

    async def score(self, sample: Sample, judge: Judge) -> Score:
        contexts, bad = checked_contexts(sample, "question", "answer")
        if bad is not None:
            return bad
        assert sample.answer is not None
        lang = sample_lang(self.lang, sample)
        inputs = {
            "question": sample.question.strip(),
            "contexts": render_contexts(contexts),
            "answer": sample.answer.strip(),
        }
        g = await judge.grade(RELEVANCY_RUBRIC, inputs, lang=lang)  # type: ignore[attr-defined]
        value = 1.0 if g.score >= 0.5 else 0.0
        return Score(
            value=value,
            reason=("YES" if value else "NO") + (f": {g.reason}" if g.reason else ""),
            details={"passing": bool(value), "raw_score": g.score, "feedback": g.reason, "lang": lang},
        )


@register_metric("guideline_adherence")
class GuidelineAdherence(_Graded):
    """LlamaIndex ``GuidelineEvaluator``, one verdict per guideline.

    Inputs: ``question``, ``answer``. ``guidelines``: a list of guidelines (default: LlamaIndex's
    three). Each guideline is graded pass (1) / fail (0) with feedback::

        guideline_adherence = |guidelines passed| / |guidelines|

    ``threshold`` 1.0 (all pass, as LlamaIndex's single verdict). Judge calls: one ``grade`` per
    guideline (asked concurrently). Invalid: empty inputs, any unparseable reply.
    """

    name = "guideline_adherence"
    requires = ("question", "answer")
    steps = ("grade",)
    threshold = 1.0

    def __init__(self, guidelines: Sequence[str] | str | None = None, lang: str = "auto") -> None:
        super().__init__(lang)
        if isinstance(guidelines, str):
            guidelines = [g.strip() for g in guidelines.splitlines()]
        items = tuple(g.strip() for g in (guidelines or DEFAULT_GUIDELINES) if g and g.strip())
        if not items:
            raise ConfigError("guideline_adherence: give at least one guideline")
        self.guidelines = items

    def params(self) -> dict[str, Any]:
        return {"guidelines": list(self.guidelines), "lang": self.lang}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        for f in ("question", "answer"):
            if blank(getattr(sample, f)):
                return empty_input(f)
        assert sample.answer is not None
        lang = sample_lang(self.lang, sample)
        inputs = {"question": sample.question.strip(), "answer": sample.answer.strip()}
        rubrics = [
            Rubric(
                name=f"guideline:{g}",
                criteria=f"Does the response follow this guideline? Guideline: {g}",
                scale=(0.0, 1.0),
                levels={"1": "passes: the response follows the guideline", "0": "fails"},
                inputs=("question", "answer"),
                passing=1.0,
            )
            for g in self.guidelines
        ]
        grades = await asyncio.gather(*(judge.grade(r, inputs, lang=lang) for r in rubrics))  # type: ignore[attr-defined]
        rows = [
            {"guideline": g, "passing": gr.score >= 0.5, "feedback": gr.reason}
            for g, gr in zip(self.guidelines, grades, strict=True)
        ]
        n_pass = sum(1 for r in rows if r["passing"])
        failed = [str(r["guideline"]) for r in rows if not r["passing"]]
        reason = f"{n_pass} of {len(rows)} guidelines followed"
        if failed:
            reason += "; not followed: " + "; ".join(failed[:3])
        return Score(
            value=n_pass / len(rows),
            reason=reason,
            details={"guidelines": rows, "passing": n_pass == len(rows), "lang": lang},
        )


@register_metric("pairwise")
class Pairwise(_Graded):
    """LlamaIndex ``PairwiseComparisonEvaluator``: is the answer better than a second answer?

    Inputs: ``question``, ``answer``, and the second answer from ``sample.metadata[answer_b_field]``
    (default field ``answer_b``) or the ``answer_b`` parameter; ``reference`` is shown when present.
    The judge is asked twice, with the answers in both orders. Value: 1.0 answer wins, 0.0 the
    second answer wins, 0.5 tie. When the two verdicts disagree (the winner flips with the order),
    the result is a tie and ``details["position_bias"]`` is True.

    Judge calls: 2 -- ``compare`` in both orders (asked concurrently). Invalid: empty inputs, no
    second answer, an unparseable reply.
    """

    name = "pairwise"
    requires = ("question", "answer")
    steps = ("compare",)
    threshold = 0.5

    def __init__(
        self,
        answer_b: str | None = None,
        answer_b_field: str = "answer_b",
        criteria: str | None = None,
        lang: str = "auto",
    ) -> None:
        super().__init__(lang)
        self.answer_b = answer_b
        self.answer_b_field = answer_b_field
        self.criteria = criteria

    def params(self) -> dict[str, Any]:
        return {
            "answer_b": self.answer_b,
            "answer_b_field": self.answer_b_field,
            "criteria": self.criteria,
            "lang": self.lang,
        }

    async def score(self, sample: Sample, judge: Judge) -> Score:
        for f in ("question", "answer"):
            if blank(getattr(sample, f)):
                return empty_input(f)
        other = self.answer_b if self.answer_b is not None else sample.metadata.get(self.answer_b_field)
        if not isinstance(other, str) or not other.strip():
            return Score.invalid(
                "EmptyInput",
                f"no second answer: set metadata field {self.answer_b_field!r} or the answer_b parameter",
            )
        assert sample.answer is not None
        lang = sample_lang(self.lang, sample)
        q, a, b = sample.question.strip(), sample.answer.strip(), other.strip()
        ref = None if blank(sample.reference) else sample.reference
        kw: dict[str, Any] = {"reference": ref, "criteria": self.criteria, "lang": lang}
        first, second = await asyncio.gather(
            judge.compare(q, a, b, **kw),  # type: ignore[attr-defined]
            judge.compare(q, b, a, **kw),  # type: ignore[attr-defined]
        )
        v1 = {"a": 1.0, "b": 0.0, "tie": 0.5}[first.winner]
        v2 = {"a": 0.0, "b": 1.0, "tie": 0.5}[second.winner]  # answers swapped
        bias = v1 != v2 and not math.isclose(v1, v2)
        value = 0.5 if bias else v1
        verdict = {1.0: "the answer wins", 0.0: "the second answer wins", 0.5: "tie"}[value]
        reason = verdict + (" (the verdict flipped with the order: position bias)" if bias else "")
        return Score(
            value=value,
            reason=reason,
            details={
                "position_bias": bias,
                "order_ab": {"winner": first.winner, "reason": first.reason},
                "order_ba": {"winner": second.winner, "reason": second.reason},
                "lang": lang,
            },
        )
