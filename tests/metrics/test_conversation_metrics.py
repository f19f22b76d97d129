"""The per-conversation metrics with an LLM judge (scripted) and with the local judge."""

from __future__ import annotations

import json
from typing import Any

import pytest

import ragmeter
from ragmeter.dataset import load_dataset
from ragmeter.errors import CountMismatch, IndexOutOfRange, UnsupportedStepError
from ragmeter.judges import JudgeConfig, LLMJudge, ModelClient
from ragmeter.judges.base import Exchange, exchanges
from ragmeter.judges.conversation_steps import numbered_dialogue, turn_verdicts
from ragmeter.judges.providers.fake import FakeProvider
from ragmeter.judges.types import ChatRequest
from ragmeter.local import LocalJudge
from ragmeter.local.conversation import is_request, user_facts
from ragmeter.metrics.registry import get_metric, list_metrics

FAST = JudgeConfig(backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=5.0, max_retries=0)
NAMES = ("knowledge_retention", "conversation_relevancy", "conversation_completeness", "role_adherence")
TRIP = {
    "id": "trip",
    "messages": [
        {"role": "system", "content": "You are a travel guide for Paris. Be brief."},
        {"role": "user", "content": "I use a wheelchair and my budget is 300 euros."},
        {"role": "assistant", "content": "Noted. What would you like to visit?"},
        {"role": "user", "content": "Tell me about the Eiffel Tower."},
        {"role": "assistant", "content": "A lattice tower in Paris.", "contexts": ["A tower in Paris."]},
        {"role": "user", "content": "Can I get to the top?"},
        {"role": "assistant", "content": "Yes: climb the 674 steps, then take the lift."},
    ],
}


def test_exchanges_and_their_numbering() -> None:
    dialogue = [
        ("assistant", "Welcome!"),  # before any user message: answers nothing
        ("user", "Hi."),
        ("user", "What is RAG?"),
        ("assistant", "Retrieval-"),
        ("assistant", "augmented generation."),
        ("user", "Thanks"),
    ]
    assert exchanges(dialogue) == [
        Exchange("Hi.\nWhat is RAG?", "Retrieval-\naugmented generation."),
        Exchange("Thanks", ""),
    ]
    text, m, n = numbered_dialogue(dialogue, "en")
    assert (m, n) == (2, 1)
    assert (
        text
        == "User [1]: Hi. What is RAG?\nAssistant [1]: Retrieval- augmented generation.\nUser [2]: Thanks"
    )
    assert numbered_dialogue(dialogue, "zh")[0].startswith("用户 [1]：Hi.")


def test_turn_verdicts_are_checked() -> None:
    ok = [{"index": 1, "reason": "r", "relevant": True}, {"index": 2, "relevant": False}]
    assert [(v.turn, v.ok, v.confidence) for v in turn_verdicts(ok, 2, "relevant")] == [
        (1, True, 1.0),
        (2, False, 0.0),
    ]
    assert [v.turn for v in turn_verdicts([{"relevant": True}, {"relevant": True}], 2, "relevant")] == [1, 2]
    with pytest.raises(IndexOutOfRange):
        turn_verdicts([{"index": 3, "relevant": True}], 2, "relevant")
    with pytest.raises(CountMismatch):
        turn_verdicts([{"index": 1, "relevant": True}], 2, "relevant")


def test_registered_as_conversation_metrics() -> None:
    metrics = list_metrics()
    for name in NAMES:
        assert metrics[name].level == "conversation"
        assert get_metric(name).requires[0] == "messages"
    assert get_metric("role_adherence").requires == ("messages", "system_prompt")


def _verdicts(key: str, *oks: bool) -> list[dict[str, Any]]:
    return [{"index": i, "reason": "", key: ok} for i, ok in enumerate(oks, 1)]


