"""Runs over conversations: turns scored with their standalone question, conversation samples
planned for conversation metrics only, conversation_id and turn in results, exports and the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.errors import UnsupportedStepError
from ragmeter.judges import JudgeConfig, LLMJudge, ModelClient
from ragmeter.judges.base import StepsNotImplemented
from ragmeter.judges.providers.fake import FakeProvider
from ragmeter.judges.types import ChatRequest
from ragmeter.log.store import RunStore
from ragmeter.run.turns import DETAILS_KEY

FAST = JudgeConfig(backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=5.0, max_retries=0)
CHAT = {
    "id": "c1",
    "messages": [
        {"role": "user", "content": "Tell me about the Eiffel Tower."},
        {
            "role": "assistant",
            "content": "It is a lattice tower in Paris.",
            "contexts": ["The Eiffel Tower is a wrought-iron lattice tower in Paris."],
        },
        {"role": "user", "content": "How tall is it?"},
        {
            "role": "assistant",
            "content": "It is 330 metres tall.",
            "contexts": ["The tower is 330 metres tall."],
        },
    ],
}
ZH_CHAT = {
    "id": "z1",
    "messages": [
        {"role": "user", "content": "介绍一下埃菲尔铁塔。"},
        {
            "role": "assistant",
            "content": "它是巴黎的一座铁塔。",
            "contexts": ["埃菲尔铁塔是巴黎的一座铁塔。"],
        },
        {"role": "user", "content": "它有多高？"},
        {"role": "assistant", "content": "它高 330 米。", "contexts": ["埃菲尔铁塔高 330 米。"]},
    ],
}
PLAIN = {
    "id": "p1",
    "question": "Who wrote Hamlet?",
    "contexts": ["Hamlet is by Shakespeare."],
    "answer": "Shakespeare.",
}


def test_local_judge_scores_each_turn_with_its_standalone_question(tmp_path: Path) -> None:
    result = ragmeter.evaluate(
        [CHAT, PLAIN], ["faithfulness", "context_relevance", "exact_match"], None, out=tmp_path
    )
    by_id = {s.id: idx for idx, s in result.samples}
    assert set(by_id) == {"c1", "c1:1", "c1:2", "p1"}
    second = result.score(by_id["c1:2"], "context_relevance")
    assert second is not None and second.details[DETAILS_KEY] == "How tall is the Eiffel Tower?"
    first = result.score(by_id["c1:1"], "context_relevance")
    assert first is not None and DETAILS_KEY not in first.details  # turn 1 has no history
    assert result.score(by_id["c1"], "faithfulness") is None  # a conversation sample: no RAG metric
    summary = result.summary()["faithfulness"]
    assert summary.n_scored == 3 and summary.n_skipped == 0  # the conversation is not a skipped sample
    # exact_match needs a reference no sample has: 3 skipped, not 4
    assert result.summary()["exact_match"].n_skipped == 3
    assert result.n_skipped == 0  # every sample has a metric of its level that scores it
    records = {r["sample_id"]: r for r in result.to_records()}
    assert (records["c1:2"]["conversation_id"], records["c1:2"]["turn"]) == ("c1", 2)
    assert (records["p1"]["conversation_id"], records["p1"]["turn"]) == (None, None)
    assert records["c1"]["faithfulness_reason"] == "not applicable"
    assert records["p1"]["exact_match_reason"] == "skipped"
    with RunStore(tmp_path) as store:
        rows = store._query(
            "SELECT conversation_id, turn, key FROM samples WHERE run_id = ? ORDER BY idx", (result.run_id,)
        )
    assert sorted(rows, key=str) == sorted(
        [("c1", None, "id:c1"), ("c1", 1, "id:c1/turn:1"), ("c1", 2, "id:c1/turn:2"), (None, None, "id:p1")],
        key=str,
    )
    exported = [json.loads(line) for line in result.to_jsonl(tmp_path / "out.jsonl").read_text().splitlines()]
    turn = next(r for r in exported if r["sample"]["id"] == "c1:2")
    assert (turn["conversation_id"], turn["turn"]) == ("c1", 2)
    # the run record reads back the same
    again = ragmeter.Result.from_store(tmp_path, result.run_id)
    assert again.summary()["faithfulness"].n_skipped == 0 and again.keys == result.keys


def test_local_rule_in_chinese() -> None:
    result = ragmeter.evaluate([ZH_CHAT], ["context_relevance"], None)
    idx = next(i for i, s in result.samples if s.turn == 2)
    score = result.score(idx, "context_relevance")
    assert score is not None and score.details[DETAILS_KEY] == "埃菲尔铁塔有多高？"


def _replies(request: ChatRequest) -> str:
    if request.step == "standalone_question":
        return json.dumps({"question": "How tall is the Eiffel Tower?"})
    if request.step == "rate_sentences":
        return json.dumps({"needed": [1]})
    if request.step == "grade":
        return json.dumps({"reason": "fine", "score": 1})
    raise AssertionError(f"unexpected step {request.step}")


def test_llm_judge_rewrites_once_per_turn_for_all_its_metrics() -> None:
    provider = FakeProvider(_replies)
    judge = LLMJudge(ModelClient(provider, FAST))
    result = ragmeter.evaluate([CHAT], ["context_relevance", "relevancy"], judge)
    rewrites = [r for r in provider.requests if r.step == "standalone_question"]
    assert len(rewrites) == 1  # turn 2 only; the memo shares it between the two metrics
    prompt = rewrites[0].messages[-1].content
    assert "Tell me about the Eiffel Tower." in prompt and "How tall is it?" in prompt
    assert rewrites[0].prompt_version.startswith("standalone_question/en@")
    # the metrics were asked with the standalone question
    asked = [r.messages[-1].content for r in provider.requests if r.step == "grade"]
    assert any("How tall is the Eiffel Tower?" in text for text in asked)
    idx = next(i for i, s in result.samples if s.turn == 2)
    for metric in ("context_relevance", "relevancy"):
        score = result.score(idx, metric)
        assert score is not None and score.details[DETAILS_KEY] == "How tall is the Eiffel Tower?"
    assert "standalone_question/zh" in result.meta["prompt_versions"]


def test_llm_judge_uses_the_chinese_prompt_for_a_chinese_turn() -> None:
    def reply(request: ChatRequest) -> str:
        if request.step == "standalone_question":
            return json.dumps({"question": "埃菲尔铁塔有多高？"}, ensure_ascii=False)
        return _replies(request)

    provider = FakeProvider(reply)
    ragmeter.evaluate([ZH_CHAT], ["context_relevance"], LLMJudge(ModelClient(provider, FAST)))
    (rewrite,) = [r for r in provider.requests if r.step == "standalone_question"]
    assert rewrite.prompt_version.startswith("standalone_question/zh@")
    assert "用户：介绍一下埃菲尔铁塔。" in rewrite.messages[-1].content


def test_a_failed_rewrite_is_the_turns_invalid_score_with_its_cause() -> None:
    def reply(request: ChatRequest) -> str:
        if request.step == "standalone_question":
            return "no JSON here"
        return _replies(request)

    result = ragmeter.evaluate(
        [CHAT], ["context_relevance"], LLMJudge(ModelClient(FakeProvider(reply), FAST))
    )
    scores = {s.turn: result.score(i, "context_relevance") for i, s in result.samples if s.turn}
    assert scores[1] is not None and scores[1].valid  # no history: no rewrite
    bad = scores[2]
    assert bad is not None and not bad.valid and bad.error is not None
    assert bad.error.kind == "JudgeOutputError"
    assert bad.reason.startswith("the turn's standalone question could not be made:")


class _NoRewrite(StepsNotImplemented):
    name = "bare"

    def supports(self, step: str) -> bool:
        return step == "rate_sentences"

    async def rate_sentences(self, question: str, sentences: Any, *, lang: str = "en") -> list[float]:
        return [1.0 for _ in sentences]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


def test_a_judge_without_the_step_is_refused_before_any_call(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedStepError, match="standalone_question"):
        ragmeter.evaluate([CHAT], ["context_relevance"], _NoRewrite(), out=tmp_path)
    with RunStore(tmp_path) as store:
        assert store.list_runs() == []
    # data without follow-up turns needs no rewrite
    assert (
        ragmeter.evaluate([PLAIN], ["context_relevance"], _NoRewrite())
        .summary()["context_relevance"]
        .n_scored
        == 1
    )


def test_judge_free_metrics_need_no_rewrite() -> None:
    rows = [{**CHAT, "messages": [*CHAT["messages"][:3], {**CHAT["messages"][3], "reference": "330 metres"}]}]
    result = ragmeter.evaluate(rows, ["token_f1"], _NoRewrite())
    idx = next(i for i, s in result.samples if s.turn == 2)
    score = result.score(idx, "token_f1")
    assert score is not None and score.valid and DETAILS_KEY not in score.details


def test_a_conversation_run_resumes_from_its_record(tmp_path: Path) -> None:
    first = ragmeter.evaluate([CHAT, ZH_CHAT], ["context_relevance", "conversation_relevancy"], None, out=tmp_path)
    again = ragmeter.evaluate(
        [CHAT, ZH_CHAT], ["context_relevance", "conversation_relevancy"], None, out=tmp_path, resume=first.run_id
    )
    assert again.run_id == first.run_id and again.keys == first.keys
    for name in ("context_relevance", "conversation_relevancy"):
        assert again.summary()[name].mean == first.summary()[name].mean
    stored = {s.id: s for _, s in again.samples}
    assert stored["c1"].messages is not None and stored["c1:2"].history is not None


def test_a_turn_missing_a_field_is_named_by_row_and_turn() -> None:
    # The second turn carries a reference, the first does not: the problem names row and turn, so
    # the two turns of one row are told apart.
    rows = [{**CHAT, "messages": [*CHAT["messages"][:3], {**CHAT["messages"][3], "reference": "330 metres"}]}]
    result = ragmeter.evaluate(rows, ["token_f1"], _NoRewrite())
    problems = [str(p) for p in result.problems]
    assert problems == ["<records>, row 1, field 'reference': is missing in turn 1; metric 'token_f1' needs it"]
    idx = next(i for i, s in result.samples if s.turn == 2)
    assert result.score(idx, "token_f1") is not None
