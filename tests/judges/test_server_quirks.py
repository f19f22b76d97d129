"""Servers' replies, replayed byte for byte by the loopback server (tests/fixtures/servers): the
structured-output fallback, and failing fast on what retrying cannot fix. Three of the nineteen
fixtures were captured from a real server (llama-cpp-python, by capture_llama_cpp_python.py); the
others are reconstructed from the servers' documentation, source or bug reports, or synthetic, and
each file says which in its ``source``."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from helpers.server import FakeOpenAIServer, load_fixture
from ragmeter.errors import ContentFiltered, ContextTooLong, EndpointError, JudgeError, RequestRejected
from ragmeter.judges import JudgeConfig, ModelClient, OpenAICompatibleProvider
from ragmeter.judges.providers.replies import context_overflow, rejects_mode
from ragmeter.judges.types import ChatRequest, Message, RetryNotice, current_retry_listener
from ragmeter.run.progress import Progress

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 5.0}
SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}},
    "required": ["a"],
    "additionalProperties": False,
}

#: fixture -> the mode ``auto`` settles on against that server
FALLBACKS = {
    "llama_cpp_python_json_schema": "json_object_schema",
    "llama_cpp_server_json_schema": "json_object_schema",
    "vllm_json_schema_before_0_5_5": "json_object_schema",
    "ollama_invalid_format": "json_object",
    "lmstudio_json_object": "json_schema",
}

#: fixture -> EndpointError.reason
FATAL = {
    "openai_401_bad_key": "auth",
    "openai_404_model": "model",
    "vllm_404_model": "model",
    "ollama_404_model": "model",
    "fastapi_404_route": "route",
    "llama_cpp_python_404_route": "route",
    "html_404": "route",
    "nginx_html_200": "not_openai",
    "json_without_choices": "not_openai",
}

#: fixture -> (prompt tokens, context limit) the error must carry (None: ragmeter's estimate)
CONTEXT = {
    "openai_context_length": (9013, 8192),
    "vllm_context_length": (3072, 2048),
    "llama_cpp_server_context": (5000, 4096),
    "llama_cpp_python_context_length": "captured",
}


def req(text: str = "hello", *, schema: dict[str, Any] | None = SCHEMA) -> ChatRequest:
    return ChatRequest(messages=(Message("user", text),), json_schema=schema, step="test", prompt_version="1")


def client_for(server: FakeOpenAIServer, **cfg: Any) -> ModelClient:
    provider = OpenAICompatibleProvider("fake-model", base_url=server.url)
    return ModelClient(provider, JudgeConfig(**{**FAST, **cfg}))


@pytest.mark.parametrize("name", sorted(FALLBACKS))
async def test_auto_falls_back_past_each_servers_refusal(
    fake_openai_server: FakeOpenAIServer, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    fixture = load_fixture(name)
    fake_openai_server.replay = fixture
    fake_openai_server.responder = lambda body: '{"a": 1}'
    with caplog.at_level(logging.WARNING, logger="ragmeter.judges"):
        async with client_for(fake_openai_server) as client:
            first = await client.generate(req("one"))
            second = await client.generate(req("two"))
    settled = FALLBACKS[name]
    assert first.text == second.text == '{"a": 1}'
    modes = fake_openai_server.structured_modes
    assert modes[-1] == modes[-2] == settled  # both requests use the settled mode
    assert modes[: modes.index(settled)] == [m for m in modes if m != settled]  # refusals come first, once
    assert client.retries == 0  # a refused mode is a fallback, never a retry with backoff
    assert client.provider.describe()["structured_resolved"] == settled
    assert f"structured output mode {settled!r} works" in caplog.text


async def test_concurrent_first_requests_go_out_at_once_and_fall_back_once(
    fake_openai_server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Sixteen requests at once against llama-cpp-python's 500: none waits for a probe; each is
    refused once in the first mode and sent again in the next, with one warning and no retry."""
    fake_openai_server.replay = load_fixture("llama_cpp_python_json_schema")
    fake_openai_server.responder = lambda body: '{"a": 1}'
    fake_openai_server.latency_s = 0.05
    with caplog.at_level(logging.WARNING, logger="ragmeter.judges"):
        async with client_for(fake_openai_server, concurrency=16) as client:
            replies = await asyncio.gather(*(client.generate(req(f"q{i}")) for i in range(16)))
            later = await client.generate(req("later"))
    assert all(r.text == '{"a": 1}' for r in [*replies, later])
    assert fake_openai_server.peak_in_flight == 16  # no request waited for another's reply
    modes = fake_openai_server.structured_modes
    assert modes.count("json_schema") == 16 and modes.count("json_object_schema") == 17
    assert modes[-1] == "json_object_schema"  # settled: later requests skip the refused mode
    assert fake_openai_server.by_status[500] == 16 and client.retries == 0
    assert caplog.text.count("trying 'json_object_schema'") == 1
    assert caplog.text.count("works; using it") == 1


