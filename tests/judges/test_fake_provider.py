from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import RagmeterError, RateLimitError
from ragmeter.judges import FakeEmbeddingProvider, FakeProvider
from ragmeter.judges.providers.fake import FakeExhaustedError
from ragmeter.judges.types import ChatRequest, Message


def req(text: str, step: str = "s") -> ChatRequest:
    return ChatRequest(messages=(Message("user", text),), step=step)


async def test_scripted_replies_exceptions_and_callables_in_order() -> None:
    p = FakeProvider(
        ["one", RateLimitError("slow down", retry_after=1.0), lambda r: r.messages[-1].content.upper()]
    )
    assert (await p.generate(req("a"))).text == "one"
    with pytest.raises(RateLimitError, match="slow down"):
        await p.generate(req("b"))
    resp = await p.generate(req("shout"))
    assert resp.text == "SHOUT"
    assert resp.usage.requests == 1 and resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0
    assert [r.messages[-1].content for r in p.requests] == ["a", "b", "shout"]
    assert p.remaining == 0


async def test_running_out_is_loud_and_not_a_ragmeter_error() -> None:
    p = FakeProvider(["only"])
    await p.generate(req("first"))
    with pytest.raises(
        FakeExhaustedError, match=r"request #2 \(step='verify_claims'.*the second prompt"
    ) as ei:
        await p.generate(req("the second prompt", step="verify_claims"))
    assert not isinstance(ei.value, RagmeterError)
    assert isinstance(ei.value, RuntimeError)


async def test_single_callable_answers_every_request() -> None:
    p = FakeProvider(lambda r: f"reply to {r.step}")
    for i in range(5):
        assert (await p.generate(req("x", step=str(i)))).text == f"reply to {i}"
    assert p.remaining is None and len(p.requests) == 5


async def test_callable_may_return_an_exception() -> None:
    p = FakeProvider([lambda r: ValueError("scripted")])
    with pytest.raises(ValueError, match="scripted"):
        await p.generate(req("x"))


async def test_fake_embeddings_are_deterministic_normalised_and_similar_for_similar_texts() -> None:
    e = FakeEmbeddingProvider(dim=64)
    texts = ["the cat sat on the mat", "the cat sat on a mat", "quantum chromodynamics lecture notes", ""]
    a, usage = await e.embed(texts)
    b, _ = await FakeEmbeddingProvider(dim=64).embed(texts)
    assert a.dtype == np.float32 and a.shape == (4, 64)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    assert float(a[0] @ a[1]) > float(a[0] @ a[2]) + 0.3
    assert usage.requests == 1 and usage.prompt_tokens > 0
    zh, _ = await e.embed(["今天天气很好", "今天天气不错", "股票市场下跌"])
    assert float(zh[0] @ zh[1]) > float(zh[0] @ zh[2])
