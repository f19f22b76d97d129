"""Metrics: the :class:`Metric` base class, :class:`Score`, the registry, and the built-in metrics.

Importing this package registers the built-in metrics by name (see :func:`list_metrics`):
``faithfulness``, ``answer_relevance``, ``exact_match``, ``token_f1``, ``rouge_l``, ``bleu``,
``semantic_similarity``. Formulas, inputs and judge calls of each are in docs/metrics.md.
"""

from __future__ import annotations

from ragmeter.metrics.answer_relevance import AnswerRelevance
from ragmeter.metrics.base import Metric, Score, ScoreError, get_metric, list_metrics, register_metric
from ragmeter.metrics.faithfulness import Faithfulness
from ragmeter.metrics.lexical import Bleu, ExactMatch, RougeL, TokenF1
from ragmeter.metrics.similarity import SemanticSimilarity

__all__ = [
    "AnswerRelevance",
    "Bleu",
    "ExactMatch",
    "Faithfulness",
    "Metric",
    "RougeL",
    "Score",
    "ScoreError",
    "SemanticSimilarity",
    "TokenF1",
    "get_metric",
    "list_metrics",
    "register_metric",
]
