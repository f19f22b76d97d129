"""The written tool-call trajectories of ``tool_call_cases.json`` as conversation samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragmeter.dataset.messages import ChatMessage, ToolCall
from ragmeter.dataset.sample import Sample

CASES_FILE = Path(__file__).with_name("tool_call_cases.json")


def load_cases() -> list[dict[str, Any]]:
    return json.loads(CASES_FILE.read_text(encoding="utf-8"))["cases"]


def calls(items: list[dict[str, Any]]) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(c["name"], json.dumps(c["arguments"], ensure_ascii=False), f"call_{i}")
        for i, c in enumerate(items)
    )


def case_sample(case: dict[str, Any]) -> Sample:
    """The case as an agent's conversation: the request, one assistant message making the calls,
    one result per call, the answer."""
    made = calls(case["actual"])
    messages = [ChatMessage("user", "Please do it.")]
    if made:
        messages.append(ChatMessage("assistant", "", tool_calls=made))
        messages += [ChatMessage("tool", "ok", tool_call_id=c.id, name=c.name) for c in made]
    messages.append(ChatMessage("assistant", "Done."))
    expected = tuple(ToolCall(c.name, c.arguments) for c in calls(case["expected"]))
    return Sample(
        id=case["id"], conversation_id=case["id"], messages=tuple(messages), reference_tool_calls=expected
    )
