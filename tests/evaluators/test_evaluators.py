"""The LlamaIndex-shaped evaluator API over the scripted LLM judge."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from ragmeter.errors import UnsupportedStepError
from ragmeter.evaluators import (
    CorrectnessEvaluator,
    EvaluationResult,
    FaithfulnessEvaluator,
    GuidelineEvaluator,
    PairwiseComparisonEvaluator,
    RelevancyEvaluator,
    SemanticSimilarityEvaluator,
)
from ragmeter.judges import FakeProvider, JudgeConfig, LLMJudge, ModelClient


def judge_with(*replies: object, embedder: object = None) -> tuple[LLMJudge, FakeProvider]:
    texts = [r if isinstance(r, str) else json.dumps(r) for r in replies]
    provider = FakeProvider(texts)
    return LLMJudge(ModelClient(provider, JudgeConfig(backoff_base_s=0, backoff_max_s=0)), embedder), provider  # type: ignore[arg-type]


def test_faithfulness_evaluator_sync_shape() -> None:
    judge, _ = judge_with(
        {"claims": ["Paris is in France.", "Paris has 9 million people."]},
        {
            "verdicts": [
                {"index": 1, "claim": "", "evidence": "Paris is in France.", "reason": "", "supported": True},
                {"index": 2, "claim": "", "evidence": "", "reason": "", "supported": False},
            ]
        },
    )
    ev = FaithfulnessEvaluator(judge)
    r = ev.evaluate(
        query="Where is Paris?",
        response="Paris is in France. It has 9 million people.",
        contexts=["Paris is in France."],
    )
    assert isinstance(r, EvaluationResult)
    assert r.score == 0.5 and r.passing is False and not r.invalid_result
    assert r.query == "Where is Paris?" and r.contexts == ["Paris is in France."]
    assert r.feedback and "1 of 2" in r.feedback


async def test_aevaluate_inside_a_running_loop_and_sync_evaluate_too() -> None:
    judge, _ = judge_with({"reason": "right", "score": 5}, {"reason": "right", "score": 3})
    ev = CorrectnessEvaluator(judge)
    r = await ev.aevaluate(query="2+2?", response="4", reference="4")
    assert r.score == 5.0 and r.passing is True
    # the sync form works while a loop is running (it runs on a worker thread)
    r2 = await asyncio.to_thread(ev.evaluate, query="2+2?", response="four-ish", reference="4")
    assert r2.score == 3.0 and r2.passing is False


def test_invalid_results_carry_the_reason() -> None:
    judge, _ = judge_with("not json", "still not json")
    r = RelevancyEvaluator(judge).evaluate(query="q", response="a", contexts=["c"])
    assert r.invalid_result and r.invalid_reason and r.invalid_reason.startswith("JudgeOutputError")
    assert r.score is None and r.passing is None
    missing = RelevancyEvaluator(judge).evaluate(query="q", response="a")
    assert missing.invalid_result and missing.invalid_reason == "MissingInput: missing contexts"


def test_guideline_and_pairwise_evaluators() -> None:
    judge, _ = judge_with({"reason": "ok", "score": 1}, {"reason": "no", "score": 0})
    g = GuidelineEvaluator(judge, guidelines=["Be short.", "Use numbers."]).evaluate(query="q", response="a")
    assert g.score == 0.5 and g.passing is False
    judge2, _ = judge_with({"reason": "A", "winner": "A"}, {"reason": "B", "winner": "B"})
    p = PairwiseComparisonEvaluator(judge2).evaluate(query="q", response="good", second_response="bad")
    assert p.score == 1.0 and p.passing is True and p.pairwise_source == "both orders agree"


def test_semantic_similarity_evaluator_and_unsupported_judge() -> None:
    class Emb:
        def embed(self, texts: list[str]) -> np.ndarray:
            return np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)

    judge, _ = judge_with(embedder=Emb())
    r = SemanticSimilarityEvaluator(judge).evaluate(response="a", reference="b")
    assert r.score == pytest.approx(0.6, abs=1e-6) and r.passing is False
    no_embed, _ = judge_with()
    with pytest.raises(UnsupportedStepError):
        SemanticSimilarityEvaluator(no_embed)
