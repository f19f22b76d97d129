"""ModelClient over real HTTP against the loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers.server import FakeOpenAIServer, load_fixture
from ragmeter.errors import ConfigError, EndpointError, JudgeError, RateLimitError, TransportError
from ragmeter.judges import JudgeConfig, LLMCache, ModelClient, OpenAICompatibleProvider
from ragmeter.judges.limits import TokenBucket
from ragmeter.judges.providers.openai_compat import parse_retry_after
from ragmeter.judges.types import CallLog, ChatRequest, Message, current_call_log

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 5.0}


def req(text: str = "hello", *, schema: dict | None = None, step: str = "test") -> ChatRequest:
    return ChatRequest(messages=(Message("user", text),), json_schema=schema, step=step, prompt_version="1")


def client_for(
    server: FakeOpenAIServer,
    *,
    cache: LLMCache | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    **cfg: Any,
) -> ModelClient:
    provider = OpenAICompatibleProvider("fake-model", base_url=server.url)
    return ModelClient(provider, JudgeConfig(**{**FAST, **cfg}), cache, sleep=sleep)


class RecordingSleep:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


async def test_plain_request_and_usage(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.responder = lambda body: "pong:" + body["messages"][-1]["content"]
    log = CallLog()
    token = current_call_log.set(log)
    try:
        async with client_for(fake_openai_server) as client:
            resp = await client.generate(req("ping"))
    finally:
        current_call_log.reset(token)
    assert resp.text == "pong:ping"
    assert resp.usage.requests == 1 and resp.usage.prompt_tokens >= 1 and resp.usage.completion_tokens >= 1
    assert client.usage == resp.usage
    assert [c.step for c in log.calls] == ["test"] and log.calls[0].reply == "pong:ping"
    assert log.calls[0].attempts == 1 and not log.calls[0].cached
    body = fake_openai_server.requests[0]
    assert body["model"] == "fake-model" and body["temperature"] == 0.0 and "max_tokens" not in body


async def test_429_retry_after_is_honoured(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.retry_after = "0.25"
    fake_openai_server.force("429", "429")
    sleep = RecordingSleep()
    log = CallLog()
    token = current_call_log.set(log)
    try:
        async with client_for(
            fake_openai_server, sleep=sleep, backoff_base_s=0.0, backoff_max_s=1.0
        ) as client:
            resp = await client.generate(req())
    finally:
        current_call_log.reset(token)
    assert resp.text == "OK"
    # backoff jitter is 0 with base 0, so the sleeps are exactly the server's Retry-After
    assert sleep.calls == [pytest.approx(0.25), pytest.approx(0.25)]
    assert log.calls[0].attempts == 3 and resp.usage.requests == 3
    assert fake_openai_server.by_status == {429: 2, 200: 1}


async def test_retry_after_is_a_floor_under_jittered_backoff(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.retry_after = "0.01"
    fake_openai_server.force("429")
    sleep = RecordingSleep()
    async with client_for(fake_openai_server, sleep=sleep, backoff_base_s=0.5, backoff_max_s=0.5) as client:
        await client.generate(req())
    assert len(sleep.calls) == 1 and 0.01 <= sleep.calls[0] <= 0.5


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    date = email.utils.formatdate(1_000_010.0, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=1_000_000.0) == pytest.approx(10.0)
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


async def test_500_then_success(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.force("500")
    async with client_for(fake_openai_server) as client:
        resp = await client.generate(req())
    assert resp.text == "OK" and client.retries == 1
    assert fake_openai_server.by_status == {500: 1, 200: 1}


async def test_malformed_body_is_retried(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.force("malformed")
    async with client_for(fake_openai_server) as client:
        resp = await client.generate(req())
    assert resp.text == "OK" and client.retries == 1


async def test_timeout_is_retried(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.hang_s = 10.0
    fake_openai_server.force("timeout")
    started = time.monotonic()
    async with client_for(fake_openai_server, timeout_s=0.3) as client:
        resp = await client.generate(req())
    assert resp.text == "OK" and client.retries == 1
    assert time.monotonic() - started < fake_openai_server.hang_s  # the timeout cut the hang short


async def test_retries_exhausted_raises_the_last_error_and_records_it(
    fake_openai_server: FakeOpenAIServer,
) -> None:
    fake_openai_server.force("500", "500", "500")
    log = CallLog()
    token = current_call_log.set(log)
    try:
        async with client_for(fake_openai_server, max_retries=2) as client:
            with pytest.raises(TransportError, match="500"):
                await client.generate(req())
    finally:
        current_call_log.reset(token)
    assert fake_openai_server.total_requests == 3
    rec = log.calls[0]
    assert rec.attempts == 3 and rec.error is not None and "TransportError" in rec.error
    assert client.failed_calls == 1 and client.usage.requests == 3


async def test_timeout_exhausted(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.hang_s = 10.0
    fake_openai_server.force("timeout")
    async with client_for(fake_openai_server, timeout_s=0.2, max_retries=0) as client:
        with pytest.raises(TransportError, match="timed out"):
            await client.generate(req())


async def test_non_retryable_400_raises_at_once(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.force("400")
    sleep = RecordingSleep()
    async with client_for(fake_openai_server, sleep=sleep) as client:
        with pytest.raises(JudgeError, match="invalid parameter") as ei:
            await client.generate(req())
    assert not isinstance(ei.value, (RateLimitError, TransportError))
    assert fake_openai_server.total_requests == 1 and sleep.calls == []


async def test_429_exhausted_is_rate_limit_error(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.force("429", "429")
    async with client_for(fake_openai_server, max_retries=1) as client:
        with pytest.raises(RateLimitError) as ei:
            await client.generate(req())
    assert ei.value.retry_after == pytest.approx(0.05)


async def test_concurrency_limit_is_never_exceeded(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.latency_s = 0.05
    async with client_for(fake_openai_server, concurrency=4) as client:
        results = await asyncio.gather(*(client.generate(req(f"q{i}")) for i in range(24)))
    assert len(results) == 24
    assert fake_openai_server.peak_in_flight == 4
    assert client.peak_in_flight == 4


async def test_server_handles_64_concurrent_slow_requests(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.latency_s = 0.3
    async with client_for(fake_openai_server, concurrency=64) as client:
        await asyncio.gather(*(client.generate(req(f"q{i}")) for i in range(64)))
    # all 64 were in the server at once: none waited for another (no wall-clock bound: the machine is shared)
    assert fake_openai_server.peak_in_flight == 64


async def test_backoff_sleep_does_not_hold_the_slot(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.retry_after = "0.3"
    fake_openai_server.force("429")  # only the first request (A) is refused
    done: list[str] = []
    async with client_for(fake_openai_server, concurrency=1, backoff_base_s=0.0, backoff_max_s=1.0) as client:

        async def one(name: str) -> None:
            await client.generate(req(name))
            done.append(name)

        await asyncio.gather(one("A"), one("B"))
    # B used the only slot while A slept off its 429
    assert done == ["B", "A"]


async def test_rpm_limit_spaces_requests(fake_openai_server: FakeOpenAIServer) -> None:
    started = time.monotonic()
    async with client_for(fake_openai_server, rpm=600) as client:  # 10/s, burst 10
        await asyncio.gather(*(client.generate(req(f"q{i}")) for i in range(15)))
    assert time.monotonic() - started >= 0.4


async def test_token_bucket_with_a_fake_clock() -> None:
    now = [0.0]
    slept: list[float] = []

    async def fake_sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    bucket = TokenBucket(60, capacity=2, clock=lambda: now[0], sleep=fake_sleep)  # 1 per second
    for _ in range(4):
        await bucket.acquire(1)
    assert slept == [pytest.approx(1.0), pytest.approx(1.0)]
    bucket.adjust(3)  # settle: 3 more than reserved; the level goes negative
    await bucket.acquire(1)
    assert slept[-1] == pytest.approx(4.0)


async def test_tpm_limit_waits_for_tokens(fake_openai_server: FakeOpenAIServer) -> None:
    now = [0.0]
    slept: list[float] = []

    async def fake_sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    provider = OpenAICompatibleProvider("fake-model", base_url=fake_openai_server.url)
    cfg = JudgeConfig(tpm=600, **FAST)  # 10 tokens/s, burst 100
    async with ModelClient(provider, cfg, sleep=fake_sleep, clock=lambda: now[0]) as client:
        for _ in range(3):
            await client.generate(req("x" * 400))  # ~100 prompt tokens each
    # the first request takes the burst; each later one waits ~10 s (of the fake clock) for tokens
    assert len(slept) == 2 and all(9.0 <= s <= 12.0 for s in slept)


async def test_cache_hit_on_rerun_costs_zero_requests(
    fake_openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "cache.sqlite"
    with LLMCache(path) as cache:
        async with client_for(fake_openai_server, cache=cache) as client:
            first = [await client.generate(req(f"q{i}")) for i in range(5)]
    assert fake_openai_server.total_requests == 5
    log = CallLog()
    token = current_call_log.set(log)
    try:
        with LLMCache(path) as cache:
            async with client_for(fake_openai_server, cache=cache) as client:
                second = [await client.generate(req(f"q{i}")) for i in range(5)]
    finally:
        current_call_log.reset(token)
    assert fake_openai_server.total_requests == 5  # nothing new
    assert [r.text for r in second] == [r.text for r in first]
    assert client.usage.requests == 0 and client.usage.cached_requests == 5 and client.usage.total_tokens == 0
    assert all(c.cached for c in log.calls)


SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}},
    "required": ["a"],
    "additionalProperties": False,
}


async def test_structured_auto_falls_back_and_remembers(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.reject_structured = {"json_schema"}
    async with client_for(fake_openai_server) as client:
        await client.generate(req("one", schema=SCHEMA))
        await client.generate(req("two", schema=SCHEMA))
        await client.generate(req("no schema"))
    assert fake_openai_server.structured_modes == [
        "json_schema",
        "json_object_schema",
        "json_object_schema",
        "none",
    ]
    assert fake_openai_server.requests[1]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert client.provider.describe()["structured_resolved"] == "json_object_schema"


async def test_structured_auto_falls_back_to_prompt_only(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.reject_structured = {"json_schema", "json_object_schema", "json_object"}
    async with client_for(fake_openai_server) as client:
        resp = await client.generate(req("one", schema=SCHEMA))
    assert resp.text == "OK"
    assert fake_openai_server.structured_modes == ["json_schema", "json_object_schema", "json_object", "none"]
    assert client.retries == 0  # fallbacks are not retries


@pytest.mark.parametrize(
    ("mode", "check"),
    [
        (
            "json_schema",
            lambda b: (
                b["response_format"]["json_schema"] == {"name": "test", "schema": SCHEMA, "strict": True}
            ),
        ),
        ("guided_json", lambda b: b["guided_json"] == SCHEMA and "response_format" not in b),
        ("ollama_format", lambda b: b["format"] == SCHEMA),
        ("json_object", lambda b: b["response_format"] == {"type": "json_object"}),
        ("none", lambda b: "response_format" not in b and "guided_json" not in b),
    ],
)
async def test_explicit_structured_modes(fake_openai_server: FakeOpenAIServer, mode: str, check: Any) -> None:
    async with client_for(fake_openai_server, structured=mode) as client:
        await client.generate(
            ChatRequest(messages=(Message("user", "x"),), json_schema=SCHEMA, schema_name="test")
        )
    assert check(fake_openai_server.requests[0])


async def test_explicit_mode_rejected_is_an_error_not_a_fallback(
    fake_openai_server: FakeOpenAIServer,
) -> None:
    fake_openai_server.reject_structured = {"json_schema"}
    async with client_for(fake_openai_server, structured="json_schema") as client:
        with pytest.raises(JudgeError, match="not supported"):
            await client.generate(req(schema=SCHEMA))
    assert fake_openai_server.total_requests == 1


async def test_missing_usage_is_estimated(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.include_usage = False
    async with client_for(fake_openai_server) as client:
        resp = await client.generate(req("x" * 400))
    assert client.estimated_usage is True
    assert resp.usage.prompt_tokens >= 100 and resp.usage.completion_tokens >= 1


async def test_cost_with_prices(fake_openai_server: FakeOpenAIServer) -> None:
    async with client_for(fake_openai_server, prompt_price_per_1k=1.0, completion_price_per_1k=2.0) as client:
        assert client.cost() == 0.0
        await client.generate(req("x" * 4000))
        u = client.usage
        assert client.cost() == pytest.approx(u.prompt_tokens / 1000 + 2 * u.completion_tokens / 1000)
        assert client.totals()["cost"] == client.cost()
    async with client_for(fake_openai_server) as client:
        assert client.cost() is None


async def test_embeddings_with_cache_and_batches(
    fake_openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    with LLMCache(tmp_path / "c.sqlite") as cache:
        provider = OpenAICompatibleProvider("emb", base_url=fake_openai_server.url)
        async with ModelClient(provider, JudgeConfig(**FAST), cache, embed_batch_size=2) as client:
            a = await client.embed(["red apple", "green apple", "fast car"])
            assert a.shape == (3, 32) and a.dtype == np.float32
            assert fake_openai_server.total_requests == 2  # batches of 2
            b = await client.embed(["fast car", "red apple", "blue sky"])
            assert fake_openai_server.total_requests == 3  # only "blue sky" was new
            np.testing.assert_allclose(b[0], a[2])
            np.testing.assert_allclose(b[1], a[0])
    assert fake_openai_server.requests[0]["encoding_format"] == "float"


async def test_an_endpoint_no_connection_reaches_stops_the_run_at_the_first_request() -> None:
    """A refused connection before the endpoint has ever answered: an EndpointError (reason
    "unreachable") with the URL and the cause in plain words, no retry, and nothing sent after it."""
    provider = OpenAICompatibleProvider("m", base_url="http://127.0.0.1:9/v1")
    sleep = RecordingSleep()
    async with ModelClient(provider, JudgeConfig(max_retries=5, **FAST), sleep=sleep) as client:
        t = time.monotonic()
        with pytest.raises(EndpointError, match=r"127\.0\.0\.1:9/v1: the connection to 127\.0\.0\.1:9 was refused") as e:
            await client.generate(req())
        assert e.value.reason == "unreachable" and e.value.endpoint == "http://127.0.0.1:9/v1"
        assert "is the server running" in str(e.value)
        assert client.retries == 0 and sleep.calls == [] and time.monotonic() - t < 5
        with pytest.raises(EndpointError, match=r"refused"):  # later calls: nothing sent
            await client.generate(req("again"))
        assert client.calls == 2 and client.failed_calls == 2


async def test_a_refused_connection_after_the_endpoint_answered_is_retried() -> None:
    """Once the endpoint has answered, a refused connection is a transient transport error:
    retried with backoff, and the run goes on."""
    from ragmeter.errors import Unreachable
    from ragmeter.judges.providers.fake import FakeProvider

    refused = Unreachable("fake: connection error: the connection to 127.0.0.1:9 was refused", endpoint="x")
    provider = FakeProvider(["first", refused, refused, "back"])
    sleep = RecordingSleep()
    async with ModelClient(provider, JudgeConfig(max_retries=3, **FAST), sleep=sleep) as client:
        assert (await client.generate(req("a"))).text == "first"
        assert (await client.generate(req("b"))).text == "back"
        assert client.retries == 2 and len(sleep.calls) == 2
    provider = FakeProvider(["first", refused, refused])
    async with ModelClient(provider, JudgeConfig(max_retries=1, **FAST), sleep=RecordingSleep()) as client:
        await client.generate(req("a"))
        with pytest.raises(TransportError, match="refused"):
            await client.generate(req("b"))


def test_provider_key_handling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAICompatibleProvider("gpt-4o-mini", name="openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    p = OpenAICompatibleProvider("gpt-4o-mini", name="openai")
    assert p.base_url == "https://api.openai.com/v1"
    assert "sk-secret" not in repr(p.describe()) and "sk-secret" not in repr(p)
    with pytest.raises(ConfigError, match="MY_KEY"):
        OpenAICompatibleProvider("m", base_url="http://127.0.0.1:1/v1", api_key_env="MY_KEY")
    # a local server needs no key
    local = OpenAICompatibleProvider("m", base_url="http://127.0.0.1:1/v1")
    assert local.describe() == {
        "provider": "openai-compatible",
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "structured": "auto",
        "api_key_from": "none",
    }
    with pytest.raises(ConfigError, match="base URL"):
        OpenAICompatibleProvider("m")


async def test_401_names_the_key_variable(
    fake_openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helpers.server import _error

    monkeypatch.setenv("MY_KEY", "k")
    orig = fake_openai_server.handle
    fake_openai_server.handle = lambda path, body, gone=None: (
        _error(401, "Incorrect API key provided"),
        "401",
    )  # type: ignore[method-assign]
    provider = OpenAICompatibleProvider("m", base_url=fake_openai_server.url, api_key_env="MY_KEY")
    try:
        async with ModelClient(provider, JudgeConfig(**FAST)) as client:
            with pytest.raises(
                JudgeError, match=r"Incorrect API key provided \(check the API key in \$MY_KEY\)"
            ):
                await client.generate(req())
    finally:
        fake_openai_server.handle = orig  # type: ignore[method-assign]
    assert fake_openai_server.total_requests == 1


async def test_abandoned_requests_do_not_count_as_in_flight(fake_openai_server: FakeOpenAIServer) -> None:
    # requests the client gave up on (timeouts) must not inflate the server's in-flight count
    fake_openai_server.hang_s = 10.0
    fake_openai_server.force(*["timeout"] * 6)
    async with client_for(fake_openai_server, concurrency=2, timeout_s=0.2, backoff_base_s=0.0) as client:
        await asyncio.gather(*(client.generate(req(f"q{i}")) for i in range(6)))
    # the server counts a hang-up when its handler thread next polls the socket: under load the
    # last one can land after the client is done, so wait (bounded) for the server's count
    for _ in range(500):  # at most 10 s
        if fake_openai_server.by_status.get(499, 0) >= 6:
            break
        await asyncio.sleep(0.02)
    assert fake_openai_server.by_status[499] == 6 and fake_openai_server.by_status[200] == 6
    assert fake_openai_server.peak_in_flight <= 2


async def test_after_an_endpoint_error_nothing_more_is_sent(fake_openai_server: FakeOpenAIServer) -> None:
    """A 401 stops the endpoint: requests already out get their own answer; every later call (and
    every one that was waiting for a slot) raises the same EndpointError without a request."""
    fake_openai_server.replay = load_fixture("openai_401_bad_key")
    fake_openai_server.latency_s = 0.05
    async with client_for(fake_openai_server, concurrency=2) as client:
        calls = (client.generate(req(f"q{i}")) for i in range(6))
        results = await asyncio.gather(*calls, return_exceptions=True)
        with pytest.raises(EndpointError) as later:
            await client.generate(req("later"))
    assert all(isinstance(r, EndpointError) and r.reason == "auth" for r in results)
    assert later.value.reason == "auth" and later.value.status == 401
    assert fake_openai_server.total_requests == 2  # the two in flight when the first answer came
    assert client.retries == 0
