"""The one exception tree of ragmeter.

::

    RagmeterError
    ├── ConfigError              bad options or configuration; raised before any judge call
    │   └── UnsupportedStepError a metric asks a judge for a step it cannot do
    ├── DatasetError             unusable input; names file, row and field
    ├── RunError                 run store / resume problems (unknown run, dataset changed)
    └── JudgeError               a judge call failed
        ├── RateLimitError       HTTP 429 (retryable; carries retry_after)
        ├── TransportError       timeout, connection error, HTTP 5xx (retryable)
        │   └── Unreachable      no connection opened: refused, name not resolved, TLS failed
        │                        (retried in a run the endpoint has answered; before its first
        │                        reply it is an EndpointError: the run stops)
        ├── JudgeOutputError     the reply could not be used (carries the raw reply)
        │   ├── ReplyTruncated       cut off at max_tokens (finish_reason "length"), also after a retry
        │   ├── IndexOutOfRange      an item or sentence number that the request does not have
        │   ├── DuplicateIndex       one item given two different answers
        │   ├── CountMismatch        more or fewer items than asked, not matchable to what was asked
        │   ├── EvidenceNotFound     "supporting" evidence quoted that is not in the contexts
        │   ├── ScoreOutOfScale      a grade outside the rubric's scale
        │   └── CopiedExample        the prompt's own example repeated instead of an answer
        ├── EndpointError        the endpoint cannot serve the run: bad key, unknown model or
        │                        route, not an OpenAI-compatible server, a structured-output mode
        │                        it refuses (never retried; stops the run)
        └── RequestRejected      the server refused this one request for good (never retried;
            │                    that score is invalid, the run goes on)
            ├── ContextTooLong   the prompt does not fit the model's context window
            └── ContentFiltered  the provider's content filter refused the prompt or the reply

A metric never turns one of these into NaN: the runner records a failed
(sample, metric) job as an invalid :class:`~ragmeter.metrics.base.Score` that
keeps the error kind, the message and the raw reply. The exception is an
:class:`EndpointError` (``fatal``): every later call would fail the same way, so
the runner stops the run at once with the endpoint, the status and the server's
own words, and what was already scored stays in the run store for ``--resume``.
"""

from __future__ import annotations


class RagmeterError(Exception):
    """Root of every error ragmeter raises on purpose."""


def add_note(error: BaseException, note: str) -> None:
    """``error.add_note(note)`` on Python 3.11+; the same ``__notes__`` list on 3.10 (the CLI
    prints the notes under the message)."""
    if hasattr(error, "add_note"):
        error.add_note(note)
    else:  # pragma: no cover - Python 3.10
        notes = list(getattr(error, "__notes__", []))
        notes.append(note)
        error.__notes__ = notes  # type: ignore[attr-defined]


class ConfigError(RagmeterError):
    """Bad configuration or options; raised before any judge call is made."""


class UnsupportedStepError(ConfigError):
    """A metric needs a judge step (e.g. ``extract_claims``) that this judge cannot do."""

    def __init__(self, judge: str, step: str, hint: str = "") -> None:
        self.judge = judge
        self.step = step
        msg = f"judge {judge!r} cannot do step {step!r}"
        if hint:
            msg += f": {hint}"
        super().__init__(msg)


class DatasetError(RagmeterError):
    """Unusable input. Names the file, the row (1-based line or record number) and the field."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.row = row
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(str(self.file))
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.field:
            where.append(f"field {self.field!r}")
        prefix = ", ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message

    def to_dict(self) -> dict[str, object]:
        return {"file": self.file, "row": self.row, "field": self.field, "message": self.message}


class RunError(RagmeterError):
    """A run record problem: unknown run id, dataset changed since the run, corrupt store."""


class JudgeError(RagmeterError):
    """A judge call failed (after retries, where the failure was retryable)."""

    retryable: bool = False
    #: True when retrying or going on with other samples cannot help: the run stops.
    fatal: bool = False

    def __init__(self, message: str, *, raw: str | None = None) -> None:
        self.raw = raw
        super().__init__(message)


class RateLimitError(JudgeError):
    """HTTP 429. ``retry_after`` is the server's Retry-After in seconds, when it sent one."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, raw: str | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(message, raw=raw)


