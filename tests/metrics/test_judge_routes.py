"""Metrics that take a judge's route: answer relevance by assessment, claims counted by probability."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ragmeter import Sample
from ragmeter.judges.base import RelevanceAssessment, StepsNotImplemented, Verdict
from ragmeter.metrics import get_metric


class AssessingJudge(StepsNotImplemented):
    """Answers relevance directly and verifies claims with probabilities, like the local judge."""

    name = "assessing"

    def __init__(self, probabilities: Sequence[float], *, evasive: bool = False) -> None:
        self.probabilities = list(probabilities)
        self.evasive = evasive

    def supports(self, step: str) -> bool:
        return step in {"assess_relevance", "extract_claims", "verify_claims"}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    async def assess_relevance(self, question: str, answer: str, *, lang: str = "en") -> RelevanceAssessment:
        return RelevanceAssessment(
            0.0 if self.evasive else 0.7, noncommittal=self.evasive, details={"needs": 1}
        )

    async def extract_claims(self, text: str, *, question: str | None = None, lang: str = "en") -> list[str]:
        return [f"claim {i}" for i in range(len(self.probabilities))]

    async def verify_claims(
        self, claims: Sequence[str], contexts: Sequence[str], *, lang: str = "en"
    ) -> list[Verdict]:
        return [Verdict(c, p >= 0.5, confidence=p) for c, p in zip(claims, self.probabilities, strict=True)]


SAMPLE = Sample(question="When was it built?", answer="It was built in 1889.", contexts=("Built in 1889.",))


async def test_answer_relevance_uses_assessment_when_the_judge_cannot_generate_questions() -> None:
    metric = get_metric("answer_relevance")
    judge = AssessingJudge([1.0])
    assert metric.missing_steps(judge) == []
    score = await metric.score(SAMPLE, judge)
    assert score.value == pytest.approx(0.7)
    assert score.details["method"] == "assess_relevance"
    evasive = await metric.score(SAMPLE, AssessingJudge([1.0], evasive=True))
    assert evasive.value == 0.0 and evasive.details["noncommittal"] is True


async def test_answer_relevance_is_refused_by_a_judge_with_neither_route() -> None:
    class Bare(StepsNotImplemented):
        name = "bare"

        def supports(self, step: str) -> bool:
            return step == "embed"

    assert get_metric("answer_relevance").missing_steps(Bare()) == ["generate_questions"]


async def test_faithfulness_is_the_expected_share_of_supported_claims() -> None:
    score = await get_metric("faithfulness").score(SAMPLE, AssessingJudge([0.9, 0.2, 0.7]))
    assert score.value == pytest.approx((0.9 + 0.2 + 0.7) / 3)
    assert score.details["n_supported"] == 2  # the count of verdicts at the 0.5 cut is kept


async def test_faithfulness_with_one_zero_verdicts_is_the_published_count() -> None:
    score = await get_metric("faithfulness").score(SAMPLE, AssessingJudge([1.0, 0.0, 1.0, 1.0]))
    assert score.value == pytest.approx(0.75)
