"""Evaluators in LlamaIndex's shape, for people moving over from ``llama_index.core.evaluation``.

::

    from ragmeter.evaluators import FaithfulnessEvaluator

    ev = FaithfulnessEvaluator(judge="openai:gpt-4o-mini")
    r = ev.evaluate(query="...", response="...", contexts=["..."])
    r.passing, r.score, r.feedback

Each evaluator wraps one ragmeter metric; ``aevaluate`` is the one implementation and
``evaluate`` runs it (also inside a running event loop). A failed judgement is not an exception:
``invalid_result`` is True and ``invalid_reason`` says why (the metric's invalid score).
"""

from __future__ import annotations

from ragmeter.evaluators.core import (
    BaseEvaluator,
    CorrectnessEvaluator,
    EvaluationResult,
    FaithfulnessEvaluator,
    GuidelineEvaluator,
    PairwiseComparisonEvaluator,
    RelevancyEvaluator,
    SemanticSimilarityEvaluator,
)

__all__ = [
    "BaseEvaluator",
    "CorrectnessEvaluator",
    "EvaluationResult",
    "FaithfulnessEvaluator",
    "GuidelineEvaluator",
    "PairwiseComparisonEvaluator",
    "RelevancyEvaluator",
    "SemanticSimilarityEvaluator",
]
