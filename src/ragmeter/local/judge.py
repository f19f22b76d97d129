"""The offline judge: answers metric steps without any remote call.

For now it does the ``embed`` step (with a local :class:`~ragmeter.local.embedders.Embedder`,
the shared Universal Sentence Encoder by default). The other steps (claim extraction and
verification, question generation) are refused with :class:`~ragmeter.errors.UnsupportedStepError`,
and ``supports()`` says so up front, so the runner rejects a metric that needs them before any call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.errors import UnsupportedStepError
from ragmeter.judges.base import GeneratedQuestions, Verdict
from ragmeter.local.embedders import Embedder, default_embedder

_SUPPORTED: frozenset[str] = frozenset({"embed"})
_HINT = "the local judge does not do this step yet; name an LLM judge with --judge"


class LocalJudge:
    """A :class:`~ragmeter.judges.base.Judge` that runs fully offline."""

    name = "local"

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder: Embedder = embedder if embedder is not None else default_embedder()

    def supports(self, step: str) -> bool:
        return step in _SUPPORTED

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "embedder": self.embedder.describe()}

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await self.embedder.embed(texts)

    async def extract_claims(self, text: str, *, question: str | None = None, lang: str = "en") -> list[str]:
        raise UnsupportedStepError(self.name, "extract_claims", _HINT)

    async def verify_claims(
        self, claims: Sequence[str], contexts: Sequence[str], *, lang: str = "en"
    ) -> list[Verdict]:
        raise UnsupportedStepError(self.name, "verify_claims", _HINT)

    async def generate_questions(self, answer: str, *, n: int = 3, lang: str = "en") -> GeneratedQuestions:
        raise UnsupportedStepError(self.name, "generate_questions", _HINT)

    async def aclose(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"LocalJudge(embedder={self.embedder!r})"