VERDICTS = {
    "rate_turn_relevance": {"verdicts": _verdicts("relevant", True, True, True)},
    "check_retention": {
        "facts": [{"turn": 1, "fact": "The user uses a wheelchair."}, {"turn": 1, "fact": "Budget 300 euros."}],
        "verdicts": _verdicts("retained", True, True, False),
    },
    "check_completeness": {
        "requests": [
            {"request": "about the Eiffel Tower", "reason": "", "met": True},
            {"request": "can the user reach the top", "reason": "Not in a wheelchair.", "met": False},
        ]
    },
    "check_role_adherence": {"verdicts": _verdicts("in_role", True, True, True)},
}


def _scripted(request: ChatRequest) -> str:
    return json.dumps(VERDICTS[str(request.step)])


def test_each_metric_is_one_call_per_conversation_with_an_llm_judge() -> None:
    provider = FakeProvider(_scripted)
    result = ragmeter.evaluate([TRIP], list(NAMES), LLMJudge(ModelClient(provider, FAST)))
    assert sorted(str(r.step) for r in provider.requests) == sorted(VERDICTS)
    idx = next(i for i, s in result.samples if s.level == "conversation")
    scores = {name: result.score(idx, name) for name in NAMES}
    assert {n: s.value if s else None for n, s in scores.items()} == {
        "knowledge_retention": pytest.approx(2 / 3),
        "conversation_relevancy": 1.0,
        "conversation_completeness": 0.5,
        "role_adherence": 1.0,
    }
    kr = scores["knowledge_retention"]
    assert kr is not None and "forgotten in exchange(s) 3" in kr.reason and kr.details["n_facts"] == 2
    prompt = next(r for r in provider.requests if r.step == "check_role_adherence").messages[-1].content
    assert (
        "You are a travel guide for Paris." in prompt and "Assistant [3]: Yes: climb the 674 steps" in prompt
    )
    # the turn sample is not touched by them, and RAG metrics are not asked of the conversation
    turn = next(i for i, s in result.samples if s.turn == 2)
    assert all(result.score(turn, n) is None for n in NAMES)
    assert result.summary()["role_adherence"].n_skipped == 0


def test_not_applicable_cases() -> None:
    no_role = {"id": "x", "messages": [m for m in TRIP["messages"] if m["role"] != "system"]}
    no_facts = {
        "id": "y",
        "messages": [
            {"role": "user", "content": "What is RAG?"},
            {"role": "assistant", "content": "A method."},
        ],
    }

    def reply(request: ChatRequest) -> str:
        if request.step == "check_retention":
            return json.dumps({"facts": [], "verdicts": [{"index": 1, "reason": "", "retained": True}]})
        if request.step == "check_completeness":
            return json.dumps({"requests": []})
        return _scripted(request)

    result = ragmeter.evaluate(
        [no_role, no_facts], list(NAMES), LLMJudge(ModelClient(FakeProvider(reply), FAST))
    )
    ra = result.summary()["role_adherence"]
    assert (ra.n_scored, ra.n_skipped) == (0, 2)  # no system message: not applicable, not invalid
    assert any(p.field == "system_prompt" for p in result.problems)
    y = next(i for i, s in result.samples if s.id == "y")
    kr, cc = result.score(y, "knowledge_retention"), result.score(y, "conversation_completeness")
    assert kr is not None and kr.error is not None and kr.error.kind == "NoFacts"
    assert cc is not None and cc.error is not None and cc.error.kind == "NoRequests"


def test_a_wrong_verdict_count_gets_the_repair_round_then_is_invalid() -> None:
    bad = json.dumps({"verdicts": [{"index": 1, "reason": "", "relevant": True}]})
    provider = FakeProvider([bad, bad])
    result = ragmeter.evaluate([TRIP], ["conversation_relevancy"], LLMJudge(ModelClient(provider, FAST)))
    score = result.score(0, "conversation_relevancy")
    assert score is not None and score.error is not None and score.error.kind == "CountMismatch"
    assert len(provider.requests) == 2


