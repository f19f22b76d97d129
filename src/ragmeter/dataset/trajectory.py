"""An agent's trajectory, read from a conversation's messages (see docs/agents.md).

An agent is a conversation whose assistant messages call tools: each call (:class:`ToolCall`:
name, arguments as JSON text, id) is answered by a ``tool`` message holding its result. This
module reads the calls of a conversation sample in order, pairs each with its result, and reads
the tools declared for the run:

- :func:`tool_steps` -> one :class:`ToolStep` per call, numbered 1.. in the order the calls were
  made (a message's parallel calls in their listed order), each with the result that answers it:
  the tool message whose ``tool_call_id`` names the call, else the first unanswered tool message
  after it (of the same tool, when the message names one); None when no result came back.
- :func:`read_tools` -> the declared tools as ``{"name", "description", "parameters"}`` objects
  (``parameters``: the JSON schema of the arguments, ``{}`` when none is given), from any of the
  shapes users have them in: OpenAI's ``{"type": "function", "function": {...}}``, the bare
  function object, Anthropic's ``input_schema``, MCP's ``inputSchema``, or a LlamaIndex tool
  (its ``metadata``).
- :func:`read_tool_calls` -> reference (expected) tool calls, from the shapes of the three
  frameworks: ``{"name", "arguments" | "args"}`` (OpenAI, Ragas ``ToolCall``), DeepEval's
  ``{"name", "input_parameters"}``, LlamaIndex's ``{"tool_name", "tool_kwargs"}``.
- :func:`agent_messages` -> a LlamaIndex agent's output (``AgentOutput``: its ``tool_calls`` with
  their results, its response) as the messages of a conversation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.dataset.messages import ChatMessage, ToolCall
from ragmeter.errors import DatasetError

#: columns read as an agent's expected tool calls, declared tools and allowed topics (docs/agents.md)
REFERENCE_TOOL_CALL_KEYS: tuple[str, ...] = (
    "reference_tool_calls",
    "expected_tools",
    "expectedTools",
    "expected_tool_calls",
)
TOOLS_KEYS: tuple[str, ...] = ("tools", "available_tools", "availableTools")
TOPICS_KEYS: tuple[str, ...] = ("reference_topics",)
#: the keys a tool call's name and arguments are read from, in order, across the frameworks
NAME_KEYS = ("name", "tool_name")
ARGUMENT_KEYS = ("arguments", "args", "input_parameters", "inputParameters", "tool_kwargs", "kwargs")


@dataclass(frozen=True)
class ToolStep:
    """One tool call of a trajectory: ``index`` (1-based, in call order), the ``call``, the
    ``result`` that answers it (None when none came back), the ``turn`` it was made in (the n-th
    user message; 0 before the first), and where the call and its result are among the messages
    (``call_at``, ``result_at``: 0-based indices; ``result_at`` None without a result)."""

    index: int
    call: ToolCall
    result: str | None
    turn: int
    call_at: int = 0
    result_at: int | None = None

    def to_dict(self, result_limit: int | None = None) -> dict[str, Any]:
        result = self.result
        if result is not None and result_limit is not None and len(result) > result_limit:
            result = result[: result_limit - 1] + "…"
        return {"index": self.index, "turn": self.turn, **self.call.to_dict(), "result": result}


def tool_calls(messages: Sequence[ChatMessage] | None) -> list[ToolCall]:
    """Every tool call the assistant made, in order."""
    return [c for m in messages or () if m.role == "assistant" for c in m.tool_calls]


def tool_steps(messages: Sequence[ChatMessage] | None) -> list[ToolStep]:
    """The calls with their results (see the module docstring)."""
    steps: list[tuple[ToolCall, int, int]] = []
    results: dict[int, tuple[str, int]] = {}
    turn = 0
    previous_user = False
    for at, m in enumerate(messages or ()):
        if m.role == "user" and not previous_user:
            turn += 1
        previous_user = m.role == "user"
        if m.role == "assistant":
            steps.extend((c, turn, at) for c in m.tool_calls)
        elif m.role == "tool":
            open_steps = [k for k in range(len(steps)) if k not in results]
            by_id = [k for k in open_steps if m.tool_call_id is not None and steps[k][0].id == m.tool_call_id]
            by_name = [k for k in open_steps if steps[k][0].name == m.name]
            chosen = by_id or by_name or open_steps
            if chosen:
                results[chosen[0]] = (m.content, at)
    out = []
    for k, (call, t, call_at) in enumerate(steps):
        result, result_at = results.get(k, (None, None))
        out.append(ToolStep(k + 1, call, result, t, call_at, result_at))
    return out


# ------------------------------------------------------------------------------- reading


def _error(message: str, file: str | None, row: int | None, field: str) -> DatasetError:
    return DatasetError(message, file=file, row=row, field=field)


def _object(value: Any) -> Any:
    """A pydantic model or a dataclass-like object as a dict; anything else as it is."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump()
    return value


