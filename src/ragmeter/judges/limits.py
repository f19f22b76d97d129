"""The limits a judge's requests run under: the endpoint's request slots (:class:`RequestSlots`),
each request's time (:func:`within`), and token buckets for requests-per-minute and
tokens-per-minute limits (:class:`TokenBucket`, :class:`RateLimiter`).

A bucket refills at ``per_minute / 60`` units per second up to ``capacity``. Waiters are served in
order (a lock), so one big request is not starved by many small ones. ``adjust`` corrects a
reservation after the fact (the tokens-per-minute bucket reserves an estimate before a call and
settles the real count after it); the level may go negative, which delays later requests.
"""

from __future__ import annotations

import asyncio
import heapq
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class TokenBucket:
    def __init__(
        self,
        per_minute: float,
        *,
        capacity: float | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if per_minute <= 0:
            raise ValueError("per_minute must be > 0")
        self.rate = per_minute / 60.0  # units per second
        self.capacity = float(capacity if capacity is not None else max(1.0, self.rate))
        self._level = self.capacity
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self.waited_s = 0.0

    def _get_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock = asyncio.Lock()
            self._lock_loop = loop
        return self._lock

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self._level = min(self.capacity, self._level + elapsed * self.rate)

    @property
    def level(self) -> float:
        self._refill()
        return self._level

    async def acquire(self, amount: float = 1.0) -> float:
        """Take ``amount`` (capped at the capacity), waiting as needed. Returns the seconds waited."""
        amount = min(float(amount), self.capacity)
        waited = 0.0
        async with self._get_lock():
            while True:
                self._refill()
                if self._level >= amount:
                    self._level -= amount
                    self.waited_s += waited
                    return waited
                delay = (amount - self._level) / self.rate
                waited += delay
                await self._sleep(delay)

    def adjust(self, delta: float) -> None:
        """Take ``delta`` more units (give back when negative) without waiting."""
        self._refill()
        self._level = min(self.capacity, self._level - delta)


class RateLimiter:
    """Both limits of one endpoint: ``rpm`` (burst: one second's worth) and ``tpm`` (burst: ten
    seconds' worth, at least one request's estimate)."""

    def __init__(
        self,
        rpm: int | None,
        tpm: int | None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.requests = (
            TokenBucket(rpm, capacity=max(1.0, rpm / 60.0), clock=clock, sleep=sleep) if rpm else None
        )
        self.tokens = (
            TokenBucket(tpm, capacity=max(1.0, tpm / 6.0), clock=clock, sleep=sleep) if tpm else None
        )

    @property
    def active(self) -> bool:
        return self.requests is not None or self.tokens is not None

    async def acquire(self, est_tokens: int) -> float:
        waited = 0.0
        if self.requests is not None:
            waited += await self.requests.acquire(1)
        if self.tokens is not None:
            waited += await self.tokens.acquire(max(1, est_tokens))
        return waited

    def settle(self, est_tokens: int, actual_tokens: int) -> None:
        if self.tokens is not None:
            reserved = min(float(max(1, est_tokens)), self.tokens.capacity)
            self.tokens.adjust(actual_tokens - reserved)


class RequestSlots:
    """The requests an endpoint may have in flight: ``n`` slots, handed out by priority.

    A waiter with a lower ``priority`` number goes first, and waiters of equal priority go in
    order of arrival. A freed slot passes straight to the next waiter (a request that arrives
    meanwhile does not take it over). The judge sends a request that later requests wait on (a
    sample's claims, which its verdicts then check) before the ones nothing waits on, so every
    sample's chain of requests gets going early and the end of a run is not a tail of second steps
    with most slots idle. Bound to the event loop it is first used in (as ``asyncio.Semaphore``).
    """

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError("a request limit must be >= 1")
        self.free = int(n)
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._seq = 0

    async def acquire(self, priority: int = 1) -> None:
        if self.free > 0 and not self._waiters:
            self.free -= 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        heapq.heappush(self._waiters, (priority, self._seq, fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # the slot was handed over just before: pass it on
                self.release()
            else:
                self._waiters = [w for w in self._waiters if w[2] is not fut]
                heapq.heapify(self._waiters)
            raise

    def release(self) -> bool:
        """Free a slot; True when it went straight to a waiter."""
        while self._waiters:
            _, _, fut = heapq.heappop(self._waiters)
            if not fut.done():
                fut.set_result(None)  # the slot goes to this waiter: ``free`` stays as it is
                return True
        self.free += 1
        return False


if sys.version_info >= (3, 11):

    async def within(aw: Awaitable[T], timeout_s: float | None) -> T:
        """``await aw``, or ``TimeoutError`` after ``timeout_s`` seconds (None: no limit), in the
        calling task: ``asyncio.wait_for`` (before Python 3.12) runs ``aw`` as a new task, which
        starts only after everything else the event loop has ready, so at 64 requests in flight a
        request whose slot was free went out behind hundreds of other steps. (Python 3.10:
        ``asyncio.wait_for``, which raises ``asyncio.TimeoutError``.)"""
        async with asyncio.timeout(timeout_s):
            return await aw

else:  # pragma: no cover - Python 3.10

    async def within(aw: Awaitable[T], timeout_s: float | None) -> T:
        """``await aw``, or ``TimeoutError`` after ``timeout_s`` seconds (None: no limit)."""
        return await asyncio.wait_for(aw, timeout=timeout_s)
