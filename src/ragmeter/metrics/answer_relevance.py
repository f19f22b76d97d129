"""Answer relevance (Ragas paper, Es et al. 2023, section 3): does the answer address the question?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.metrics._common import (
    blank,
    check_lang,
    clean_texts,
    cosine_rows,
    empty_input,
    resolve_lang,
    short,
)
from ragmeter.metrics.base import Metric, Score, register_metric

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge


@register_metric("answer_relevance")
class AnswerRelevance(Metric):
    """Mean cosine similarity between the real question and questions generated from the answer.

    Inputs: ``question`` and ``answer``.

    Algorithm (Ragas): ask the judge for ``n`` questions that the answer would answer, embed the
    real question ``q`` and the generated ``q_1..q_n``, and::

        answer_relevance = clip( (1/n) * sum_i cos(E(q), E(q_i)), 0, 1 )

    An answer that is incomplete or padded with unrelated content makes the generated questions
    drift from the real one. The mean is clipped to [0, 1] (a negative mean cosine means "not
    relevant"); per-question raw cosines are in ``details``.

    Judge calls: 2 per sample -- ``generate_questions(answer, n=, lang=)`` once (which also says
    whether the answer is noncommittal), then ``embed([question, q_1, ..., q_n])`` once.

    A judge that cannot generate questions but can ``assess_relevance`` (the local judge) answers
    with its direct assessment instead: does the answer address each information need of the
    question, is it evasive, is it padded (``details["method"] = "assess_relevance"``, 1 step).

    Edge cases: a noncommittal (evasive) answer ("I don't know") scores 0.0 with reason
    "noncommittal answer" and ``details["noncommittal"] = True``, and no embedding call is made
    (Ragas multiplies the mean by 0 in that case). No question generated, an empty question or
    answer, or an unusable embedding reply (wrong shape, zero vector, NaN) is an invalid score.
    Judge errors propagate; the runner records them as invalid scores.
    """

    name = "answer_relevance"
    requires = ("question", "answer")
    steps = ("generate_questions", "embed")

    def __init__(self, n: int = 3, lang: str = "auto") -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"answer_relevance: n must be a positive integer, not {n!r}")
        self.n = n
        self.lang = check_lang(lang)

    def params(self) -> dict[str, Any]:
        return {"n": self.n, "lang": self.lang}

    @staticmethod
    def _generates(judge: Any) -> bool:
        return bool(judge.supports("generate_questions") and judge.supports("embed"))

    def missing_steps(self, judge: Any) -> list[str]:
        if self._generates(judge) or judge.supports("assess_relevance"):
            return []
        return [s for s in self.steps if not judge.supports(s)]

    async def score(self, sample: Sample, judge: Judge) -> Score:
        question = sample.question
        answer = sample.answer
        if blank(question):
            return empty_input("question")
        if answer is None or blank(answer):
            return empty_input("answer")
        lang = resolve_lang(self.lang, answer, question)
        if not self._generates(judge):
            return await self._assessed(judge, question, answer, lang)

        gen = await judge.generate_questions(answer, n=self.n, lang=lang)
        generated = clean_texts(gen.questions)
        if gen.noncommittal:
            return Score(
                value=0.0,
                reason="noncommittal answer: it evades the question (e.g. 'I don't know'), so it scores 0",
                details={
                    "noncommittal": True,
                    "questions": [{"question": q, "similarity": None} for q in generated],
                    "lang": lang,
                },
            )
        if not generated:
            return Score.invalid(
                "NoQuestions",
                "the judge generated no question from the answer, so relevance cannot be measured",
                details={"noncommittal": False, "lang": lang},
            )

        emb = await judge.embed([question.strip(), *generated])
        rows, why = cosine_rows(emb, len(generated) + 1)
        if rows is None:
            return Score.invalid("EmbeddingError", why, details={"questions": generated, "lang": lang})
        import numpy as np

        sims = rows[1:] @ rows[0]
        mean = float(np.mean(sims))
        value = min(max(mean, 0.0), 1.0)
        best = int(np.argmax(sims))
        return Score(
            value=value,
            reason=(
                f"mean cosine similarity {mean:.3f} between the question and {len(generated)} "
                f'questions generated from the answer (closest: "{short(generated[best])}")'
            ),
            details={
                "noncommittal": False,
                "questions": [
                    {"question": q, "similarity": float(s)}
                    for q, s in zip(generated, sims.tolist(), strict=True)
                ],
                "mean_cosine": mean,
                "lang": lang,
            },
        )

    async def _assessed(self, judge: Judge, question: str, answer: str, lang: str) -> Score:
        """The route for judges that assess relevance directly (the local judge)."""
        r = await judge.assess_relevance(question, answer, lang=lang)
        details = {
            **dict(r.details),
            "method": "assess_relevance",
            "noncommittal": r.noncommittal,
            "lang": lang,
        }
        if r.noncommittal:
            return Score(
                value=0.0,
                reason="noncommittal answer: it evades the question (e.g. 'I don't know'), so it scores 0",
                details=details,
            )
        value = min(max(float(r.score), 0.0), 1.0)
        return Score(value=value, reason=r.reason or f"assessed relevance {value:.3f}", details=details)