def _json_value(value: Any, file: str | None, row: int | None, field: str) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "[{":
            try:
                return json.loads(text)
            except ValueError as exc:
                raise _error(f"not valid JSON: {exc}", file, row, field) from exc
    return value


def read_tool_calls(
    value: Any, *, file: str | None = None, row: int | None = None, field: str = "reference_tool_calls"
) -> tuple[ToolCall, ...]:
    """Expected tool calls (see the module docstring); a JSON list in a string is read too."""
    value = _json_value(value, file, row, field)
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        value = list(value) if hasattr(value, "__iter__") and not isinstance(value, (str, Mapping)) else value
    if not isinstance(value, (list, tuple)):
        raise _error(f"expected a list of tool calls, got {type(value).__name__}", file, row, field)
    out = []
    for j, item in enumerate(value):
        at = f"{field}[{j}]"
        item = _object(item)
        if isinstance(item, ToolCall):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            raise _error(f"expected a tool call object, got {type(item).__name__}", file, row, at)
        source: Mapping[str, Any] = _function(item)
        name = next((source[k] for k in NAME_KEYS if isinstance(source.get(k), str)), None)
        if not name or not name.strip():
            raise _error("a tool call without a name ('name' or 'tool_name')", file, row, at)
        args = next((source[k] for k in ARGUMENT_KEYS if k in source), None)
        if args is None:
            text = ""
        elif isinstance(args, str):
            text = args
        else:
            try:
                text = json.dumps(_object(args), ensure_ascii=False, sort_keys=False)
            except (TypeError, ValueError) as exc:
                raise _error(
                    f"tool call arguments are not JSON data: {exc}", file, row, f"{at}.arguments"
                ) from exc
        call_id = item.get("id", item.get("tool_id"))
        out.append(ToolCall(name.strip(), text, None if call_id is None else str(call_id)))
    return tuple(out)


def _function(item: Mapping[str, Any]) -> Mapping[str, Any]:
    """OpenAI's ``{"type": "function", "function": {...}}`` wrapper taken off."""
    inner = item.get("function")
    return inner if isinstance(inner, Mapping) else item


def _tool_object(item: Any) -> Any:
    """A LlamaIndex tool (``.metadata`` with ``name``, ``description``, ``get_parameters_dict``)
    as a dict; other objects through :func:`_object`."""
    meta = getattr(item, "metadata", None)
    if meta is not None and hasattr(meta, "get_parameters_dict") and hasattr(meta, "name"):
        return {"name": meta.name, "description": meta.description, "parameters": meta.get_parameters_dict()}
    return _object(item)


def read_tools(
    value: Any, *, file: str | None = None, row: int | None = None, field: str = "tools"
) -> tuple[dict[str, Any], ...]:
    """The declared tools (see the module docstring)."""
    value = _json_value(value, file, row, field)
    if value is None:
        return ()
    if isinstance(value, Mapping) or not hasattr(value, "__iter__") or isinstance(value, str):
        raise _error(f"expected a list of tools, got {type(value).__name__}", file, row, field)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for j, item in enumerate(value):
        at = f"{field}[{j}]"
        item = _tool_object(item)
        if not isinstance(item, Mapping):
            raise _error(f"expected a tool object, got {type(item).__name__}", file, row, at)
        source = _function(item)
        name = source.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _error("a tool without a name", file, row, f"{at}.name")
        if name in seen:
            raise _error(f"tool {name!r} is declared twice", file, row, f"{at}.name")
        seen.add(name)
        params: Any = next(
            (source[k] for k in ("parameters", "input_schema", "inputSchema") if source.get(k) is not None),
            {},
        )
        params = _json_value(params, file, row, f"{at}.parameters")
        if not isinstance(params, Mapping):
            raise _error(
                f"a tool's parameters must be a JSON schema object, got {type(params).__name__}",
                file,
                row,
                f"{at}.parameters",
            )
        description = source.get("description")
        out.append(
            {
                "name": name.strip(),
                "description": description.strip() if isinstance(description, str) else "",
                "parameters": json.loads(json.dumps(params, default=str)),
            }
        )
    return tuple(out)


