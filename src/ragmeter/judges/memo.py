"""Step memo: identical judge requests made while scoring one run cost one call.

Several metrics ask the same step with the same inputs (the claims of the answer for faithfulness
and factual correctness; the claims of the reference for context recall and factual correctness;
the context analysis for context precision and context relevance). :class:`StepMemo` keys each
request by step, inputs, language, prompt version and repetition index, and:

- while the first request is in flight, identical requests await the same future (one call);
- once it has finished, identical requests get the stored value (bounded LRU, ``max_entries``),
  for as long as the event loop lives (a sync ``evaluate`` runs its own loop, so each run starts
  with an empty memo; the reply cache, when configured, is what spans runs).

A failed request is not stored: the requests that were waiting on it get the same error, a later
one asks again. The job that made the call has the :class:`CallRecord` of the model call in its
log; every other job gets a ``memo`` record (``cached=True``, zero usage) so its log shows where
its answer came from.

Repeated judging (``--samples N``) runs a metric N times under :func:`repetition`; the index is
part of the memo key and of the request (so neither the memo nor the reply cache serves repeat
*i* the reply of repeat *j*), and the judge samples at ``temperature`` when the config has 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from ragmeter.judges.types import CallRecord, Usage, record_call

T = TypeVar("T")

DEFAULT_MAX_ENTRIES = 4096


@dataclass(frozen=True)
class Repetition:
    """The current repeat of a repeated-judging run: ``index`` (0-based) and the sampling temperature."""

    index: int
    temperature: float


current_repetition: contextvars.ContextVar[Repetition | None] = contextvars.ContextVar(
    "ragmeter_current_repetition", default=None
)


@contextlib.contextmanager
def repetition(index: int, temperature: float) -> Iterator[Repetition]:
    """Run the body as repeat ``index`` (the judge's memo and cache keys include it)."""
    rep = Repetition(int(index), float(temperature))
    token = current_repetition.set(rep)
    try:
        yield rep
    finally:
        current_repetition.reset(token)


def memo_key(step: str, prompt_version: str, inputs: Any) -> str:
    """A stable key over step, prompt version, inputs and the current repetition index."""
    rep = current_repetition.get()
    payload = {
        "step": step,
        "prompt": prompt_version,
        "inputs": inputs,
        "rep": None if rep is None else rep.index,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class StepMemo:
    """In-flight and finished step results of one judge (see the module docstring)."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, *, model: str = "") -> None:
        self.max_entries = max(0, int(max_entries))
        self.model = model
        self._done: OrderedDict[str, Any] = OrderedDict()
        self._flight: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._done)

    def clear(self) -> None:
        self._done.clear()
        self._flight.clear()

    def _hit(self, step: str, prompt_version: str) -> None:
        self.hits += 1
        record_call(
            CallRecord(
                step=step,
                model=self.model,
                reply="memo: answered by an identical request of another metric on this sample",
                usage=Usage(),
                cached=True,
                latency_s=0.0,
                prompt_version=prompt_version,
                attempts=0,
            )
        )

    async def get_or_run(
        self, step: str, prompt_version: str, inputs: Any, fn: Callable[[], Awaitable[T]]
    ) -> T:
        """The memoised result of ``fn()`` for (step, prompt version, inputs, repetition)."""
        if self.max_entries == 0:
            return await fn()
        key = memo_key(step, prompt_version, inputs)
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop is a new run (sync evaluate): start afresh
            self.clear()
            self._loop = loop
        if key in self._done:
            self._done.move_to_end(key)
            self._hit(step, prompt_version)
            return self._done[key]  # type: ignore[no-any-return]
        flight = self._flight.get(key)
        if flight is not None and flight[0] is loop:
            shared = flight[1]
            try:
                value = await asyncio.shield(shared)
            except asyncio.CancelledError:
                if shared.cancelled():  # the first request was cancelled, not this one: ask again
                    return await self.get_or_run(step, prompt_version, inputs, fn)
                raise
            self._hit(step, prompt_version)
            return value  # type: ignore[no-any-return]
        self.misses += 1
        fut: asyncio.Future[Any] = loop.create_future()
        self._flight[key] = (loop, fut)
        try:
            value = await fn()
        except BaseException as e:
            if not fut.done():
                if isinstance(e, asyncio.CancelledError):
                    fut.cancel()
                else:
                    fut.set_exception(e)
                    fut.exception()  # mark retrieved: no "never retrieved" warning without waiters
            raise
        else:
            fut.set_result(value)
            self._done[key] = value
            while len(self._done) > self.max_entries:
                self._done.popitem(last=False)
            return value
        finally:
            if self._flight.get(key, (None, None))[1] is fut:
                del self._flight[key]
