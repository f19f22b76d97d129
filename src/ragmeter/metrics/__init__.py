"""Metrics: the :class:`Metric` base class, :class:`Score`, the registry, and the built-in metrics.

Importing this package registers the built-in metrics by name (see :func:`list_metrics`):
``faithfulness``, ``answer_relevance``, ``exact_match``, ``token_f1``, ``rouge_l``, ``bleu``,
``semantic_similarity``, ``context_relevance``, ``context_precision``, ``context_utilization``,
``context_recall``, ``noise_sensitivity``, ``factual_correctness``, ``answer_correctness``,
``correctness``, ``relevancy``, ``guideline_adherence``, ``pairwise``; per conversation
``knowledge_retention``, ``conversation_relevancy``, ``conversation_completeness``,
``role_adherence``; per agent trajectory ``tool_call_correctness``, ``tool_call_f1``,
``tool_call_accuracy``, ``tool_args_valid``, ``redundant_calls``, ``agent_goal_success``,
``tool_selection``, ``topic_adherence`` (docs/agents.md); :func:`rubric` defines more.
Ragas's names for them (``answer_relevancy``, ``llm_context_precision_with_reference``...) are
accepted too (:func:`list_aliases`, :mod:`ragmeter.metrics.aliases`).
Formulas, inputs and judge calls of each are in docs/metrics.md.
"""

from __future__ import annotations

from ragmeter.metrics import aliases as _aliases  # noqa: F401  (registers other tools' metric names)
from ragmeter.metrics.agent import AgentGoalSuccess, ToolSelection, TopicAdherence
from ragmeter.metrics.answer_relevance import AnswerRelevance
from ragmeter.metrics.base import Metric, MetricAlias, Score, ScoreError, register_metric
from ragmeter.metrics.context import ContextPrecision, ContextRecall, ContextRelevance, ContextUtilization
from ragmeter.metrics.conversation import (
    ConversationCompleteness,
    ConversationRelevancy,
    KnowledgeRetention,
    RoleAdherence,
)
from ragmeter.metrics.correctness import AnswerCorrectness, FactualCorrectness
from ragmeter.metrics.faithfulness import Faithfulness
from ragmeter.metrics.graded import Correctness, GuidelineAdherence, Pairwise, Relevancy
from ragmeter.metrics.lexical import Bleu, ExactMatch, RougeL, TokenF1
from ragmeter.metrics.noise import NoiseSensitivity
from ragmeter.metrics.registry import get_metric, list_aliases, list_metrics
from ragmeter.metrics.repeat import Repeated
from ragmeter.metrics.retrieval import RETRIEVAL_METRICS  # noqa: F401  (registers the retrieval metrics)
from ragmeter.metrics.rubric import RubricMetric, rubric
from ragmeter.metrics.similarity import SemanticSimilarity
from ragmeter.metrics.tool_calls import (
    RedundantCalls,
    ToolArgsValid,
    ToolCallAccuracy,
    ToolCallCorrectness,
    ToolCallF1,
)

__all__ = [
    "AgentGoalSuccess",
    "AnswerCorrectness",
    "AnswerRelevance",
    "Bleu",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevance",
    "ContextUtilization",
    "ConversationCompleteness",
    "ConversationRelevancy",
    "Correctness",
    "ExactMatch",
    "FactualCorrectness",
    "Faithfulness",
    "GuidelineAdherence",
    "KnowledgeRetention",
    "Metric",
    "MetricAlias",
    "NoiseSensitivity",
    "Pairwise",
    "RedundantCalls",
    "Relevancy",
    "Repeated",
    "RoleAdherence",
    "RougeL",
    "RubricMetric",
    "Score",
    "ScoreError",
    "SemanticSimilarity",
    "TokenF1",
    "ToolArgsValid",
    "ToolCallAccuracy",
    "ToolCallCorrectness",
    "ToolCallF1",
    "ToolSelection",
    "TopicAdherence",
    "get_metric",
    "list_aliases",
    "list_metrics",
    "register_metric",
    "rubric",
]