def read_topics(
    value: Any, *, file: str | None = None, row: int | None = None, field: str = "reference_topics"
) -> tuple[str, ...]:
    """The topics an agent may talk about (Ragas's ``reference_topics``): a list of texts."""
    value = _json_value(value, file, row, field)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise _error(f"expected a list of topics, got {type(value).__name__}", file, row, field)
    out = []
    for j, t in enumerate(value):
        if not isinstance(t, str):
            raise _error(f"expected a topic as text, got {type(t).__name__}", file, row, f"{field}[{j}]")
        if t.strip():
            out.append(t.strip())
    return tuple(out)


def agent_fields(
    record: Mapping[str, Any], *, file: str | None = None, row: int | None = None
) -> dict[str, Any]:
    """A row's expected tool calls, declared tools and allowed topics, as sample fields (absent
    when the row has none): the first of each field's columns that holds a value, which may be a
    list, an array (Parquet, pandas) or a JSON list in a string."""
    from ragmeter.dataset.values import is_missing

    out: dict[str, Any] = {}
    readers = (
        ("reference_tool_calls", REFERENCE_TOOL_CALL_KEYS, read_tool_calls),
        ("tools", TOOLS_KEYS, read_tools),
        ("reference_topics", TOPICS_KEYS, read_topics),
    )
    for name, keys, read in readers:
        for key in keys:
            value: Any = record.get(key)
            tolist = getattr(value, "tolist", None)
            if callable(tolist) and not isinstance(value, (str, bytes)):
                value = tolist()  # a NumPy array cell
            if key in record and not is_missing(value):
                out[name] = read(value, file=file, row=row, field=key)  # type: ignore[operator]
                break
    return out


def tool_result_text(output: Any) -> str:
    """A LlamaIndex ``ToolOutput`` (``content`` / ``raw_output``) or any result, as text."""
    content = getattr(output, "content", None)
    if isinstance(content, str):
        return content
    raw = getattr(output, "raw_output", output)
    if isinstance(raw, str):
        return raw
    try:
        return json.dumps(_object(raw), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(raw)


def is_agent_output(value: Any) -> bool:
    """A LlamaIndex agent's output (``AgentOutput``: ``response`` a chat message, ``tool_calls``
    the ``ToolCallResult`` list)."""
    return hasattr(value, "tool_calls") and hasattr(getattr(value, "response", None), "content")


def agent_messages(question: str, output: Any) -> list[ChatMessage]:
    """A LlamaIndex agent's run as messages: the question, one assistant message per call (its
    ``tool_name`` and ``tool_kwargs``) followed by the call's result, and the final response."""

    def attr(item: Any, name: str) -> Any:  # a ToolCallResult, or a dict with its fields
        return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)

    out = [ChatMessage("user", question)]
    for k, item in enumerate(getattr(output, "tool_calls", None) or ()):
        name = str(attr(item, "tool_name") or "tool")
        kwargs = _object(attr(item, "tool_kwargs") or {})
        call_id = str(attr(item, "tool_id") or f"call_{k + 1}")
        arguments = json.dumps(kwargs, ensure_ascii=False, default=str)
        out.append(ChatMessage("assistant", "", tool_calls=(ToolCall(name, arguments, call_id),)))
        result = tool_result_text(attr(item, "tool_output") or "")
        out.append(ChatMessage("tool", result, tool_call_id=call_id, name=name))
    content = getattr(getattr(output, "response", None), "content", None)
    out.append(ChatMessage("assistant", content if isinstance(content, str) else str(content or "")))
    return out


__all__ = [
    "REFERENCE_TOOL_CALL_KEYS",
    "TOOLS_KEYS",
    "TOPICS_KEYS",
    "ToolStep",
    "agent_fields",
    "agent_messages",
    "is_agent_output",
    "read_tool_calls",
    "read_tools",
    "read_topics",
    "tool_calls",
    "tool_result_text",
    "tool_steps",
]
