"""Calls to a local model from samples in flight go to the model together.

The runner scores many samples at once (``--concurrency``: 16 requests in flight, eight jobs a
slot), and each of them asks the local judge for a few small things: one ``embed`` call for a
claim set and its context sentences, one for a question and its parts, a verifier call for one or
two claims. One at a time, each would pay the model's fixed cost per call (the USE encoder streams
its weight matrices once per call: about 2 ms, as much as encoding two sentences; a worker-thread
hop each). :class:`CallBatcher` gathers them: while ``workers`` batches are running, the calls
that arrive wait and go together in the next batch, in one worker-thread call. With one sample in
flight it changes nothing (one call, one batch). When several workers are free, the waiting items
are divided among them (``share``: the fewest items worth a batch of their own): samples that
reach the same step together would otherwise all wait for one worker while the other core idles,
and keep doing so step after step (measured: with eight samples in flight, the encoder never ran
two batches at once; docs/performance.md, "Local judge speed").

A batch's results are the results of its calls run on their own, as long as the function treats
its items independently (the embedders encode each text on its own; the verifier reads each pair
on its own: see :mod:`ragmeter.local.verifier`). If a batch fails, each of its calls is run again
alone, so an error reaches the call that caused it and the others still get their results.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class _Call(Generic[T, R]):
    """One :meth:`CallBatcher.submit`: its items, its future and the results gathered so far (its
    items may be read in more than one batch)."""

    __slots__ = ("fut", "items", "left", "out")

    def __init__(self, items: list[T], fut: asyncio.Future[list[R]]) -> None:
        self.items = items
        self.fut = fut
        self.out: list[R | None] = [None] * len(items)
        self.left = len(items)


#: a part of a call waiting for a batch: (call, first item, end)
_Piece = tuple[_Call[T, R], int, int]


class CallBatcher(Generic[T, R]):
    """Runs ``fn`` (blocking: items -> one result per item) in worker threads on batches of the
    calls that arrive while earlier batches run.

    ``workers``: batches that may run at once per event loop (the model's threads: 2 for the USE
    encoder on 2 cores, 1 for a model that is not thread-safe). ``executor``: where ``fn`` runs
    (default: the event loop's default executor). ``share``: the fewest items worth a batch of
    their own. With it, when more than one worker is free, the waiting items are divided among them
    (in order; a call's items may go to two batches) in batches of at least ``share`` items, so
    that calls made at the same moment (samples that reached the same step together) keep every
    worker busy instead of waiting for one; None (the default): they go in one batch."""

    def __init__(
        self,
        fn: Callable[[list[T]], Sequence[R]],
        *,
        workers: int = 1,
        executor: Executor | None = None,
        share: int | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if share is not None and share < 1:
            raise ValueError(f"share must be >= 1 or None, got {share}")
        self._fn = fn
        self.workers = workers
        self.share = share
        self._executor = executor
        self._lock = threading.Lock()  # calls may come from event loops in several threads
        self._pending: list[_Piece[T, R]] = []
        self._running: dict[int, int] = {}  # per event loop: drain tasks running
        self._busy: dict[int, int] = {}  # per event loop: of them, those running a batch
        self._tasks: set[asyncio.Task[None]] = set()
        #: batches run and items they held, for benchmarks and tests
        self.batches = 0
        self.items = 0

    async def submit(self, items: Sequence[T]) -> list[R]:
        """``fn``'s results for ``items``, computed in one batch with the calls in flight."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[R]] = loop.create_future()
        call: _Call[T, R] = _Call(list(items), fut)
        if not call.items:
            return []
        with self._lock:
            self._pending.append((call, 0, len(call.items)))
            start = self._claim_drain(loop)
        if start:
            self._start_drain(loop)
        return await fut

    def _claim_drain(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether a new drain is to start for ``loop`` (counted now; under the lock)."""
        if self._running.get(id(loop), 0) >= self.workers:
            return False
        self._running[id(loop)] = self._running.get(id(loop), 0) + 1
        return True

    def _start_drain(self, loop: asyncio.AbstractEventLoop) -> None:
        task = loop.create_task(self._drain(loop))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _take(self, loop: asyncio.AbstractEventLoop) -> tuple[list[_Piece[T, R]], bool]:
        """The next batch of ``loop``'s waiting items ([]: this drain ends), and whether another
        drain is to start for the items left waiting."""
        with self._lock:
            mine = [p for p in self._pending if p[0].fut.get_loop() is loop]
            if not mine:  # this drain ends: decided under the lock, so no call is left without one
                left = self._running[id(loop)] - 1
                if left:
                    self._running[id(loop)] = left
                else:
                    del self._running[id(loop)]
                    self._busy.pop(id(loop), None)
                return [], False
            others = [p for p in self._pending if p[0].fut.get_loop() is not loop]
            free = self.workers - self._busy.get(id(loop), 0)
            total = sum(end - first for _, first, end in mine)
            parts = 1 if self.share is None else min(free, total // self.share)
            batch: list[_Piece[T, R]] = mine
            rest: list[_Piece[T, R]] = []
            if parts >= 2:  # this batch's share, in order; the last piece taken may be cut
                quota = -(-total // parts)
                batch, n = [], 0
                for call, first, end in mine:
                    if n >= quota:
                        rest.append((call, first, end))
                        continue
                    cut = min(end, first + quota - n)
                    batch.append((call, first, cut))
                    n += cut - first
                    if cut < end:
                        rest.append((call, cut, end))
            self._pending = others + rest
            self._busy[id(loop)] = self._busy.get(id(loop), 0) + 1
            return batch, bool(rest) and self._claim_drain(loop)

    async def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            await asyncio.sleep(0)  # let the calls of this tick join the first batch
            while True:
                batch, another = self._take(loop)
                if not batch:
                    break
                if another:
                    self._start_drain(loop)
                try:
                    await self._run(loop, batch)
                finally:
                    with self._lock:
                        self._busy[id(loop)] -= 1
        except BaseException:  # cancelled (the loop closes): this drain no longer counts
            with self._lock:
                left = self._running.get(id(loop), 1) - 1
                if left > 0:
                    self._running[id(loop)] = left
                else:  # the loop's last drain: its waiting calls will not be run
                    self._running.pop(id(loop), None)
                    self._busy.pop(id(loop), None)
                    for call, _, _ in [p for p in self._pending if p[0].fut.get_loop() is loop]:
                        call.fut.cancel()
                    self._pending = [p for p in self._pending if p[0].fut.get_loop() is not loop]
            raise

    async def _run(self, loop: asyncio.AbstractEventLoop, batch: list[_Piece[T, R]]) -> None:
        flat = [x for call, first, end in batch for x in call.items[first:end]]
        try:
            out = await self._call(loop, flat)
        except Exception as exc:
            if len(batch) == 1:
                _settle(batch[0][0].fut, exc)
                return
            for call, first, end in batch:  # find the call that fails; the others still get results
                try:
                    _fill(call, first, await self._call(loop, call.items[first:end]))
                except Exception as one:
                    _settle(call.fut, one)
            return
        k = 0
        for call, first, end in batch:
            _fill(call, first, out[k : k + end - first])
            k += end - first

    async def _call(self, loop: asyncio.AbstractEventLoop, items: list[T]) -> list[R]:
        out = list(await loop.run_in_executor(self._executor, self._fn, items))
        if len(out) != len(items):
            raise RuntimeError(f"a batch of {len(items)} items gave {len(out)} results")
        self.batches += 1
        self.items += len(items)
        return out


def _fill(call: _Call[T, R], first: int, results: list[R]) -> None:
    """Results for ``call``'s items from ``first`` on; the call is settled once it has them all."""
    call.out[first : first + len(results)] = results
    call.left -= len(results)
    if call.left == 0:
        _settle(call.fut, call.out)  # type: ignore[arg-type]


def _settle(fut: asyncio.Future[list[R]], result: list[R] | BaseException) -> None:
    if fut.done():  # the caller was cancelled
        return
    if isinstance(result, BaseException):
        fut.set_exception(result)
    else:
        fut.set_result(result)


#: how much lower (``nice``) the threads that run local models are scheduled (see below)
BACKGROUND_NICE = 10


def lower_thread_priority() -> None:
    """Schedule the calling thread below the rest of the process (Linux: ``nice`` +10 for this
    thread only). The threads that load and run a local model use it: when every core is busy, the
    event loop, which keeps the judge's request slots full, is served first, and the model's work
    takes the time left. Measured with an LLM judge and the local embedder at 64 requests in flight:
    docs/performance.md. Elsewhere (or if the OS refuses) nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICE))
