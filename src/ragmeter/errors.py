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
        └── JudgeOutputError     the reply could not be parsed (carries the raw reply)

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
    """


__all__ = [
    "ConfigError",
    "DatasetError",
    "JudgeError",
    "JudgeOutputError",
    "RagmeterError",
    "RateLimitError",
    "RunError",
    "TransportError",
    "UnsupportedStepError",
]
