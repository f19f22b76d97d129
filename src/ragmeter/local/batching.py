"""Calls to a local model from samples in flight go to the model together.

The runner scores many samples at once (``--concurrency``: 16 requests in flight, eight jobs a
slot), and each of them asks the local judge for a few small things: one ``embed`` call for a
claim set and its context sentences, one for a question and its parts, a verifier call for one or
two claims. One at a time, each would pay the model's fixed cost per call (the USE encoder streams
its weight matrices once per call: about 2 ms, as much as encoding two sentences; a worker-thread
hop each). :class:`CallBatcher` gathers them: while ``workers`` batches are running, the calls
that arrive wait and go together in the next batch, in one worker-thread call. With one sample in
flight it changes nothing (one call, one batch).

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


class CallBatcher(Generic[T, R]):
    """Runs ``fn`` (blocking: items -> one result per item) in worker threads on batches of the
    calls that arrive while earlier batches run.

    ``workers``: batches that may run at once per event loop (the model's threads: 2 for the USE
    encoder on 2 cores, 1 for a model that is not thread-safe). ``executor``: where ``fn`` runs
    (default: the event loop's default executor)."""

    def __init__(
        self, fn: Callable[[list[T]], Sequence[R]], *, workers: int = 1, executor: Executor | None = None
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self._fn = fn
        self.workers = workers
        self._executor = executor
        self._lock = threading.Lock()  # calls may come from event loops in several threads
        self._pending: list[tuple[list[T], asyncio.Future[list[R]]]] = []
        self._running: dict[int, int] = {}  # per event loop: drain tasks running
        self._tasks: set[asyncio.Task[None]] = set()
        #: batches run and items they held, for benchmarks and tests
        self.batches = 0
        self.items = 0

    async def submit(self, items: Sequence[T]) -> list[R]:
        """``fn``'s results for ``items``, computed in one batch with the calls in flight."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[R]] = loop.create_future()
        with self._lock:
            self._pending.append((list(items), fut))
            start = self._running.get(id(loop), 0) < self.workers
            if start:
                self._running[id(loop)] = self._running.get(id(loop), 0) + 1
        if start:
            task = loop.create_task(self._drain(loop))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await fut

    def _take(self, loop: asyncio.AbstractEventLoop) -> list[tuple[list[T], asyncio.Future[list[R]]]]:
        with self._lock:
            batch = [p for p in self._pending if p[1].get_loop() is loop]
            if batch:
                self._pending = [p for p in self._pending if p[1].get_loop() is not loop]
            else:  # this drain ends: decided under the lock, so no call is left without one
                left = self._running[id(loop)] - 1
                if left:
                    self._running[id(loop)] = left
                else:
                    del self._running[id(loop)]
            return batch

    async def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            await asyncio.sleep(0)  # let the calls of this tick join the first batch
            while batch := self._take(loop):
                await self._run(loop, batch)
        except BaseException:  # cancelled (the loop closes): this drain no longer counts
            with self._lock:
                left = self._running.get(id(loop), 1) - 1
                if left > 0:
                    self._running[id(loop)] = left
                else:  # the loop's last drain: its waiting calls will not be run
                    self._running.pop(id(loop), None)
                    for _, fut in [p for p in self._pending if p[1].get_loop() is loop]:
                        fut.cancel()
                    self._pending = [p for p in self._pending if p[1].get_loop() is not loop]
            raise

    async def _run(
        self, loop: asyncio.AbstractEventLoop, batch: list[tuple[list[T], asyncio.Future[list[R]]]]
    ) -> None:
        flat = [x for items, _ in batch for x in items]
        try:
            out = await self._call(loop, flat)
        except Exception as exc:
            if len(batch) == 1:
                _settle(batch[0][1], exc)
                return
            for items, fut in batch:  # find the call that fails; the others still get results
                try:
                    _settle(fut, await self._call(loop, items))
                except Exception as one:
                    _settle(fut, one)
            return
        k = 0
        for items, fut in batch:
            _settle(fut, out[k : k + len(items)])
            k += len(items)

    async def _call(self, loop: asyncio.AbstractEventLoop, items: list[T]) -> list[R]:
        out = list(await loop.run_in_executor(self._executor, self._fn, items))
        if len(out) != len(items):
            raise RuntimeError(f"a batch of {len(items)} items gave {len(out)} results")
        self.batches += 1
        self.items += len(items)
        return out


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