def test_chinese_conversations_get_the_chinese_prompt() -> None:
    zh = {
        "id": "z",
        "messages": [
            {"role": "user", "content": "介绍一下故宫。"},
            {"role": "assistant", "content": "故宫是明清两代的皇宫。"},
        ],
    }
    provider = FakeProvider(
        lambda r: json.dumps({"verdicts": [{"index": 1, "reason": "", "relevant": True}]})
    )
    ragmeter.evaluate([zh], ["conversation_relevancy"], LLMJudge(ModelClient(provider, FAST)))
    (req,) = provider.requests
    assert (
        req.prompt_version.startswith("rate_turn_relevance/zh@")
        and "用户 [1]：介绍一下故宫。" in req.messages[-1].content
    )


# ------------------------------------------------------------------------------ the local judge


def test_local_rules_for_requests_and_facts() -> None:
    assert (
        is_request("Can I get to the top?")
        and is_request("Please book a table.")
        and is_request("它周一开放吗？")
    )
    assert (
        not is_request("Thanks!")
        and not is_request("I use a wheelchair.")
        and not is_request("我下周去北京。")
    )
    facts = user_facts(exchanges([("user", "I use a wheelchair. What is open today?"), ("assistant", "x"),
                                  ("user", "我对花生过敏。")]))  # fmt: skip
    assert [(f.turn, f.fact) for f in facts] == [(1, "I use a wheelchair."), (2, "我对花生过敏。")]


def _local_score(messages: list[dict[str, Any]], metric: str) -> Any:
    result = ragmeter.evaluate([{"id": "c", "messages": messages}], [metric], None)
    return result.score(0, metric)


def test_local_retention_catches_a_restated_number_a_negation_and_a_repeat_question() -> None:
    user = {"role": "user", "content": "My budget is 300 euros. I don't eat meat. Suggest a dinner."}
    ok = _local_score([user, {"role": "assistant", "content": "With your budget of 300 euros, try the vegetable tagine."}],
                      "knowledge_retention")  # fmt: skip
    assert ok is not None and ok.value == 1.0
    for reply in (
        "With your budget of 500 euros, try the vegetable tagine.",  # a number restated otherwise
        "Since you eat meat, the steak is a good choice.",  # a negation dropped
    ):
        bad = _local_score([user, {"role": "assistant", "content": reply}], "knowledge_retention")
        assert bad is not None and bad.value == 0.0, reply
    asked = _local_score(
        [user, {"role": "assistant", "content": "Sure. What is your budget for the dinner?"}],
        "knowledge_retention",
    )
    assert asked is not None and asked.value == 0.0 and "asks again" in asked.details["turns"][0]["reason"]


def test_local_relevancy_and_completeness() -> None:
    messages = [
        {"role": "user", "content": "Tell me about the Eiffel Tower."},
        {
            "role": "assistant",
            "content": "The Eiffel Tower is a wrought-iron lattice tower in Paris, completed in 1889.",
        },
        {"role": "user", "content": "How tall is it?"},
        {"role": "assistant", "content": "The weather in Paris is mild in May."},
        {"role": "user", "content": "Thanks!"},
        {"role": "assistant", "content": "You're welcome."},
    ]
    rel = _local_score(messages, "conversation_relevancy")
    assert rel is not None and [t["turn"] for t in rel.details["turns"]] == [1, 2, 3]
    first, second, thanks = (t["confidence"] for t in rel.details["turns"])
    assert second < first and thanks == 1.0  # the weather is not the tower's height; small talk is fine
    assert "How tall is the Eiffel Tower?" in rel.details["turns"][1]["reason"]
    comp = _local_score(messages, "conversation_completeness")
    assert comp is not None and [r["request"] for r in comp.details["requests"]] == [
        "Tell me about the Eiffel Tower.",
        "How tall is the Eiffel Tower?",
    ]


def test_role_adherence_is_refused_with_the_local_judge() -> None:
    with pytest.raises(UnsupportedStepError, match="check_role_adherence"):
        ragmeter.evaluate([TRIP], ["role_adherence"], LocalJudge())
    assert load_dataset([TRIP])[0].system_prompt.startswith("You are a travel guide")
