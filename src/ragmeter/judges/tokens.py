"""Token estimates, for servers that send no usage and for the rate limiter's guess before a call."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ragmeter.judges.types import Message, Usage


def estimate_tokens(text: str) -> int:
    """About four characters per token (OpenAI's rule of thumb); at least 1 for non-empty text."""
    if not text:
        return 0
    return max(1, round(len(text) / 4))


def estimate_tokens_cjk(text: str) -> int:
    """About 4 characters per token for alphabetic text and one token per CJK character (the
    dry run's estimate, where Chinese prompts must not look four times cheaper than they are)."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    return cjk + (len(text) - cjk + 3) // 4


#: an image's tokens in an estimate (OpenAI's low-detail cost; a server that reports usage counts its own)
IMAGE_TOKENS = 85


def estimate_message_tokens(messages: Iterable[Message]) -> int:
    return sum(estimate_tokens(m.content) + 4 + IMAGE_TOKENS * len(m.images) for m in messages)


@dataclass(frozen=True)
class EstimatedUsage(Usage):
    """A :class:`Usage` the server did not report: the token counts are estimates (chars / 4)."""

    estimated: bool = True


def is_estimated(usage: Usage) -> bool:
    return bool(getattr(usage, "estimated", False))
