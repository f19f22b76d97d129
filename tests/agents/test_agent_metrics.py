"""The judged agent metrics (agent_goal_success, tool_selection, topic_adherence) with a scripted
LLM judge and with the local judge, and their labelled trajectories (ragmeter agreement)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.dataset.judgements import load_judgements
from ragmeter.errors import UnsupportedStepError
from ragmeter.judges import JudgeConfig, LLMJudge, ModelClient
from ragmeter.judges.agent_steps import RESULT_LIMIT, trajectory_text
from ragmeter.judges.providers.fake import FakeProvider
from ragmeter.local import LocalJudge
from ragmeter.local.agent import readable, values

FAST = JudgeConfig(backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=5.0, max_retries=0)
DEV = Path(__file__).resolve().parents[2] / "data" / "dev" / "agent_trajectories_dev.jsonl"
WEATHER_TOOLS = [
    {"name": "get_weather", "description": "Current weather of a city.", "parameters": {"type": "object"}},
    {"name": "web_search", "description": "Search the web.", "parameters": {"type": "object"}},
]


def _trip(answer: str, result: str = "Paris: 18°C, sunny.", **extra: Any) -> dict[str, Any]:
    return {
        "id": extra.pop("id", "trip"),
        "messages": [
            {"role": "system", "content": "You are a travel assistant."},
            {"role": "user", "content": "What is the weather in Paris today?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": result},
            {"role": "assistant", "content": answer},
        ],
        "tools": WEATHER_TOOLS,
        **extra,
    }


REPLIES = {
    "check_goal": {
        "goal": "The weather in Paris",
        "end_state": "Told 18°C, sunny",
        "reason": "Matches the result.",
        "achieved": True,
    },
    "check_tool_selection": {"verdicts": [{"index": 1, "reason": "The weather tool.", "right_tool": True}]},
    "check_topics": {
        "topics": [
            {"topic": "weather in Paris", "reason": "", "allowed": True, "answered": True},
            {"topic": "the election", "reason": "", "allowed": False, "answered": True},
        ]
    },
}


def _judge(replies: dict[str, Any] = REPLIES) -> tuple[LLMJudge, FakeProvider]:
    provider = FakeProvider(lambda request: json.dumps(replies[str(request.step)], ensure_ascii=False))
    return LLMJudge(ModelClient(provider, FAST)), provider


def _conversation_score(result: Any, metric: str) -> Any:
    idx = next(i for i, s in result.samples if s.level == "conversation")
    return result.score(idx, metric)


def test_one_call_per_trajectory_and_the_scores() -> None:
    judge, provider = _judge()
    row = _trip("It is 18°C and sunny in Paris today.", reference_topics=["travel", "weather"])
    result = ragmeter.evaluate([row], ["agent_goal_success", "tool_selection", "topic_adherence"], judge)
    assert sorted(str(r.step) for r in provider.requests) == sorted(REPLIES)
    goal = _conversation_score(result, "agent_goal_success")
    assert goal.value == 1.0 and goal.reason.startswith(
        "achieved: The weather in Paris; end state: Told 18°C"
    )
    assert _conversation_score(result, "tool_selection").value == 1.0
    topics = _conversation_score(result, "topic_adherence")
    # TP 1, FP 1 (an off-topic question answered), FN 0: precision 0.5, recall 1, F1 2/3
    assert topics.value == pytest.approx(2 / 3) and "answered off-topic: the election" in topics.reason
    # the trajectory reaches the judge as numbered lines, the tool result fenced as data
    prompt = next(r for r in provider.requests if r.step == "check_goal").messages[-1].content
    assert "Call [1]: get_weather(" in prompt and "Result [1]: Paris: 18°C, sunny." in prompt
    assert "<data-" in prompt and "Expected outcome: (none given)" in prompt
    tools_prompt = next(r for r in provider.requests if r.step == "check_tool_selection").messages[-1].content
    assert "- get_weather: Current weather of a city." in tools_prompt


def test_the_reference_is_the_expected_outcome() -> None:
    judge, provider = _judge()
    ragmeter.evaluate(
        [_trip("18°C.", reference="The user learns it is 18°C and sunny.")], ["agent_goal_success"], judge
    )
    assert "The user learns it is 18°C and sunny." in provider.requests[0].messages[-1].content
    judge, provider = _judge()
    metric = ragmeter.get_metric("agent_goal_success", use_reference=False)
    ragmeter.evaluate([_trip("18°C.", reference="The user learns it.")], [metric], judge)
    assert "(none given)" in provider.requests[0].messages[-1].content
    result = ragmeter.evaluate(
        [_trip("18°C.")], [ragmeter.get_metric("agent_goal_success", use_reference=True)], judge
    )
    score = _conversation_score(result, "agent_goal_success")
    assert score.error is not None and score.error.kind == "MissingInput"


def test_chinese_trajectories_get_the_chinese_prompt() -> None:
    judge, provider = _judge()
    row = {
        "id": "zh",
        "messages": [
            {"role": "user", "content": "北京今天天气怎么样？"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": "北京：晴，25°C。"},
            {"role": "assistant", "content": "北京今天晴，25°C。"},
        ],
    }
    ragmeter.evaluate([row], ["agent_goal_success"], judge)
    prompt = provider.requests[0].messages[-1].content
    assert (
        "调用 [1]：get_weather(" in prompt
        and "结果 [1]：北京：晴，25°C。" in prompt
        and "预期结果：（未提供）" in prompt
    )


def test_a_long_tool_result_is_cut_and_says_so() -> None:
    row = _trip("ok", result="x" * (RESULT_LIMIT + 500))
    sample = ragmeter.load_dataset([row])[0]
    text, n = trajectory_text(sample.messages, "en")
    assert n == 1 and "[... 500 more characters]" in text


def test_no_tool_call_and_no_topics_are_invalid_with_their_reasons() -> None:
    replies = {**REPLIES, "check_topics": {"topics": []}}
    judge, _ = _judge(replies)
    row = {
        "id": "t",
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}],
        "reference_topics": ["banking"],
    }
    result = ragmeter.evaluate([row], ["tool_selection", "topic_adherence"], judge)
    assert _conversation_score(result, "tool_selection").error.kind == "NoToolCalls"
    assert _conversation_score(result, "topic_adherence").error.kind == "NoTopics"


def test_the_local_judge_reads_the_goal_and_leaves_the_llm_steps_out() -> None:
    rows = [
        _trip("It is 18°C and sunny in Paris today.", id="good"),
        _trip("It is 31°C and stormy in Paris today.", id="made-up"),
        _trip("Sorry, I cannot help with the weather.", id="refusal"),
    ]
    result = ragmeter.evaluate(rows, ["agent_goal_success", "tool_selection"], LocalJudge())
    assert [m["metric"] for m in result.meta["metrics_left_out"]] == ["tool_selection"]
    goal = {
        s.id: result.score(i, "agent_goal_success") for i, s in result.samples if s.level == "conversation"
    }
    assert goal["good"].value >= 0.5 > goal["made-up"].value and goal["refusal"].value < 0.5
    assert "1 of 1 number(s) found" in goal["good"].reason and "(local judge)" in goal["good"].reason
    assert "0 of 1 number(s) found" in goal["made-up"].reason
    with pytest.raises(UnsupportedStepError):
        ragmeter.evaluate(rows, ["tool_selection"], LocalJudge())


def test_the_local_judge_sees_a_success_claimed_over_a_failed_call() -> None:
    row = _trip("Done, it is sunny in Paris.", result='{"error": "weather service unavailable"}')
    result = ragmeter.evaluate([row], ["agent_goal_success"], LocalJudge())
    score = _conversation_score(result, "agent_goal_success")
    assert score.value <= 0.1 and "call 1 (get_weather) failed and the reply does not say so" in score.reason


def test_tool_results_read_as_text_and_numbers() -> None:
    assert (
        readable('{"status": "shipped", "eta": {"day": "Thursday"}}') == "status: shipped; eta.day: Thursday"
    )
    assert values("434.0") == {"434"} and {"8", "20"} <= values("at 20:00") and "20" in values("8 pm")
    assert "17" in values("下午五点")


def test_the_labelled_trajectories_read_as_conversations() -> None:
    judgements = list(load_judgements(DEV))
    assert len(judgements) >= 60
    langs = {(j.sample.metadata["lang"], j.metric, j.label) for j in judgements}
    assert {
        (lang, m, y)
        for lang in ("en", "zh")
        for m in ("agent_goal_success", "tool_selection")
        for y in (0.0, 1.0)
    } <= langs
    sample = judgements[0].sample
    assert sample.level == "conversation" and sample.tools and sample.messages[1].tool_calls


def test_agreement_leaves_out_what_the_judge_cannot_compute(tmp_path: Path) -> None:
    from ragmeter.run.agreement import agreement

    lines = DEV.read_text(encoding="utf-8").splitlines()
    picked = [line for line in lines if '"agent_goal_success"' in line][:4] + [
        line for line in lines if '"tool_selection"' in line
    ][:2]
    path = tmp_path / "few.jsonl"
    path.write_text("\n".join(picked) + "\n", encoding="utf-8")
    reports = agreement([path], LocalJudge())
    by_metric = {r.metric: r for r in reports}
    assert (
        by_metric["agent_goal_success"].kind == "binary" and by_metric["agent_goal_success"].stats["n"] == 4
    )
    assert by_metric["tool_selection"].kind == "left_out"
    assert "cannot do step(s) check_tool_selection" in by_metric["tool_selection"].stats["left_out"]
