"""Plain data that travels between the judge layers: requests, replies, usage, call records.

Layers (outermost first)::

    Judge (steps: extract_claims, verify_claims, generate_questions, embed)
      -> LLMJudge renders a prompt file, asks ModelClient for JSON against a schema, parses it
      -> ModelClient: cache, concurrency limit, rpm/tpm limits, timeout, retries, usage
      -> Provider: ONE async method per capability (generate, embed); talks to the endpoint

Every model call made while a (sample, metric) job runs is appended to the job's
:class:`CallLog` (found through a context variable), so the runner can store raw replies and
attribute tokens to metrics without passing anything through the metric code.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragmeter.judges.schema_shapes import ENFORCED_MODES

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str
    #: pictures that follow the text (URLs or data URIs): OpenAI's content parts
    images: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        if not self.images:
            return {"role": self.role, "content": self.content}
        parts: list[dict[str, Any]] = [{"type": "text", "text": self.content}]
        parts += [{"type": "image_url", "image_url": {"url": url}} for url in self.images]
        return {"role": self.role, "content": parts}


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion request.

    ``json_schema``: when set, the reply must be a JSON value matching it; the provider passes it
    to the server in the form the endpoint takes (``response_format`` json_schema / json_object
    with schema / ``guided_json`` / Ollama ``format``) or not at all, per its configuration.
    ``grammar_schema``: the same reply shape tightened for servers that decode under a grammar built
    from the schema (llama.cpp, vLLM's ``guided_json``, Ollama: exact item counts, fixed indices,
    capped text; see :func:`ragmeter.judges.schema_shapes.shaped_schema`); the provider sends it
    instead of ``json_schema`` in those modes, which ``auto`` may only settle on mid-run.
    ``enforced_messages``: the messages for the modes in which the server enforces the schema
    (:data:`~ragmeter.judges.schema_shapes.ENFORCED_MODES`): the prompt without its worked example,
    which a small model copies instead of answering when the shape no longer needs showing;
    :meth:`messages_for` picks. ``None``: ``messages`` in every mode.
    ``step`` and ``prompt_version`` name the prompt (for the cache key and the run record).
    ``leads``: later requests wait on this one's reply (a sample's claims, which its verdicts then
    check), so it goes out before requests nothing waits on when the endpoint's slots are all busy;
    scheduling only, not part of the request or its cache key.
    """

    messages: tuple[Message, ...]
    temperature: float = 0.0
    max_tokens: int | None = None
    json_schema: Mapping[str, Any] | None = None
    schema_name: str = "reply"
    grammar_schema: Mapping[str, Any] | None = None
    seed: int | None = None
    step: str = ""
    prompt_version: str = ""
    enforced_messages: tuple[Message, ...] | None = None
    leads: bool = False

    def messages_for(self, mode: str) -> tuple[Message, ...]:
        """The messages to send in structured-output mode ``mode``."""
        if self.enforced_messages is not None and self.json_schema is not None and mode in ENFORCED_MODES:
            return self.enforced_messages
        return self.messages

    def cache_fields(self) -> dict[str, Any]:
        return {
            "messages": [m.to_dict() for m in self.messages],
            **(
                {"enforced_messages": [m.to_dict() for m in self.enforced_messages]}
                if self.enforced_messages is not None
                else {}
            ),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_schema": self.json_schema,
            **({"grammar_schema": self.grammar_schema} if self.grammar_schema is not None else {}),
            "seed": self.seed,
            "step": self.step,
            "prompt_version": self.prompt_version,
        }


@dataclass(frozen=True)
class Usage:
    """Requests and tokens. ``cached_requests``: answered from ragmeter's own reply cache (no
    request sent). ``cached_tokens``: the part of ``prompt_tokens`` the server served from its
    prompt cache (OpenAI prompt caching, vLLM prefix caching), as it reports in
    ``usage.prompt_tokens_details.cached_tokens``; 0 when it reports none."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_requests: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.requests + other.requests,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_requests + other.cached_requests,
            self.cached_tokens + other.cached_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_requests": self.cached_requests,
            "cached_tokens": self.cached_tokens,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Usage:
        return cls(
            int(d.get("requests", 0)),
            int(d.get("prompt_tokens", 0)),
            int(d.get("completion_tokens", 0)),
            int(d.get("cached_requests", 0)),
            int(d.get("cached_tokens", 0)),
        )


@dataclass(frozen=True)
class ChatResponse:
    text: str
    usage: Usage = Usage()
    model: str = ""
    finish_reason: str | None = None


@runtime_checkable
class ChatProvider(Protocol):
    """One module per provider. Raise RateLimitError / TransportError / JudgeError; never retry here."""

    name: str  # "openai", "openai-compatible", "fake", ...
    model: str

    async def generate(self, request: ChatRequest) -> ChatResponse: ...

    def describe(self) -> dict[str, Any]:
        """Config for the run record and the cache key: no secrets."""
        ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    name: str
    model: str

    async def embed(self, texts: Sequence[str]) -> tuple[np.ndarray, Usage]:
        """Return an (n, d) float32 array (not necessarily normalised) and the usage."""
        ...

    def describe(self) -> dict[str, Any]: ...


#: no requests and no tokens (shared: Usage is immutable)
NO_USAGE = Usage()


@dataclass(frozen=True)
class CallRecord:
    """One model call as the run record keeps it."""

    step: str
    model: str
    reply: str
    usage: Usage
    cached: bool
    latency_s: float
    prompt_version: str = ""
    attempts: int = 1
    error: str | None = None


@dataclass
class CallLog:
    """Calls made by one (sample, metric) job. Set by the runner; appended to by ModelClient."""

    calls: list[CallRecord] = field(default_factory=list)

    def add(self, record: CallRecord) -> None:
        self.calls.append(record)

    @property
    def usage(self) -> Usage:
        if not self.calls:
            return NO_USAGE  # a judge-free job's (one shared object: Usage is immutable)
        total = Usage()
        for c in self.calls:
            total = total + c.usage
        return total


current_call_log: contextvars.ContextVar[CallLog | None] = contextvars.ContextVar(
    "ragmeter_current_call_log", default=None
)


def record_call(record: CallRecord) -> None:
    """Append ``record`` to the running job's call log, if any."""
    log = current_call_log.get()
    if log is not None:
        log.add(record)


@dataclass(frozen=True)
class RetryNotice:
    """A call that failed and will be tried again: what the progress display shows while waiting.

    ``endpoint``: the client's name; ``error``: the failure, short (``HTTP 500``, ``timeout``...);
    ``attempt``: the attempt that failed (1-based) of ``max_attempts``; ``delay_s``: the wait before
    the next try. ``None`` is sent when a call succeeds again after retries.
    """

    endpoint: str
    error: str
    attempt: int
    max_attempts: int
    delay_s: float


#: Who hears about retries (the runner's progress display); None: nobody.
current_retry_listener: contextvars.ContextVar[Callable[[RetryNotice | None], None] | None] = (
    contextvars.ContextVar("ragmeter_current_retry_listener", default=None)
)


def notify_retry(notice: RetryNotice | None) -> None:
    listener = current_retry_listener.get()
    if listener is not None:
        listener(notice)
