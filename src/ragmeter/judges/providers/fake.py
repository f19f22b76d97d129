"""Scripted providers for tests: :class:`FakeProvider` (chat) and :class:`FakeEmbeddingProvider`.

``FakeProvider(["reply 1", RateLimitError("slow down"), lambda req: "reply 3"])`` answers the
requests in order (a :class:`ChatResponse` in the script is returned as it is, e.g. to script a
reply cut off at the token limit with ``finish_reason="length"``); running out of replies raises
:class:`FakeExhaustedError` naming the request. Every request is kept in ``.requests`` so tests can assert on prompts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np

from ragmeter.judges.tokens import estimate_message_tokens, estimate_tokens
from ragmeter.judges.types import ChatRequest, ChatResponse, Usage

Reply: TypeAlias = (
    str | ChatResponse | BaseException | Callable[[ChatRequest], str | ChatResponse | BaseException]
)


class FakeExhaustedError(RuntimeError):
    """The scripted FakeProvider has no reply left for a request (a test bug, not a judge failure)."""


class FakeProvider:
    """A chat provider that answers from a script.

    ``replies``: a sequence whose items are a reply text, an exception instance (raised), or a
    callable ``(ChatRequest) -> str | Exception``; or one callable used for every request.
    """

    def __init__(
        self,
        replies: Sequence[Reply] | Callable[[ChatRequest], str | ChatResponse | BaseException],
        *,
        model: str = "scripted",
        name: str = "fake",
    ) -> None:
        self.name = name
        self.model = model
        self._always: Callable[[ChatRequest], str | ChatResponse | BaseException] | None = None
        self._script: list[Reply] = []
        if callable(replies) and not isinstance(replies, (list, tuple)):
            self._always = replies
        else:
            self._script = list(replies)
        self._next = 0
        self.requests: list[ChatRequest] = []

    @property
    def remaining(self) -> int | None:
        """Scripted replies not used yet (None for a callable script)."""
        return None if self._always is not None else len(self._script) - self._next

    async def generate(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if self._always is not None:
            item: Reply = self._always
        else:
            if self._next >= len(self._script):
                last_user = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
                preview = " ".join(last_user.split())[-200:]
                raise FakeExhaustedError(
                    f"FakeProvider ran out of scripted replies: request #{len(self.requests)} "
                    f"(step={request.step!r}, prompt_version={request.prompt_version!r}) has no reply; "
                    f"{len(self._script)} scripted. Last user message ends: {preview!r}"
                )
            item = self._script[self._next]
            self._next += 1
        result: Any = item(request) if callable(item) and not isinstance(item, BaseException) else item
        if isinstance(result, BaseException):
            raise result
        if isinstance(result, ChatResponse):
            return result
        if not isinstance(result, str):
            raise TypeError(f"FakeProvider reply must be a str or an exception, got {type(result).__name__}")
        usage = Usage(
            requests=1,
            prompt_tokens=estimate_message_tokens(request.messages),
            completion_tokens=estimate_tokens(result),
        )
        return ChatResponse(text=result, usage=usage, model=self.model, finish_reason="stop")

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model}


_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for w in _WORD_RE.findall(text.lower()):
        if _CJK_RE.search(w):
            out.extend(ch for ch in w)  # CJK: one token per character
        else:
            out.append(w)
    return out


def hash_embedding(text: str, dim: int = 16) -> np.ndarray:
    """A deterministic bag-of-words vector: each word adds +/-1 at a hashed position; L2-normalised.

    Texts that share words get similar vectors. An empty text gets a fixed unit vector (never zeros).
    """
    vec = np.zeros(dim, dtype=np.float64)
    for tok in _tokens(text):
        h = hashlib.blake2b(tok.encode("utf-8"), digest_size=8).digest()
        idx = int.from_bytes(h[:4], "little") % dim
        sign = 1.0 if h[4] & 1 else -1.0
        vec[idx] += sign
    norm = float(np.linalg.norm(vec))
    if norm == 0.0:
        vec[0] = 1.0
        norm = 1.0
    return (vec / norm).astype(np.float32)


class FakeEmbeddingProvider:
    """Deterministic hashing embeddings (:func:`hash_embedding`), for tests and offline examples."""

    def __init__(self, dim: int = 16, *, model: str | None = None, name: str = "fake") -> None:
        if dim < 2:
            raise ValueError("dim must be >= 2")
        self.dim = dim
        self.name = name
        self.model = model or f"hash-{dim}"
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> tuple[np.ndarray, Usage]:
        batch = list(texts)
        self.calls.append(batch)
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32), Usage()
        arr = np.stack([hash_embedding(t, self.dim) for t in batch])
        tokens = sum(max(1, len(_tokens(t))) for t in batch)
        return arr, Usage(requests=1, prompt_tokens=tokens)

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "dim": self.dim}
