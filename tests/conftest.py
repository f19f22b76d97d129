"""Shared fixtures: the loopback OpenAI-compatible server."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from helpers.server import FakeOpenAIServer

# Hypothesis: modest example counts keep the default suite fast ("default"); HYPOTHESIS_PROFILE=thorough
# searches much longer. No example database is written into the working tree.
_HEALTH = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large]
settings.register_profile(
    "default", max_examples=25, deadline=None, database=None, suppress_health_check=_HEALTH
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, database=None, suppress_health_check=_HEALTH
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# The local embedder's weights cache (local/weights_cache.py) goes to a folder of this session, not
# the user's cache; the CLI runs of the tests inherit it.
if "RAGMETER_CACHE_DIR" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="ragmeter-test-cache-")
    os.environ["RAGMETER_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, True)


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
