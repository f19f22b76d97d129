"""What the evaluators build on: LlamaIndex's own classes when llama-index-core is installed.

With llama-index-core importable, :data:`FrameworkEvaluator` is
``llama_index.core.evaluation.BaseEvaluator`` and :data:`FrameworkResult` its ``EvaluationResult``,
so ragmeter's evaluators are real LlamaIndex evaluators (``BatchEvalRunner`` runs them, and
``isinstance`` checks in user code pass). Without it, the same names are stand-ins with the same
fields, and nothing else changes: the evaluator logic is written once, in
:mod:`ragmeter.evaluators.core`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

__all__ = ["LLAMA_INDEX", "FrameworkEvaluator", "FrameworkResult"]

try:
    from llama_index.core.evaluation import BaseEvaluator as FrameworkEvaluator
    from llama_index.core.evaluation import EvaluationResult as FrameworkResult

    LLAMA_INDEX = True
except ImportError:
    LLAMA_INDEX = False

    class FrameworkEvaluator:  # type: ignore[no-redef]
        """Stand-in for ``llama_index.core.evaluation.BaseEvaluator`` (llama-index-core is not installed)."""

        def _get_prompts(self) -> dict[str, Any]:  # pragma: no cover - overridden
            return {}

    class FrameworkResult(BaseModel):  # type: ignore[no-redef]
        """The fields of ``llama_index.core.evaluation.EvaluationResult``."""

        query: str | None = None
        contexts: Sequence[str] | None = None
        response: str | None = None
        passing: bool | None = None
        feedback: str | None = None
        score: float | None = None
        pairwise_source: str | None = None
        invalid_result: bool = False
        invalid_reason: str | None = None
