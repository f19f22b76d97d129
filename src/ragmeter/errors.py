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
        └── JudgeOutputError     the reply could not be used (carries the raw reply)
            ├── ReplyTruncated       cut off at max_tokens (finish_reason "length"), also after a retry
            ├── IndexOutOfRange      an item or sentence number that the request does not have
            ├── DuplicateIndex       one item given two different answers
            ├── CountMismatch        more or fewer items than asked, not matchable to what was asked
            ├── EvidenceNotFound     "supporting" evidence quoted that is not in the contexts
            └── ScoreOutOfScale      a grade outside the rubric's scale

A metric never turns one of these into NaN: the runner records a failed
(sample, metric) job as an invalid :class:`~ragmeter.metrics.base.Score` that
keeps the error kind, the message and the raw reply.
"""

from __future__ import annotations


class RagmeterError(Exception):
    """Root of every error ragmeter raises on purpose."""


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


__all__ = [
    "ConfigError",
    "CountMismatch",
    "DatasetError",
    "DuplicateIndex",
    "EvidenceNotFound",
    "IndexOutOfRange",
    "JudgeError",
    "JudgeOutputError",
    "RagmeterError",
    "RateLimitError",
    "ReplyTruncated",
    "RunError",
    "ScoreOutOfScale",
    "TransportError",
    "UnsupportedStepError",
]
