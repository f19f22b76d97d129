"""An agent's trajectory read from each input shape, through the one conversation reader: OpenAI
messages with tools and expected calls, DeepEval test cases, LlamaIndex's call shapes; and bad rows
named by file, row and field while the other rows are read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragmeter
from ragmeter.dataset.messages import ToolCall
from ragmeter.dataset.trajectory import read_tool_calls, read_tools, tool_steps

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_deepeval_test_cases_with_tools(tmp_path: Path) -> None:
    case = {
        "input": "Weather in Rome?",
        "actual_output": "22°C.",
        "tools_called": [
            {"name": "get_weather", "input_parameters": {"city": "Rome"}, "output": {"temp": 22}}
        ],
        "expected_tools": [{"name": "get_weather", "input_parameters": {"city": "Rome"}}],
        "expected_output": "It is 22°C.",
    }
    conversational = {
        "turns": [
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": "3°C.",
                "tools_called": [{"name": "get_weather", "output": "3°C"}],
            },
        ],
        "expectedTools": [{"name": "get_weather"}],
    }
    ds = ragmeter.load_dataset(_write(tmp_path / "d.jsonl", [case, conversational]))
    assert not ds.problems
    rome, oslo = (s for s in ds if s.level == "conversation")
    assert rome.reference_tool_calls == (ToolCall("get_weather", '{"city": "Rome"}'),)
    assert rome.reference == "It is 22°C."
    assert [(s.call.name, s.result) for s in tool_steps(rome.messages)] == [("get_weather", '{"temp": 22}')]
    assert oslo.reference_tool_calls == (ToolCall("get_weather", ""),)
    result = ragmeter.evaluate(ds, ["tool_call_correctness"], progress=False)
    assert [s.value for s in result.scores("tool_call_correctness") if s is not None] == [1.0, 1.0]


def test_the_call_shapes_of_the_three_frameworks() -> None:
    calls = read_tool_calls(
        [
            {"name": "a", "arguments": '{"x": 1}'},  # OpenAI
            {"name": "b", "args": {"y": [1, 2]}},  # Ragas
            {"name": "c", "input_parameters": {"z": "字"}},  # DeepEval
            {"tool_name": "d", "tool_kwargs": {}, "tool_id": "t9"},  # LlamaIndex
            {"type": "function", "function": {"name": "e", "arguments": "{}"}},
        ]
    )
    assert [(c.name, c.args) for c in calls] == [
        ("a", {"x": 1}),
        ("b", {"y": [1, 2]}),
        ("c", {"z": "字"}),
        ("d", {}),
        ("e", {}),
    ]
    tools = read_tools(
        [
            WEATHER,
            {"name": "s", "input_schema": {"type": "object", "required": ["q"]}},
            {"name": "m", "inputSchema": {}},
        ]
    )
    assert [t["name"] for t in tools] == ["get_weather", "s", "m"] and tools[1]["parameters"]["required"] == [
        "q"
    ]


def test_results_pair_with_their_calls_by_id_then_by_order() -> None:
    rows = [
        {
            "id": "p",
            "messages": [
                {"role": "user", "content": "Weather in Rome and Oslo?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "a", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
                    {"id": "b", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
                {"role": "tool", "tool_call_id": "b", "content": "Oslo: 3°C"},
                {"role": "tool", "tool_call_id": "a", "content": "Rome: 22°C"},
                {"role": "assistant", "content": "Rome 22°C, Oslo 3°C."},
            ],
        }
    ]  # fmt: skip
    conv = ragmeter.load_dataset(rows)[0]
    steps = tool_steps(conv.messages)
    assert [(s.index, s.call.id, s.result) for s in steps] == [(1, "a", "Rome: 22°C"), (2, "b", "Oslo: 3°C")]


def test_bad_agent_rows_name_the_file_row_and_field(tmp_path: Path) -> None:
    good = {
        "id": "ok",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    }
    rows = [
        {**good, "id": "a", "tools": [WEATHER, WEATHER]},
        {**good, "id": "b", "tools": [{"name": "x", "parameters": "not a schema"}]},
        {**good, "id": "c", "reference_tool_calls": [{"arguments": {}}]},
        {**good, "id": "d", "reference_topics": [3]},
        good,
    ]
    ds = ragmeter.load_dataset(_write(tmp_path / "bad.jsonl", rows))
    assert [s.id for s in ds if s.level == "conversation"] == ["ok"]
    found = {(p.row, p.field) for p in ds.problems}
    assert found == {
        (1, "tools[1].name"),
        (2, "tools[0].parameters"),
        (3, "reference_tool_calls[0]"),
        (4, "reference_topics[0]"),
    }
    messages = {p.row: p.message for p in ds.problems}
    assert (
        "declared twice" in messages[1]
        and "JSON schema object" in messages[2]
        and "without a name" in messages[3]
    )
    assert all(str(tmp_path / "bad.jsonl") in str(p) for p in ds.problems)


@pytest.mark.parametrize(
    "value", ['[{"name": "a", "arguments": {"q": 1}}]', [{"name": "a", "arguments": {"q": 1}}]]
)
def test_expected_calls_as_a_json_cell(tmp_path: Path, value: object) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        [
            {
                "messages": json.dumps(
                    [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
                ),
                "reference_tool_calls": value,
            }
        ]
    )
    conv = ragmeter.load_dataset(frame)[0]
    assert conv.reference_tool_calls == (ToolCall("a", '{"q": 1}'),)