@pytest.mark.parametrize("name", ["lmstudio_json_object", "llama_cpp_python_json_schema"])
async def test_refused_explicit_mode_fails_fast_with_the_servers_words(
    fake_openai_server: FakeOpenAIServer, name: str
) -> None:
    fixture = load_fixture(name)
    fake_openai_server.replay = fixture
    mode = "json_object" if name.startswith("lmstudio") else "json_schema"
    async with client_for(fake_openai_server, structured=mode) as client:
        with pytest.raises(EndpointError) as info:
            await client.generate(req())
    err = info.value
    assert err.reason == "structured" and err.status == fixture["status"] and err.fatal
    assert fake_openai_server.url in str(err) and f"HTTP {fixture['status']}" in str(err)
    assert fake_openai_server.total_requests == 1  # a 500 that names the mode is not retried


@pytest.mark.parametrize("name", sorted(FATAL))
async def test_fails_fast_on_what_retrying_cannot_fix(
    fake_openai_server: FakeOpenAIServer, name: str
) -> None:
    fixture = load_fixture(name)
    fake_openai_server.replay = fixture
    async with client_for(fake_openai_server) as client:
        with pytest.raises(EndpointError) as info:
            await client.generate(req(schema=None))
    err = info.value
    assert err.reason == FATAL[name] and err.fatal
    assert fake_openai_server.total_requests == 1 and client.retries == 0
    text = str(err)
    assert fake_openai_server.url in text and "fake-model" in text  # the endpoint
    assert f"HTTP {fixture['status']}" in text or fixture["status"] == 200
    words = err.server_message or ""
    assert words and words[:20] in text  # the server's own words
    assert "<" not in text  # HTML is flattened to its text


@pytest.mark.parametrize("name", sorted(CONTEXT))
async def test_context_length_is_final_for_the_request(
    fake_openai_server: FakeOpenAIServer, name: str
) -> None:
    fake_openai_server.replay = load_fixture(name)
    async with client_for(fake_openai_server) as client:
        with pytest.raises(ContextTooLong) as info:
            await client.generate(req("a long prompt " * 50, schema=None))
    err = info.value
    assert not err.fatal and not err.retryable and fake_openai_server.total_requests == 1
    expected = CONTEXT[name]
    if isinstance(expected, tuple):
        assert (err.prompt_tokens, err.limit) == expected
    else:  # captured from the real server: the sizes are whatever it said, but said
        assert err.prompt_tokens and err.limit and err.prompt_tokens > err.limit
    assert f"{err.prompt_tokens}" in str(err) and "does not fit the context window" in str(err)


async def test_content_filter_is_final_for_the_request(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.replay = load_fixture("azure_content_filter")
    async with client_for(fake_openai_server) as client:
        with pytest.raises(ContentFiltered, match="content management policy"):
            await client.generate(req(schema=None))
    assert fake_openai_server.total_requests == 1


async def test_other_4xx_rejects_the_request_only(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.force("400")
    async with client_for(fake_openai_server) as client:
        with pytest.raises(RequestRejected, match="HTTP 400: bad request"):
            await client.generate(req(schema=None))
        assert (await client.generate(req(schema=None))).text  # the next request goes on
    assert fake_openai_server.total_requests == 2


async def test_retries_are_announced_to_the_progress_display(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.force("500", "500")
    notices: list[RetryNotice | None] = []
    token = current_retry_listener.set(notices.append)
    try:
        async with client_for(fake_openai_server, max_retries=3) as client:
            await client.generate(req(schema=None))
    finally:
        current_retry_listener.reset(token)
    assert [n.attempt if n else None for n in notices] == [1, 2, None]
    first = notices[0]
    assert first is not None and first.error == "HTTP 500" and first.max_attempts == 4
    progress = Progress(10, enabled=False)
    progress.on_retry(first)
    assert progress.retry_status.startswith(
        "retrying: HTTP 500 from openai-compatible:fake-model, attempt 1/4"
    )
    assert "next try in" in progress.retry_status
    progress.on_retry(None)
    assert progress.retry_status == ""


def test_reply_readers_on_every_recorded_body() -> None:
    """The classifiers agree with the fixtures' own labels."""
    from helpers.server import fixture_names

    for name in fixture_names():
        fixture = load_fixture(name)
        body = fixture["body"]
        message = body if isinstance(body, str) else str(body.get("error", body))
        if name in FALLBACKS and name != "lmstudio_json_object":
            assert rejects_mode(fixture["status"], message), name
        if name in CONTEXT:
            assert context_overflow(message) is not None, name
        if name in FATAL:
            assert not rejects_mode(fixture["status"], message), name
    assert not rejects_mode(500, "internal server error (injected)")  # a plain 500 is retried
    assert isinstance(ContextTooLong("x"), JudgeError)