class TransportError(JudgeError):
    """Timeout, connection failure or HTTP 5xx: worth retrying."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, raw: str | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(message, raw=raw)


class Unreachable(TransportError):
    """No connection could be opened to the endpoint: refused, a host name that does not resolve,
    TLS that failed. Retried like any transport error once the endpoint has answered in this run;
    before its first reply the client stops the run with an :class:`EndpointError` (reason
    ``"unreachable"``) instead: a wrong URL or a server that is not running is not worth minutes of
    retries. ``endpoint`` is the base URL."""

    def __init__(self, message: str, *, endpoint: str | None = None) -> None:
        self.endpoint = endpoint
        super().__init__(message)


class JudgeOutputError(JudgeError):
    """The judge replied, but the reply could not be parsed into what the step needs.

    ``raw`` keeps the reply (after the repair round, the last reply) so the run record shows it.
    The subclasses name replies that are valid JSON with wrong content; the class name is the
    invalid score's ``kind``.
    """


class ReplyTruncated(JudgeOutputError):
    """The reply was cut off at the token limit (``finish_reason == "length"``), also when asked
    again with twice the budget: raise ``max_tokens``."""


class IndexOutOfRange(JudgeOutputError):
    """The reply names an item or sentence number the request does not have."""


class DuplicateIndex(JudgeOutputError):
    """The reply gives one item two different answers."""


class CountMismatch(JudgeOutputError):
    """The reply has more or fewer items than were asked for, and they cannot be matched."""


class EvidenceNotFound(JudgeOutputError):
    """A verdict that calls a claim supported quotes evidence that is not in the contexts."""


class ScoreOutOfScale(JudgeOutputError):
    """A grade outside the rubric's scale."""


class CopiedExample(JudgeOutputError):
    """The reply repeats the prompt's own wording (its example reply: claims, reasons, questions)
    instead of answering about the data, as very small models do."""


class EndpointError(JudgeError):
    """The endpoint cannot serve this run, and retrying cannot change that.

    ``reason`` is one of ``"auth"`` (401/403: the key), ``"model"`` (404 naming the model),
    ``"route"`` (404/405: wrong base URL or path), ``"not_openai"`` (the server answers, but not in
    the OpenAI API's shape: HTML, other JSON), ``"structured"`` (a structured-output mode the
    server refuses, named explicitly with ``--structured``), ``"unreachable"`` (no connection could
    be opened before the endpoint's first reply: :class:`Unreachable`). ``endpoint`` is the base URL,
    ``status`` the HTTP status (None when there was none), ``server_message`` the server's words.
    """

    fatal = True

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        endpoint: str | None = None,
        status: int | None = None,
        server_message: str | None = None,
        raw: str | None = None,
    ) -> None:
        self.reason = reason
        self.endpoint = endpoint
        self.status = status
        self.server_message = server_message
        super().__init__(message, raw=raw)


class RequestRejected(JudgeError):
    """The server refused this request for good (a 4xx that is about the request, not the
    endpoint): not retried; the score is invalid with the server's words and the run goes on."""

    def __init__(
        self,
        message: str,
        *,
        endpoint: str | None = None,
        status: int | None = None,
        server_message: str | None = None,
        raw: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.status = status
        self.server_message = server_message
        super().__init__(message, raw=raw)


class ContextTooLong(RequestRejected):
    """The prompt (plus the reply budget) does not fit the model's context window.

    ``prompt_tokens``: the size the server reported (else ragmeter's estimate); ``limit``: the
    context length the server reported, when it said.
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_tokens: int | None = None,
        limit: int | None = None,
        endpoint: str | None = None,
        status: int | None = None,
        server_message: str | None = None,
        raw: str | None = None,
    ) -> None:
        self.prompt_tokens = prompt_tokens
        self.limit = limit
        super().__init__(message, endpoint=endpoint, status=status, server_message=server_message, raw=raw)


class ContentFiltered(RequestRejected):
    """The provider's content filter refused the prompt (HTTP 400) or cut the reply
    (``finish_reason: "content_filter"``)."""


__all__ = [
    "ConfigError",
    "ContentFiltered",
    "ContextTooLong",
    "CopiedExample",
    "CountMismatch",
    "DatasetError",
    "DuplicateIndex",
    "EndpointError",
    "EvidenceNotFound",
    "IndexOutOfRange",
    "JudgeError",
    "JudgeOutputError",
    "RagmeterError",
    "RateLimitError",
    "ReplyTruncated",
    "RequestRejected",
    "RunError",
    "ScoreOutOfScale",
    "TransportError",
    "UnsupportedStepError",
]
