from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragmeter.errors import ConfigError
from ragmeter.judges import LLMCache
from ragmeter.judges.cache import NullCache, chat_key, embed_key
from ragmeter.judges.types import ChatRequest, ChatResponse, Message, Usage

ID = {"provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:1/v1"}


def req(**kw: object) -> ChatRequest:
    base: dict = {
        "messages": (Message("system", "s"), Message("user", "u")),
        "step": "extract_claims",
        "prompt_version": "1",
    }
    base.update(kw)
    return ChatRequest(**base)


def test_key_depends_on_everything_that_changes_the_reply() -> None:
    k = chat_key(ID, req())
    assert k == chat_key(dict(ID), req())  # deterministic
    assert k != chat_key({**ID, "model": "other"}, req())
    assert k != chat_key({**ID, "base_url": "http://127.0.0.1:2/v1"}, req())
    assert k != chat_key(ID, req(prompt_version="2"))
    assert k != chat_key(ID, req(temperature=0.5))
    assert k != chat_key(ID, req(json_schema={"type": "object"}))
    assert k != chat_key(ID, req(messages=(Message("user", "u2"),)))
    assert embed_key(ID, "a") != embed_key(ID, "b")


def test_chat_roundtrip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cache.sqlite"
    with LLMCache(path) as cache:
        assert cache.get_chat("k") is None
        cache.put_chat("k", ChatResponse("héllo {json}", Usage(1, 10, 5), "m", "stop"))
    with LLMCache(path) as cache:
        got = cache.get_chat("k")
        assert got is not None
        assert got.text == "héllo {json}" and got.usage == Usage(1, 10, 5) and got.finish_reason == "stop"
        assert cache.stats()["chat_entries"] == 1


def test_embedding_roundtrip(tmp_path: Path) -> None:
    with LLMCache(tmp_path / "c.sqlite") as cache:
        v = np.array([0.1, -0.2, 0.3], dtype=np.float32)
        cache.put_embedding("e", v)
        got = cache.get_embedding("e")
        assert got is not None and got.dtype == np.float32
        np.testing.assert_array_equal(got, v)
        assert cache.get_embedding("nope") is None


def test_closed_cache_and_null_cache(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "c.sqlite")
    cache.close()
    with pytest.raises(ConfigError, match="closed"):
        cache.get_chat("k")
    null = NullCache()
    null.put_chat("k", ChatResponse("x"))
    assert null.get_chat("k") is None


def test_unopenable_path_is_config_error(tmp_path: Path) -> None:
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(ConfigError, match=r"cannot open the LLM cache"):
        LLMCache(tmp_path / "dir.sqlite")
