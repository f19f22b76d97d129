"""Progress display for long runs: jobs/s, ETA, judge requests in flight, tokens, invalid count
(rich, on stderr).

While a judge call waits to be retried, the bar's last column says so: the endpoint, the error,
the attempt and when the next try goes out (``retrying: HTTP 500 from openai-compatible:m,
attempt 2/7, next try in 3 s``); it clears when a call succeeds again.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from ragmeter.judges.types import NO_USAGE, RetryNotice, Usage


class Progress:
    """Counts finished jobs; draws a rich progress bar when enabled. Cheap when disabled."""

    def __init__(
        self,
        total: int,
        *,
        enabled: bool | None,
        description: str = "scoring",
        in_flight: Callable[[], int] | None = None,
    ) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.enabled = enabled
        self.total = total
        self.done = 0
        self.invalid = 0
        self.usage = Usage()
        self.retry_status = ""  # what the bar shows while a call waits to be retried
        self._start = time.perf_counter()
        self._in_flight = in_flight
        self._bar: Any = None
        self._task: Any = None
        if enabled and total > 0:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TimeElapsedColumn(),
                *([TextColumn("in flight {task.fields[in_flight]}")] if in_flight is not None else []),
                TextColumn("tokens {task.fields[tokens]}"),
                TextColumn("invalid {task.fields[invalid]}"),
                TextColumn("[yellow]{task.fields[status]}"),
                console=Console(stderr=True),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(
                description, total=total, rate="", tokens=0, invalid=0, in_flight=0, status=""
            )

    def on_retry(self, notice: RetryNotice | None) -> None:
        """A judge call failed and waits to be tried again (None: calls succeed again)."""
        if notice is None:
            self.retry_status = ""
        else:
            self.retry_status = (
                f"retrying: {notice.error} from {notice.endpoint}, attempt {notice.attempt}/"
                f"{notice.max_attempts}, next try in {notice.delay_s:.0f} s"
            )
        if self._bar is not None:
            self._bar.update(self._task, status=self.retry_status)

    def advance(self, *, invalid: bool, usage: Usage) -> None:
        self.done += 1
        self.invalid += int(invalid)
        if usage is not NO_USAGE:  # a judge-free job's adds nothing
            self.usage = self.usage + usage
        if self._bar is not None:
            elapsed = max(time.perf_counter() - self._start, 1e-9)
            self._bar.update(
                self._task,
                advance=1,
                rate=f"{self.done / elapsed:.1f} jobs/s",
                tokens=self.usage.total_tokens,
                invalid=self.invalid,
                in_flight=self._in_flight() if self._in_flight is not None else 0,
            )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
