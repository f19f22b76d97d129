"""Evaluators in LlamaIndex's shape, for people moving over from ``llama_index.core.evaluation``.

::

    from ragmeter.evaluators import FaithfulnessEvaluator

    ev = FaithfulnessEvaluator(llm="openai:gpt-4o-mini")   # or judge=; a LlamaIndex LLM object works too
    r = ev.evaluate(query="...", response="...", contexts=["..."])
    r.passing, r.score, r.feedback

Each evaluator wraps one ragmeter metric; ``aevaluate`` is the one implementation and
``evaluate`` runs it (also inside a running event loop). A failed judgement is not an exception:
``invalid_result`` is True and ``invalid_reason`` says why (the metric's invalid score).
"""

from __future__ import annotations

from ragmeter.evaluators.agent import AgentGoalSuccessEvaluator, ToolCallCorrectnessEvaluator
from ragmeter.evaluators.batch import BatchEvalRunner
from ragmeter.evaluators.core import (
    AnswerRelevancyEvaluator,
    BaseEvaluator,
    ContextRelevancyEvaluator,
    CorrectnessEvaluator,
    EvaluationResult,
    FaithfulnessEvaluator,
    GuidelineEvaluator,
    MultiModalFaithfulnessEvaluator,
    MultiModalRelevancyEvaluator,
    PairwiseComparisonEvaluator,
    QueryResponseEvaluator,
    RelevancyEvaluator,
    ResponseEvaluator,
    SemanticSimilarityEvaluator,
)
from ragmeter.evaluators.rag_dataset import (
    CreatedBy,
    CreatedByType,
    LabelledRagDataExample,
    LabelledRagDataset,
    RagDatasetGenerator,
    RagExamplePrediction,
)
from ragmeter.evaluators.retrieval import (
    BaseRetrievalEvaluator,
    MultiModalRetrieverEvaluator,
    RetrievalEvalMode,
    RetrievalEvalResult,
    RetrievalMetricResult,
    RetrieverEvaluator,
)

__all__ = [
    "AgentGoalSuccessEvaluator",
    "AnswerRelevancyEvaluator",
    "BaseEvaluator",
    "BaseRetrievalEvaluator",
    "BatchEvalRunner",
    "ContextRelevancyEvaluator",
    "CorrectnessEvaluator",
    "CreatedBy",
    "CreatedByType",
    "EvaluationResult",
    "FaithfulnessEvaluator",
    "GuidelineEvaluator",
    "LabelledRagDataExample",
    "LabelledRagDataset",
    "MultiModalFaithfulnessEvaluator",
    "MultiModalRelevancyEvaluator",
    "MultiModalRetrieverEvaluator",
    "PairwiseComparisonEvaluator",
    "QueryResponseEvaluator",
    "RagDatasetGenerator",
    "RagExamplePrediction",
    "RelevancyEvaluator",
    "ResponseEvaluator",
    "RetrievalEvalMode",
    "RetrievalEvalResult",
    "RetrievalMetricResult",
    "RetrieverEvaluator",
    "SemanticSimilarityEvaluator",
    "ToolCallCorrectnessEvaluator",
]
