"""ModelClient: the wrapper around a provider that owns cache, limits, timeouts, retries and usage.

One client per endpoint. For each request: cache lookup; rpm/tpm limiter; a request slot
(:attr:`ModelClient.concurrency` of them: ``JudgeConfig.concurrency`` when set, else the run's
value; :class:`~ragmeter.judges.limits.RequestSlots` hands a freed slot to a request that later
requests wait on, ``ChatRequest.leads``, before the others); the provider call under ``timeout_s``,
in the calling task; on :class:`RateLimitError` /
:class:`TransportError` a retry after ``max(retry_after, backoff)`` with exponential backoff and
full jitter (the slot is released while sleeping); any other :class:`JudgeError` raises at
once; after an :class:`EndpointError` (the endpoint cannot serve the run) the client sends nothing
more in that run (event loop) and raises it again for every call. A connection that cannot be
opened at all (:class:`Unreachable`: refused, a name that does not resolve, TLS that failed) is
such an error while the endpoint has not answered once: a wrong ``--base-url`` or a server that
is not running stops the run at its first request, not after minutes of retries; once the endpoint
has answered, it is a transport error like any other and retried. Every finished call (success, cache hit or final failure)
is appended to the running job's :class:`CallLog` as a :class:`CallRecord`, and added to the
client's running totals.

Before each retry a :class:`RetryNotice` (error, attempt, next try in N s) goes to whoever listens
(:data:`current_retry_listener`: the runner's progress display).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ragmeter.errors import (
    EndpointError,
    JudgeError,
    RateLimitError,
    TransportError,
    Unreachable,
    UnsupportedStepError,
)
from ragmeter.judges.cache import LLMCache, NullCache, chat_key, embed_key, provider_identity
from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.limits import RateLimiter, RequestSlots, within
from ragmeter.judges.tokens import estimate_message_tokens, estimate_tokens, is_estimated
from ragmeter.judges.types import (
    CallRecord,
    ChatRequest,
    ChatResponse,
    RetryNotice,
    Usage,
    notify_retry,
    record_call,
)

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

EMBED_BATCH_SIZE = 64
#: requests in flight per endpoint when neither the judge's config nor a run sets it (the
#: default of ``RunConfig.concurrency``)
DEFAULT_CONCURRENCY = 16


class ModelClient:
    """Wraps one provider (chat and/or embeddings) with the behaviour every provider shares.

    ``sleep``, ``rng`` and ``clock`` are for tests (record sleeps, fix the jitter, drive the rate
    limiter's clock).
    """

    def __init__(
        self,
        provider: Any,
        config: JudgeConfig | None = None,
        cache: LLMCache | NullCache | None = None,
        *,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
        clock: Callable[[], float] | None = None,
        embed_batch_size: int = EMBED_BATCH_SIZE,
    ) -> None:
        self.provider = provider
        self.config = config or JudgeConfig()
        self.cache: LLMCache | NullCache = cache if cache is not None else NullCache()
        self._sleep: Sleep = sleep or asyncio.sleep
        self._rng = rng or random.Random()
        self.embed_batch_size = max(1, int(embed_batch_size))
        configure = getattr(provider, "configure", None)
        if callable(configure):
            configure(self.config)
        self._identity = provider_identity(provider)
        self._limiter = RateLimiter(
            self.config.rpm, self.config.tpm, sleep=self._sleep, clock=clock or time.monotonic
        )
        self._sem: RequestSlots | None = None
        self._sem_key: tuple[asyncio.AbstractEventLoop, int] | None = None
        self.run_concurrency = DEFAULT_CONCURRENCY
        # running totals
        self.usage = Usage()
        self.calls = 0
        self.failed_calls = 0
        self.retries = 0
        self.estimated_usage = False
        self.in_flight = 0
        self.peak_in_flight = 0
        # the EndpointError that stopped this endpoint in the running event loop (one per run):
        # later calls raise it without a request, so the requests already out are the only ones
        # the broken endpoint sees
        self._stopped: tuple[asyncio.AbstractEventLoop, EndpointError] | None = None
        #: whether a connection to the endpoint has opened (a reply, or an error after connecting):
        #: until then an :class:`Unreachable` stops the run
        self.answered = False
        self._wave_out: asyncio.Future[None] | None = None  # see first_wave_out()
        self.sleeps: list[float] = []  # backoff sleeps, in order

    # -- identity ---------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return f"{getattr(self.provider, 'name', 'provider')}:{getattr(self.provider, 'model', '')}"

    @property
    def model(self) -> str:
        return str(getattr(self.provider, "model", ""))

    def describe(self) -> dict[str, Any]:
        describe = getattr(self.provider, "describe", None)
        return {
            "provider": describe() if callable(describe) else {"name": self.name},
            "config": {**self.config.to_dict(), "concurrency": self.concurrency},
            "cache": self.cache.describe(),
        }

    def cost(self) -> float | None:
        """Cost of the tokens used so far at the configured prices (None without prices)."""
        return self.config.cost(
            self.usage.prompt_tokens, self.usage.completion_tokens, cached_tokens=self.usage.cached_tokens
        )

    def totals(self) -> dict[str, Any]:
        d: dict[str, Any] = dict(self.usage.to_dict())
        d.update(
            calls=self.calls,
            failed_calls=self.failed_calls,
            retries=self.retries,
            peak_in_flight=self.peak_in_flight,
            estimated=self.estimated_usage,
            cost=self.cost(),
        )
        return d

    async def aclose(self) -> None:
        close = getattr(self.provider, "aclose", None)
        if callable(close):
            await close()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the shared call path -----------------------------------------------------------------------

    @property
    def concurrency(self) -> int:
        """Requests in flight at most: the config's value when set, else the run's."""
        return self.config.concurrency if self.config.concurrency is not None else self.run_concurrency

    def set_run_concurrency(self, n: int) -> None:
        """The run's requests-in-flight limit; applies unless the config sets ``concurrency``."""
        self.run_concurrency = max(1, int(n))

    def _semaphore(self) -> RequestSlots:
        key = (asyncio.get_running_loop(), self.concurrency)
        if self._sem is None or self._sem_key != key:  # a new event loop, or a new run's limit
            self._sem = RequestSlots(key[1])
            self._sem_key = key
        return self._sem

    def _backoff(self, attempt: int) -> float:
        cfg = self.config
        ceiling = min(cfg.backoff_max_s, cfg.backoff_base_s * (2 ** (attempt - 1)))
        return self._rng.uniform(0.0, ceiling)

    async def _call(self, fn: Callable[[], Awaitable[T]], est_tokens: int, *, leads: bool = False) -> tuple[T, int]:
        """Run ``fn`` with limits, timeout and retries. Returns (result, attempts). ``leads``: other
        requests wait on this one's reply, so it takes a free request slot before those that do not
        (:class:`~ragmeter.judges.limits.RequestSlots`)."""
        cfg = self.config
        sem = self._semaphore()
        attempt = 0
        while True:
            attempt += 1
            if self._limiter.active:
                await self._limiter.acquire(est_tokens)
            error: JudgeError
            await sem.acquire(0 if leads else 1)
            try:
                stopped = self._stopped
                if stopped is not None and stopped[0] is asyncio.get_running_loop():
                    raise _again(stopped[1])  # the endpoint failed for good: send nothing more
                self.in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
                if self.in_flight >= self.concurrency:
                    self._wake_wave()
                try:
                    result = await within(fn(), cfg.timeout_s)
                    self.answered = True
                    if attempt > 1:
                        notify_retry(None)
                    return result, attempt
                except asyncio.TimeoutError:
                    error = TransportError(f"{self.name}: request timed out after {cfg.timeout_s}s")
                except Unreachable as e:
                    if self.answered:
                        error = e
                    else:  # never reached in this run: nothing to retry for
                        fatal = _unreachable(e, self.name)
                        fatal.attempts = attempt  # type: ignore[attr-defined]
                        self._stopped = (asyncio.get_running_loop(), fatal)
                        raise fatal from e
                except (RateLimitError, TransportError) as e:
                    self.answered = True  # a connection opened (a 429 or 5xx came back, or it broke later)
                    error = e
                except EndpointError as e:
                    e.attempts = attempt  # type: ignore[attr-defined]
                    self._stopped = (asyncio.get_running_loop(), e)
                    raise
                except JudgeError as e:
                    self.answered = True  # the server replied, with something this request cannot use
                    e.attempts = attempt  # type: ignore[attr-defined]
                    raise
                finally:
                    self.in_flight -= 1
            finally:
                sem.release()
            # the slot is released: sleep outside it
            if attempt > cfg.max_retries:
                error.attempts = attempt  # type: ignore[union-attr]
                raise error
            retry_after = getattr(error, "retry_after", None)
            delay = self._backoff(attempt)
            if retry_after is not None:
                delay = max(delay, min(float(retry_after), cfg.backoff_max_s))
            self.retries += 1
            self.sleeps.append(delay)
            notify_retry(RetryNotice(self.name, _short_error(error), attempt, cfg.max_retries + 1, delay))
            await self._sleep(delay)

    def _finish(self, record: CallRecord) -> None:
        self.usage = self.usage + record.usage
        self.calls += 1
        if record.error is not None:
            self.failed_calls += 1
        record_call(record)
        self._wake_wave()

    def _wake_wave(self) -> None:
        wave, self._wave_out = self._wave_out, None
        if wave is not None and not wave.done():
            wave.set_result(None)

    async def first_wave_out(self) -> None:
        """Return once every request slot has been taken or a call has finished (at once if
        either has happened): by then the run's first wave of requests is on the wire, and until
        the replies come the process only waits on the endpoint."""
        if self.calls or self.peak_in_flight >= self.concurrency:
            return
        if self._wave_out is None or self._wave_out.get_loop() is not asyncio.get_running_loop():
            self._wave_out = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._wave_out)

    # -- chat ---------------------------------------------------------------------------------------

    async def generate(self, request: ChatRequest) -> ChatResponse:
        generate = getattr(self.provider, "generate", None)
        if not callable(generate):
            raise UnsupportedStepError(self.name, request.step or "generate", "this provider has no chat")
        key = chat_key(self._identity, request) if self.cache.stores else None
        hit = self.cache.get_chat(key) if key is not None else None
        if hit is not None:
            usage = Usage(cached_requests=1)
            self._finish(
                CallRecord(
                    step=request.step,
                    model=self.model,
                    reply=hit.text,
                    usage=usage,
                    cached=True,
                    latency_s=0.0,
                    prompt_version=request.prompt_version,
                    attempts=0,
                )
            )
            return ChatResponse(text=hit.text, usage=usage, model=hit.model, finish_reason=hit.finish_reason)

        est = estimate_message_tokens(request.messages) + (request.max_tokens or 0) // 4
        started = time.monotonic()
        try:
            response, attempts = await self._call(lambda: self.provider.generate(request), est, leads=request.leads)
        except JudgeError as e:
            attempts = int(getattr(e, "attempts", 1))
            self._finish(
                CallRecord(
                    step=request.step,
                    model=self.model,
                    reply=e.raw or "",
                    usage=Usage(requests=attempts),
                    cached=False,
                    latency_s=time.monotonic() - started,
                    prompt_version=request.prompt_version,
                    attempts=attempts,
                    error=f"{type(e).__name__}: {e}",
                )
            )
            raise
        u = response.usage
        if is_estimated(u):
            self.estimated_usage = True
        # failed attempts were requests too
        usage = Usage(
            requests=max(1, u.requests) + attempts - 1,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            cached_tokens=u.cached_tokens,
        )
        self._limiter.settle(est, usage.total_tokens)
        if key is not None:
            self.cache.put_chat(key, ChatResponse(response.text, usage, response.model, response.finish_reason))
        self._finish(
            CallRecord(
                step=request.step,
                model=self.model,
                reply=response.text,
                usage=usage,
                cached=False,
                latency_s=time.monotonic() - started,
                prompt_version=request.prompt_version,
                attempts=attempts,
            )
        )
        return ChatResponse(response.text, usage, response.model, response.finish_reason)

    # -- embeddings ----------------------------------------------------------------------------------

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(n, d) float32 embeddings (as the provider returns them, not normalised); cached per text."""
        import numpy as np

        embed = getattr(self.provider, "embed", None)
        if not callable(embed):
            raise UnsupportedStepError(self.name, "embed", "this provider has no embeddings")
        items = list(texts)
        if not items:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [embed_key(self._identity, t) for t in items]
        found: dict[int, np.ndarray] = {}
        for i, k in enumerate(keys):
            v = self.cache.get_embedding(k)
            if v is not None:
                found[i] = v
        missing = [i for i in range(len(items)) if i not in found]
        if found:
            usage = Usage(cached_requests=1)
            self._finish(
                CallRecord(
                    step="embed",
                    model=self.model,
                    reply=f"{len(found)} cached vector(s)",
                    usage=usage,
                    cached=True,
                    latency_s=0.0,
                    attempts=0,
                )
            )
        for start in range(0, len(missing), self.embed_batch_size):
            idx = missing[start : start + self.embed_batch_size]
            batch = [items[i] for i in idx]
            await self._embed_batch(batch, [keys[i] for i in idx], idx, found)
        dims = {v.shape[0] for v in found.values()}
        if len(dims) != 1:
            raise JudgeError(f"{self.name}: embeddings of different sizes {sorted(dims)}")
        return np.stack([found[i] for i in range(len(items))]).astype(np.float32)

    async def _embed_batch(
        self, batch: list[str], keys: list[str], idx: list[int], found: dict[int, np.ndarray]
    ) -> None:
        import numpy as np

        est = sum(estimate_tokens(t) for t in batch)
        started = time.monotonic()
        try:
            (arr, u), attempts = await self._call(lambda: self.provider.embed(batch), est)
        except JudgeError as e:
            attempts = int(getattr(e, "attempts", 1))
            self._finish(
                CallRecord(
                    step="embed",
                    model=self.model,
                    reply=e.raw or "",
                    usage=Usage(requests=attempts),
                    cached=False,
                    latency_s=time.monotonic() - started,
                    attempts=attempts,
                    error=f"{type(e).__name__}: {e}",
                )
            )
            raise
        arr = np.asarray(arr, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != len(batch):
            raise JudgeError(
                f"{self.name}: expected {len(batch)} embeddings, got an array of shape {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            raise JudgeError(f"{self.name}: the embeddings contain NaN or infinite values")
        if is_estimated(u):
            self.estimated_usage = True
        usage = Usage(requests=max(1, u.requests) + attempts - 1, prompt_tokens=u.prompt_tokens)
        self._limiter.settle(est, usage.total_tokens)
        for j, i in enumerate(idx):
            found[i] = arr[j]
            self.cache.put_embedding(keys[j], arr[j])
        self._finish(
            CallRecord(
                step="embed",
                model=self.model,
                reply=f"{len(batch)} vector(s) of dimension {arr.shape[1]}",
                usage=usage,
                cached=False,
                latency_s=time.monotonic() - started,
                attempts=attempts,
            )
        )


def _unreachable(error: Unreachable, name: str) -> EndpointError:
    """The run-stopping error for an endpoint that no connection reaches before its first reply."""
    where = error.endpoint or name
    return EndpointError(
        f"{where}: {str(error).partition('connection error: ')[2] or error} -- is the server running, "
        "and is the base URL right? (nothing was retried: no request of this run has reached it)",
        reason="unreachable",
        endpoint=error.endpoint,
    )


def _again(error: EndpointError) -> EndpointError:
    """A fresh copy of ``error`` for another caller (one exception object is not raised twice)."""
    again = EndpointError(
        str(error),
        reason=error.reason,
        endpoint=error.endpoint,
        status=error.status,
        server_message=error.server_message,
        raw=error.raw,
    )
    again.attempts = 0  # type: ignore[attr-defined]
    return again


def _short_error(error: BaseException) -> str:
    """``HTTP 500``, ``HTTP 429``, ``timeout``, ``connection error``... for the progress line."""
    import re

    text = str(error)
    m = re.search(r"HTTP (\d{3})", text)
    if m:
        return f"HTTP {m.group(1)}"
    for word in ("timed out", "connection error", "malformed response"):
        if word in text:
            return word
    return type(error).__name__
