"""Shared fixtures: the loopback OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.server import FakeOpenAIServer


@pytest.fixture
def fake_openai_server() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer` on 127.0.0.1 (default switches: no latency, no failures).
    Tests change its switches (``latency_s``, ``fail_rate``, ``force(...)``...) before calling it."""
    server = FakeOpenAIServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
