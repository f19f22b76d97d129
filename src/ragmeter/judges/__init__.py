"""Judges: what metrics ask (steps), answered by an LLM or by the local judge.

Layers: :class:`LLMJudge` (prompts, parsing, repair) -> :class:`ModelClient` (cache, limits,
retries, usage) -> a provider (one async method per capability). See ``docs/judges.md``.

Names are imported on first use, so ``import ragmeter.judges`` stays light (no ``openai``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_exports
from ragmeter.judges.base import GeneratedQuestions, Judge, Verdict
from ragmeter.judges.config import JudgeConfig

if TYPE_CHECKING:
    from ragmeter.judges.cache import LLMCache, NullCache
    from ragmeter.judges.client import ModelClient
    from ragmeter.judges.factory import make_judge
    from ragmeter.judges.llm import LLMJudge
    from ragmeter.judges.prompts import load_prompt
    from ragmeter.judges.providers.fake import FakeEmbeddingProvider, FakeExhaustedError, FakeProvider
    from ragmeter.judges.providers.openai_compat import OpenAICompatibleProvider

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "LLMCache": "ragmeter.judges.cache",
        "NullCache": "ragmeter.judges.cache",
        "ModelClient": "ragmeter.judges.client",
        "make_judge": "ragmeter.judges.factory",
        "LLMJudge": "ragmeter.judges.llm",
        "load_prompt": "ragmeter.judges.prompts",
        "FakeProvider": "ragmeter.judges.providers.fake",
        "FakeEmbeddingProvider": "ragmeter.judges.providers.fake",
        "FakeExhaustedError": "ragmeter.judges.providers.fake",
        "OpenAICompatibleProvider": "ragmeter.judges.providers.openai_compat",
    },
)


__all__ = [
    "FakeEmbeddingProvider",
    "FakeExhaustedError",
    "FakeProvider",
    "GeneratedQuestions",
    "Judge",
    "JudgeConfig",
    "LLMCache",
    "LLMJudge",
    "ModelClient",
    "NullCache",
    "OpenAICompatibleProvider",
    "Verdict",
    "load_prompt",
    "make_judge",
]
