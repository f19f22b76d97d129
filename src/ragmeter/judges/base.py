"""What metrics ask of a judge: steps, not prompts.

A metric encodes its published algorithm; the *steps* are asked of a judge. An LLM judge
(:class:`ragmeter.judges.llm.LLMJudge`) answers them with prompts; the local judge
(:class:`ragmeter.local.judge.LocalJudge`) with embeddings and text analysis. One metric
implementation serves both, and a new backend never touches a metric.

Steps (names used in ``Metric.steps`` and ``Judge.supports``):

- ``extract_claims(text, question=, lang=)`` -> list of atomic, self-contained claims
- ``verify_claims(claims, contexts, lang=)`` -> one :class:`Verdict` per claim, in order
- ``generate_questions(answer, n=, lang=)`` -> :class:`GeneratedQuestions`
- ``embed(texts)`` -> (n, d) float32 array, rows L2-normalised

A judge that cannot do a step raises :class:`~ragmeter.errors.UnsupportedStepError` from it, and
returns False from ``supports(step)`` so the runner can refuse the run before any call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

STEPS: tuple[str, ...] = ("extract_claims", "verify_claims", "generate_questions", "embed")


@dataclass(frozen=True)
class Verdict:
    """Whether one claim is supported by the contexts.

    ``supported`` is the decision; ``confidence`` in [0, 1] is the judge's probability that the
    claim is supported when it has one (the local judge always does; an LLM judge gives 1.0/0.0).
    ``evidence`` is the context sentence that supports (or contradicts) it, when the judge gives one.
    """

    claim: str
    supported: bool
    reason: str = ""
    evidence: str = ""
    confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "supported": self.supported,
            "reason": self.reason,
            "evidence": self.evidence,
            "confidence": self.confidence,
        }


@dataclass(frozen=True)
class GeneratedQuestions:
    """Questions generated from an answer (Ragas answer relevance), and whether the answer is
    noncommittal (evasive: "I don't know", "I cannot answer")."""

    questions: tuple[str, ...]
    noncommittal: bool = False


@runtime_checkable
class Judge(Protocol):
    """Anything that answers metric steps. See the module docstring for the steps."""

    name: str  # "local", "openai:gpt-4o-mini", "openai-compatible:qwen2.5-7b", "fake"

    def supports(self, step: str) -> bool: ...

    def describe(self) -> dict[str, Any]:
        """The judge and its config for the run record (no secrets)."""
        ...

    async def extract_claims(
        self, text: str, *, question: str | None = None, lang: str = "en"
    ) -> list[str]: ...

    async def verify_claims(
        self, claims: Sequence[str], contexts: Sequence[str], *, lang: str = "en"
    ) -> list[Verdict]: ...

    async def generate_questions(
        self, answer: str, *, n: int = 3, lang: str = "en"
    ) -> GeneratedQuestions: ...

    async def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    async def aclose(self) -> None: ...
