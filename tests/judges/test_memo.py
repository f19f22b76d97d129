"""The step memo: identical concurrent requests share one call; finished ones are reused; failures
are not stored; repeats and new event loops are kept apart; the call log shows memo hits."""

from __future__ import annotations

import asyncio
import json

import pytest

from ragmeter.errors import TransportError
from ragmeter.judges import FakeProvider, JudgeConfig, LLMJudge, ModelClient
from ragmeter.judges.memo import StepMemo, repetition
from ragmeter.judges.types import CallLog, current_call_log

FAST = JudgeConfig(backoff_base_s=0.0, backoff_max_s=0.0, max_retries=0)
CLAIMS = json.dumps({"claims": ["A is B."]})


async def test_concurrent_identical_requests_make_one_call_and_log_a_memo_hit() -> None:
    provider = FakeProvider([CLAIMS])
    judge = LLMJudge(ModelClient(provider, FAST))
    logs = [CallLog(), CallLog()]

    async def job(log: CallLog) -> list[str]:
        token = current_call_log.set(log)
        try:
            return await judge.extract_claims("A is B, as the text says.", question="q")
        finally:
            current_call_log.reset(token)

    a, b = await asyncio.gather(job(logs[0]), job(logs[1]))
    assert a == b == ["A is B."]
    assert len(provider.requests) == 1
    records = [c for log in logs for c in log.calls]
    assert sorted(c.cached for c in records) == [False, True]
    memo_rec = next(c for c in records if c.cached)
    assert memo_rec.usage.total_tokens == 0 and memo_rec.reply.startswith("memo")
    # finished: served again without a call
    assert await judge.extract_claims("A is B, as the text says.", question="q") == ["A is B."]
    assert len(provider.requests) == 1 and judge.memo.hits == 2


async def test_failures_are_not_memoised() -> None:
    provider = FakeProvider([TransportError("down"), CLAIMS])
    judge = LLMJudge(ModelClient(provider, FAST))
    with pytest.raises(TransportError):
        await judge.extract_claims("A is B.")
    assert await judge.extract_claims("A is B.") == ["A is B."]
    assert len(provider.requests) == 2


async def test_repetitions_are_separate_requests() -> None:
    provider = FakeProvider([CLAIMS, CLAIMS])
    judge = LLMJudge(ModelClient(provider, FAST))
    for i in range(2):
        with repetition(i, 0.9):
            await judge.extract_claims("A is B.")
    assert len(provider.requests) == 2
    assert [r.temperature for r in provider.requests] == [0.9, 0.9]
    assert provider.requests[0].prompt_version != provider.requests[1].prompt_version


def test_a_new_event_loop_starts_with_an_empty_memo() -> None:
    provider = FakeProvider([CLAIMS, CLAIMS])
    judge = LLMJudge(ModelClient(provider, FAST))
    for _ in range(2):
        asyncio.run(judge.extract_claims("A is B."))
    assert len(provider.requests) == 2


async def test_memo_is_bounded_and_can_be_off() -> None:
    memo = StepMemo(2)
    calls = 0

    async def fn() -> int:
        nonlocal calls
        calls += 1
        return calls

    for key in ("a", "b", "c", "a"):
        await memo.get_or_run("s", "v1", key, fn)
    assert len(memo) == 2 and calls == 4  # "a" was evicted before it was asked again
    off = StepMemo(0)
    await off.get_or_run("s", "v1", "x", fn)
    await off.get_or_run("s", "v1", "x", fn)
    assert calls == 6


async def test_combined_extraction_of_answer_and_reference() -> None:
    reply = json.dumps({"texts": [{"index": 1, "claims": ["A1."]}, {"index": 2, "claims": ["R1.", "R2."]}]})
    provider = FakeProvider([reply])
    judge = LLMJudge(ModelClient(provider, FAST))
    out = await judge.extract_claims_many(["A1. A2.", "  ", "R1. R2."], question="q")
    assert out == [["A1."], [], ["R1.", "R2."]]
    assert provider.requests[0].step == "extract_claims_many"
    bad = LLMJudge(ModelClient(FakeProvider([json.dumps({"texts": [{"index": 1, "claims": []}]})] * 2), FAST))
    with pytest.raises(Exception, match="no claims list for text"):
        await bad.extract_claims_many(["a", "b"])


async def test_grammar_mode_narrows_the_wire_schema() -> None:
    reply = json.dumps(
        {
            "verdicts": [
                {"index": 1, "reason": "", "useful": True},
                {"index": 2, "reason": "", "useful": False},
            ]
        }
    )
    provider = FakeProvider([reply])
    judge = LLMJudge(ModelClient(provider, JudgeConfig(structured="auto")))
    await judge.rate_chunks("q", ["a", "b"], "t")
    # the provider sends grammar_schema in the modes that decode under a grammar, which `auto` may
    # settle on only after the request was built: so every request carries both forms
    tight = provider.requests[0].grammar_schema
    assert tight is not None
    arr = tight["properties"]["verdicts"]
    assert arr["minItems"] == arr["maxItems"] == 2
    assert [i["properties"]["index"] for i in arr["prefixItems"]] == [{"const": 1}, {"const": 2}]
    wire2 = provider.requests[0].json_schema
    assert wire2 is not None and "prefixItems" not in json.dumps(wire2)
    assert wire2["properties"]["verdicts"]["items"]["properties"]["index"]["enum"] == [1, 2]
