"""Agent traces written by hand (OpenInference attributes): the tool calls and the tools offered
become a conversation record, from the LLM span that read the tool results or, without one, from
the TOOL spans; a trace with neither retrieval nor a tool call is still skipped."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.otlp import export, span, write_lines
from ragmeter.dataset import load_dataset

WEATHER_SCHEMA = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def _llm_with_results(trace: int) -> list[dict]:
    llm = {
        "openinference.span.kind": "LLM",
        "llm.tools.0.tool.json_schema": json.dumps(WEATHER_SCHEMA),
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather in Rome?",
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.tool_calls.0.tool_call.id": "t1",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": '{"city": "Rome"}',
        "llm.input_messages.2.message.role": "tool",
        "llm.input_messages.2.message.content": "Rome: 27°C, sunny.",
        "llm.input_messages.2.message.tool_call_id": "t1",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Rome is sunny, 27°C.",
    }
    return [
        span(
            trace,
            1,
            None,
            "agent.run",
            {"openinference.span.kind": "AGENT", "input.value": "Weather in Rome?"},
        ),
        span(trace, 2, 1, "ChatModel", llm, start_ms=5),
    ]


def _tool_spans_only(trace: int) -> list[dict]:
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "get_weather",
        "tool.description": "Weather of a city.",
        "tool.parameters": json.dumps(WEATHER_SCHEMA["function"]["parameters"]),
        "input.value": json.dumps({"kwargs": {"city": "Oslo"}}),
        "input.mime_type": "application/json",
        "output.value": "Oslo: 3°C, snow.",
    }
    return [
        span(
            trace,
            1,
            None,
            "agent.run",
            {
                "openinference.span.kind": "AGENT",
                "input.value": "Is it snowing in Oslo?",
                "output.value": "Yes, it is snowing in Oslo.",
            },
        ),
        span(trace, 2, 1, "FunctionTool.call", tool, start_ms=2),
        span(
            trace, 3, 2, "inner", {**tool, "tool.name": "inner_helper"}, start_ms=3
        ),  # inside a tool: not a call
    ]


def test_agent_traces_become_conversations_with_their_calls(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "t.otlp.jsonl",
        [export(*_llm_with_results(1)), export(*_tool_spans_only(2)), export(span(3, 1, None, "embed", {}))],
    )
    ds = load_dataset(path)
    conversations = {s.messages[0].content: s for s in ds if s.level == "conversation"}
    rome = conversations["Weather in Rome?"]
    assert [m.role for m in rome.messages] == ["user", "assistant", "tool", "assistant"]
    assert rome.messages[1].tool_calls[0].name == "get_weather" and rome.messages[2].tool_call_id == "t1"
    assert rome.tools == ({"name": "get_weather", "description": "Weather of a city.",
                           "parameters": WEATHER_SCHEMA["function"]["parameters"]},)  # fmt: skip
    oslo = conversations["Is it snowing in Oslo?"]
    calls = [c for m in oslo.messages for c in m.tool_calls]
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", '{"city": "Oslo"}')]
    assert (
        oslo.messages[-1].content == "Yes, it is snowing in Oslo."
        and oslo.messages[2].content == "Oslo: 3°C, snow."
    )
    turn = next(s for s in ds if s.id == f"{oslo.id}:1")
    assert turn.contexts == ("Oslo: 3°C, snow.",) and turn.metadata["trace"]["trace_id"] == oslo.id
    assert len(ds.problems) == 1 and "has no retrieval" in ds.problems[0].message
