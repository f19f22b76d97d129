"""Conversation rows -> one conversation sample and one sample per answered turn with contexts.

One row holds one conversation, in any of three shapes, told apart per row
(:func:`conversation_format`):

- **OpenAI chat** (``openai``): ``{"id"?, "messages": [{"role": "system" | "user" | "assistant" |
  "tool", "content", "tool_calls"?, "tool_call_id"?}], "reference"?}``. Retrieval is a tool call:
  the results of the tool messages after a user message become the contexts of the assistant
  answer that follows them. An assistant message may also carry ``contexts`` directly (they win
  over tool results) and a ``reference`` (the expected answer of that turn). ``content`` may be a
  list of parts (its text parts are joined); ``developer`` reads as ``system``, the legacy
  ``function`` role and ``function_call`` as a tool message and a tool call.
- **Ragas** ``MultiTurnSample`` (``ragas``): ``{"user_input": [{"type": "human" | "ai" | "tool",
  "content", "tool_calls"?: [{"name", "args"}]}], "reference"?, ...}``, as ``model_dump()`` and
  ``EvaluationDataset.to_jsonl`` / ``to_csv`` / ``to_pandas`` write it. The ``ToolMessage`` results
  after a human message become the contexts of the AI answer that follows.
- **DeepEval** conversational test case (``deepeval``): ``{"turns": [{"role": "user" |
  "assistant", "content", "retrieval_context"?, "tools_called"?}], "chatbot_role"?,
  "expected_outcome"?, "scenario"?, "name"?}`` (camelCase keys too). ``retrieval_context`` gives an
  assistant turn its contexts; each of ``tools_called`` becomes a tool call and a tool message
  holding its ``output``; ``chatbot_role`` becomes a system message at the start;
  ``expected_outcome`` is the conversation's reference. Turns in the older shape (``input``,
  ``actual_output``, ``retrieval_context``, ``expected_output``) become a user and an assistant
  message each.

Encoded cells (CSV, Parquet) are read too: a list column may be a JSON or Python list in a string.

What comes out (:func:`conversation_samples`, also the API for code that builds conversations
itself, such as the trace reader):

- a **conversation sample**: ``id`` and ``conversation_id`` = the conversation's id (``id``,
  ``conversation_id``, ``sample_id``, DeepEval's ``name``; else the row number, and the loader keys
  it by its text, :mod:`ragmeter.dataset.keys`), ``messages`` = every message, ``reference`` = the
  conversation's reference (DeepEval: the expected outcome), ``metadata`` = the row's other columns;
- a **turn sample** for each turn (a user message, with the messages up to the next user message)
  whose assistant answer has contexts: ``id`` = ``"<conversation id>:<turn>"``, ``turn`` = the
  1-based index of its user message among the conversation's user messages (consecutive user
  messages are one turn), ``question`` = the user's message as written (the runner makes it
  standalone), ``answer`` = the turn's last assistant message with text, ``contexts`` = that
  message's own contexts or else the turn's tool results before it, ``reference`` = its reference,
  ``history`` = the last :data:`HISTORY_LIMIT` user and assistant messages with text before the
  turn, ``metadata`` = the answer message's other keys (latency, ids...).

A tool result is split into contexts when it is a JSON list (of texts, or of objects with a
``content`` / ``text`` / ``page_content`` / ``document`` / ``chunk`` field) or an object holding one
under ``documents`` / ``results`` / ``contexts`` / ``chunks``; any other result is one context.

Bad conversations raise :class:`~ragmeter.errors.DatasetError` naming the file, the row and the
message: ``field`` is the path in the row (``messages[3].role``, ``user_input[2].content``,
``turns[1].retrieval_context``). The loader keeps the error and scores the other rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.dataset.messages import ChatMessage, ToolCall, dialogue
from ragmeter.dataset.sample import Sample
from ragmeter.dataset.trajectory import (
    REFERENCE_TOOL_CALL_KEYS,
    TOOLS_KEYS,
    TOPICS_KEYS,
    agent_fields,
)
from ragmeter.dataset.values import (
    as_text,
    convert_id,
    convert_list,
    convert_text,
    is_missing,
    jsonable,
    parse_encoded_list,
    short_repr,
    text_problem,
    to_list,
    type_name,
)
from ragmeter.errors import DatasetError

#: a turn sample's ``history`` holds at most this many messages (the most recent ones)
HISTORY_LIMIT = 20
#: the column that holds a conversation's messages, per format
MESSAGE_KEYS: Mapping[str, str] = {
    "openai": "messages",
    "ragas": "user_input",
    "deepeval": "turns",
    "deepeval_case": "input",
}
#: columns read as a conversation's id, in order (DeepEval's ``name`` last)
ID_KEYS: tuple[str, ...] = ("id", "conversation_id", "sample_id")
_ROLE_ALIASES: Mapping[str, str] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
}
_DEEPEVAL_TOOL_KEYS = ("tools_called", "toolsCalled")
_DOC_TEXT_KEYS = ("content", "text", "page_content", "document", "chunk")
_DOC_LIST_KEYS = ("documents", "results", "contexts", "chunks")
_OPENAI_MESSAGE_KEYS = frozenset(
    {"role", "content", "tool_calls", "tool_call_id", "name", "contexts", "reference", "function_call"}
)


def _decoded(value: Any) -> Any:
    """A list cell as a list: lists, tuples, arrays; a JSON or Python list in a string."""
    value = as_text(value)
    if isinstance(value, str):
        parsed = parse_encoded_list(value)
        return parsed if parsed is not None else value
    return to_list(value)


def conversation_format(record: Mapping[str, Any]) -> str | None:
    """``"openai"``, ``"ragas"`` or ``"deepeval"`` when ``record`` is a conversation row, else None.

    A row is a conversation when ``messages`` or ``turns`` holds a list, or when ``user_input``
    holds a list (a Ragas single-turn row has text there); a DeepEval ``LLMTestCase`` row with
    ``tools_called`` or ``expected_tools`` is one too (``deepeval_case``: one turn, an agent's)."""
    for fmt, key in (("openai", "messages"), ("deepeval", "turns"), ("ragas", "user_input")):
        if key in record and isinstance(_decoded(record[key]), list):
            return fmt
    if "input" in record and any(
        k in record and not is_missing(record[k]) for k in (*_DEEPEVAL_TOOL_KEYS, *REFERENCE_TOOL_CALL_KEYS)
    ):
        return "deepeval_case"
    return None


# --------------------------------------------------------------------------------------- values


class _Where:
    """File and row of the conversation being read, for its errors."""

    def __init__(self, file: str | None, row: int) -> None:
        self.file = file
        self.row = row

    def error(self, message: str, field: str) -> DatasetError:
        return DatasetError(message, file=self.file, row=self.row, field=field)


def _plain(value: Any) -> Any:
    """Nested arrays (Parquet, pandas) as lists, model objects as dicts, all the way down."""
    value = as_text(value)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return _plain(dump())
    listed = to_list(value)
    if isinstance(listed, list):
        return [_plain(v) for v in listed]
    return value


def _text(value: Any, where: _Where, field: str) -> str:
    """Message text: a string, or a list of parts whose text parts are joined; missing -> ""."""
    value = as_text(value)
    if is_missing(value):
        return ""
    if isinstance(value, list):
        parts = []
        for j, part in enumerate(value):
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                text = part.get("text")
                if isinstance(text, Mapping):  # {"type": "text", "text": {"value": ...}}
                    text = text.get("value")
                if isinstance(text, str):
                    parts.append(text)
                elif part.get("type") in (None, "text"):
                    raise where.error("a text part without text", f"{field}[{j}]")
            else:
                raise where.error(f"expected a text part, got {type_name(part)}", f"{field}[{j}]")
        value = "\n".join(parts)
    if not isinstance(value, str):
        raise where.error(f"expected text, got {type_name(value)} {short_repr(value)}", field)
    problem = text_problem(value)
    if problem:
        raise where.error(problem, field)
    return value


def _arguments(value: Any, where: _Where, field: str) -> str:
    if is_missing(value):
        return ""
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            raise where.error(problem, field)
        return value
    try:
        return json.dumps(jsonable(value, file=where.file, row=where.row, column=field), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise where.error(f"tool call arguments are not JSON data: {exc}", field) from exc


def _tool_calls(value: Any, where: _Where, field: str) -> tuple[ToolCall, ...]:
    if is_missing(value):
        return ()
    items = _decoded(value)
    if not isinstance(items, list):
        raise where.error(f"expected a list of tool calls, got {type_name(items)}", field)
    calls = []
    for j, item in enumerate(items):
        at = f"{field}[{j}]"
        if not isinstance(item, Mapping):
            raise where.error(f"expected a tool call object, got {type_name(item)}", at)
        function = item.get("function")
        source = function if isinstance(function, Mapping) else item
        name = source.get("name")
        if not isinstance(name, str) or not name.strip():
            raise where.error("a tool call without a name", at)
        args = next(
            (source[k] for k in ("arguments", "args", "input_parameters", "inputParameters") if k in source),
            None,
        )
        call_id = item.get("id")
        calls.append(
            ToolCall(
                name=_text(name, where, f"{at}.name"),
                arguments=_arguments(args, where, f"{at}.arguments"),
                id=None if is_missing(call_id) else str(call_id),
            )
        )
    return tuple(calls)


def _contexts(value: Any, where: _Where, field: str) -> tuple[str, ...]:
    """An assistant message's own contexts: texts, or DeepEval's ``{"context", "source"}`` objects."""
    if is_missing(value):
        return ()
    items = _decoded(value)
    if isinstance(items, list):
        items = [it.get("context", it.get("content")) if isinstance(it, Mapping) else it for it in items]
    out = convert_list(items, file=where.file, row=where.row, column=field, ids=False)
    return tuple(c for c in out or () if c.strip())


def tool_result_contexts(content: str) -> list[str]:
    """The contexts one tool result gives (see the module docstring): its documents when it is
    JSON that lists them, else the whole text as one context; blank results give none."""
    text = content.strip()
    if not text:
        return []
    if text[0] in "[{":
        try:
            value = json.loads(text)
        except ValueError:
            return [text]
        if isinstance(value, Mapping):
            inner = next((value[k] for k in _DOC_LIST_KEYS if isinstance(value.get(k), list)), None)
            if inner is None:
                return [text]
            value = inner
        if isinstance(value, list):
            out: list[str] = []
            for item in value:
                if isinstance(item, str):
                    doc = item
                elif isinstance(item, Mapping):
                    found = next((item[k] for k in _DOC_TEXT_KEYS if isinstance(item.get(k), str)), None)
                    doc = found if found is not None else json.dumps(item, ensure_ascii=False)
                else:
                    doc = json.dumps(item, ensure_ascii=False)
                if doc.strip():
                    out.append(doc.strip())
            return out
    return [text]


# ------------------------------------------------------------------------------- the three shapes


def _role(value: Any, where: _Where, field: str, allowed: Mapping[str, str] = _ROLE_ALIASES) -> str:
    if not isinstance(value, str) or value.strip().lower() not in allowed:
        shown = short_repr(value) if value is not None else "none"
        names = ", ".join(sorted(set(allowed.values())))
        raise where.error(f"unknown role {shown} (expected {names})", field)
    return allowed[value.strip().lower()]


def _openai_messages(
    items: list[Any], where: _Where, key: str
) -> tuple[list[ChatMessage], dict[int, dict[str, Any]]]:
    """(messages, {index of an assistant message: its other keys})."""
    out: list[ChatMessage] = []
    extras: dict[int, dict[str, Any]] = {}
    for i, raw in enumerate(items):
        at = f"{key}[{i}]"
        if not isinstance(raw, Mapping):
            raise where.error(
                f"expected a message object with 'role' and 'content', got {type_name(raw)} {short_repr(raw)}",
                at,
            )
        role = _role(raw.get("role"), where, f"{at}.role")
        content = _text(raw.get("content"), where, f"{at}.content")
        calls = _tool_calls(raw.get("tool_calls"), where, f"{at}.tool_calls")
        legacy = raw.get("function_call")
        if isinstance(legacy, Mapping):
            calls = (*calls, *_tool_calls([legacy], where, f"{at}.function_call"))
        call_id = raw.get("tool_call_id")
        name = raw.get("name")
        msg = ChatMessage(
            role=role,
            content=content,
            contexts=_contexts(raw.get("contexts"), where, f"{at}.contexts") if role == "assistant" else (),
            tool_calls=calls if role == "assistant" else (),
            tool_call_id=None if is_missing(call_id) else str(call_id),
            name=name if isinstance(name, str) and role == "tool" else None,
            reference=convert_text(
                raw.get("reference"), file=where.file, row=where.row, column=f"{at}.reference"
            )
            if role == "assistant"
            else None,
        )
        if role == "assistant":
            other = {k: v for k, v in raw.items() if k not in _OPENAI_MESSAGE_KEYS}
            if other:
                extras[len(out)] = jsonable(other, file=where.file, row=where.row, column=at)
        out.append(msg)
    return out, extras


_RAGAS_TYPES = {"human": "user", "ai": "assistant", "tool": "tool", "user": "user", "assistant": "assistant"}


def _ragas_messages(items: list[Any], where: _Where, key: str) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for i, raw in enumerate(items):
        at = f"{key}[{i}]"
        if not isinstance(raw, Mapping):
            raise where.error(
                f"expected a message object with 'type' and 'content', got {type_name(raw)}", at
            )
        kind = raw.get("type", raw.get("role"))
        role = _role(kind, where, f"{at}.type", _RAGAS_TYPES)
        content = raw.get("content")
        calls_value = raw.get("tool_calls")
        if isinstance(content, str) and content.lstrip().startswith("{") and role == "assistant":
            try:  # AIMessage.to_dict(): {"text": ..., "tool_calls": [...]}, JSON-encoded by to_list
                packed = json.loads(content)
            except ValueError:
                packed = None
            if isinstance(packed, Mapping) and "tool_calls" in packed and "text" in packed:
                content, calls_value = packed.get("text"), packed.get("tool_calls")
        out.append(
            ChatMessage(
                role=role,
                content=_text(content, where, f"{at}.content"),
                tool_calls=_tool_calls(calls_value, where, f"{at}.tool_calls") if role == "assistant" else (),
            )
        )
    return out


def _deepeval_tools(raw: Mapping[str, Any], where: _Where, at: str) -> list[ChatMessage]:
    """A DeepEval turn's ``tools_called`` as an assistant message calling them and one tool message
    per call holding its ``output``; [] when it called none."""
    tools_key = "tools_called" if "tools_called" in raw else "toolsCalled"
    field = f"{at}.{tools_key}" if at else tools_key
    tools = _decoded(raw.get(tools_key)) if not is_missing(raw.get(tools_key)) else []
    if not isinstance(tools, list):
        raise where.error(f"expected a list of tool calls, got {type_name(tools)}", field)
    calls = _tool_calls(tools, where, field)
    if not calls:
        return []
    out = [ChatMessage("assistant", "", tool_calls=calls)]
    for j, (call, tool) in enumerate(zip(calls, tools, strict=True)):
        output = tool.get("output") if isinstance(tool, Mapping) else None
        text = (
            output
            if isinstance(output, str) or is_missing(output)
            else json.dumps(_plain(output), ensure_ascii=False, default=str)
        )
        out.append(ChatMessage("tool", _text(text, where, f"{field}[{j}].output"), name=call.name))
    return out


def _deepeval_messages(items: list[Any], where: _Where, key: str) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for i, raw in enumerate(items):
        at = f"{key}[{i}]"
        if not isinstance(raw, Mapping):
            raise where.error(f"expected a turn object with 'role' and 'content', got {type_name(raw)}", at)
        if "role" not in raw and "input" in raw:  # the older shape: one LLMTestCase per turn
            out.append(ChatMessage("user", _text(raw.get("input"), where, f"{at}.input")))
            out.extend(_deepeval_tools(raw, where, at))
            out.append(
                ChatMessage(
                    "assistant",
                    _text(raw.get("actual_output"), where, f"{at}.actual_output"),
                    contexts=_contexts(raw.get("retrieval_context"), where, f"{at}.retrieval_context"),
                    reference=convert_text(
                        raw.get("expected_output"),
                        file=where.file,
                        row=where.row,
                        column=f"{at}.expected_output",
                    ),
                )
            )
            continue
        role = _role(raw.get("role"), where, f"{at}.role", {"user": "user", "assistant": "assistant"})
        content = _text(raw.get("content"), where, f"{at}.content")
        if role == "user":
            out.append(ChatMessage("user", content))
            continue
        out.extend(_deepeval_tools(raw, where, at))
        ctx_key = "retrieval_context" if "retrieval_context" in raw else "retrievalContext"
        out.append(
            ChatMessage("assistant", content, contexts=_contexts(raw.get(ctx_key), where, f"{at}.{ctx_key}"))
        )
    return out


# ------------------------------------------------------------------------------------- samples


def _check_order(messages: Sequence[ChatMessage], where: _Where, key: str) -> None:
    """A conversation needs a user message with text; a tool result needs an earlier tool call
    (and, when both carry ids, one with its id). Message ``i`` is ``key[i]`` of the row: the OpenAI
    and Ragas shapes map one to one, and a DeepEval turn's tool messages follow their own calls."""
    if not any(m.role == "user" and m.content.strip() for m in messages):
        raise where.error("the conversation has no user message with text", key)
    call_ids: set[str] = set()
    calls_seen = False
    for pos, m in enumerate(messages):
        if m.role == "assistant" and m.tool_calls:
            calls_seen = True
            call_ids.update(c.id for c in m.tool_calls if c.id is not None)
        elif m.role == "tool":
            if not calls_seen:
                raise where.error("a tool result before any assistant tool call", f"{key}[{pos}]")
            if m.tool_call_id is not None and call_ids and m.tool_call_id not in call_ids:
                raise where.error(
                    f"tool_call_id {m.tool_call_id!r} answers no earlier tool call",
                    f"{key}[{pos}].tool_call_id",
                )


def turn_layout(messages: Sequence[ChatMessage]) -> list[tuple[int, bool]]:
    """Per message, (the turn it belongs to, whether it is that turn's answer): turn ``n`` is the
    n-th run of user messages and the messages up to the next one (0 before the first user
    message); a turn's answer is its last assistant message with text -- the one its turn sample
    scores. The same reading as :func:`conversation_samples`, for pages that lay a chat out."""
    out: list[tuple[int, bool]] = []
    turn = 0
    previous_user = False
    for m in messages:
        if m.role == "user" and not previous_user:
            turn += 1
        previous_user = m.role == "user"
        out.append((turn, False))
    last: dict[int, int] = {}
    for i, m in enumerate(messages):
        if m.role == "assistant" and m.content.strip() and out[i][0] > 0:
            last[out[i][0]] = i
    for i in last.values():
        out[i] = (out[i][0], True)
    return out


def conversation_samples(
    conversation_id: str,
    messages: Sequence[ChatMessage],
    *,
    reference: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    extras: Mapping[int, Mapping[str, Any]] | None = None,
    agent: Mapping[str, Any] | None = None,
) -> list[Sample]:
    """The conversation sample, then one turn sample per answered turn with contexts (see the
    module docstring). ``extras``: per message index, keys to put in that answer's turn metadata.
    ``agent``: the conversation sample's ``reference_tool_calls``, ``tools`` and
    ``reference_topics`` (:mod:`ragmeter.dataset.trajectory`), when given."""
    messages = tuple(messages)
    cid = str(conversation_id)
    out = [
        Sample(
            id=cid,
            conversation_id=cid,
            messages=messages,
            reference=reference,
            metadata=dict(metadata or {}),
            **dict(agent or {}),
        )
    ]
    turn = 0
    i = 0
    n = len(messages)
    while i < n:
        if messages[i].role != "user":
            i += 1
            continue
        start = i
        users = []
        while i < n and messages[i].role == "user":
            users.append(messages[i].content.strip())
            i += 1
        turn += 1
        end = i
        while end < n and messages[end].role != "user":
            end += 1
        answer_at = next(
            (
                k
                for k in range(end - 1, i - 1, -1)
                if messages[k].role == "assistant" and messages[k].content.strip()
            ),
            None,
        )
        if answer_at is not None:
            answer = messages[answer_at]
            contexts = list(answer.contexts)
            if not contexts:
                for m in messages[i:answer_at]:
                    if m.role == "tool":
                        contexts.extend(tool_result_contexts(m.content))
            if contexts:
                history = tuple(ChatMessage(m.role, m.content) for m in dialogue(messages[:start]))[
                    -HISTORY_LIMIT:
                ]
                out.append(
                    Sample(
                        id=f"{cid}:{turn}",
                        conversation_id=cid,
                        turn=turn,
                        question="\n".join(u for u in users if u),
                        answer=answer.content,
                        contexts=tuple(contexts),
                        reference=answer.reference,
                        history=history,
                        metadata=dict((extras or {}).get(answer_at, {})),
                    )
                )
        i = end
    return out


def _conversation_id(
    record: Mapping[str, Any], fmt: str, where: _Where, id_column: str | None
) -> tuple[str | None, str | None]:
    """(the conversation's id, the column it came from), or (None, None) when the row has none."""
    keys = (id_column,) if id_column else (*ID_KEYS, *(("name",) if fmt == "deepeval" else ()))
    for key in keys:
        if key in record:
            value = convert_id(record[key], file=where.file, row=where.row, column=key)
            if value is not None:
                return value, key
    return None, None


def read_conversation(
    record: Mapping[str, Any],
    *,
    row: int,
    file: str | None = None,
    id_column: str | None = None,
) -> tuple[list[Sample], bool]:
    """(the samples of one conversation row, whether its id came from the data). Raises
    :class:`DatasetError` naming the file, row and message for a bad conversation.

    ``id_column``: the column mapped to ``id`` (``--map id=...``), if any."""
    fmt = conversation_format(record)
    if fmt is None:
        raise DatasetError(
            "not a conversation (no 'messages', 'turns' or 'user_input' list)", file=file, row=row
        )
    where = _Where(file, row)
    key = MESSAGE_KEYS[fmt]
    extras: dict[int, dict[str, Any]] = {}
    used = {key}
    if fmt == "deepeval_case":  # one LLMTestCase: the input, the tools it called, the output
        messages = [ChatMessage("user", _text(record.get("input"), where, "input"))]
        messages.extend(_deepeval_tools(record, where, ""))
        messages.append(
            ChatMessage(
                "assistant",
                _text(record.get("actual_output"), where, "actual_output"),
                contexts=_contexts(record.get("retrieval_context"), where, "retrieval_context"),
            )
        )
        used.update(("actual_output", "retrieval_context", *_DEEPEVAL_TOOL_KEYS))
    else:
        items = _plain(_decoded(record[key]))
        if not items:
            raise where.error("the conversation has no messages", key)
        if fmt == "openai":
            messages, extras = _openai_messages(items, where, key)
        elif fmt == "ragas":
            messages = _ragas_messages(items, where, key)
        else:
            messages = _deepeval_messages(items, where, key)
    _check_order(messages, where, key)
    reference_key = "reference"
    if fmt == "deepeval_case":
        reference_key = "expected_output"
    if fmt == "deepeval":
        reference_key = "expectedOutcome" if "expectedOutcome" in record else "expected_outcome"
        role_key = "chatbotRole" if "chatbotRole" in record else "chatbot_role"
        role = convert_text(record.get(role_key), file=file, row=row, column=role_key)
        if role and role.strip():
            messages = [ChatMessage("system", role.strip()), *messages]
        used.add(role_key)
    reference = convert_text(record.get(reference_key), file=file, row=row, column=reference_key)
    used.add(reference_key)
    agent = agent_fields(record, file=file, row=row)
    used.update(k for k in (*REFERENCE_TOOL_CALL_KEYS, *TOOLS_KEYS, *TOPICS_KEYS) if k in record)
    cid, id_key = _conversation_id(record, fmt, where, id_column)
    if id_key is not None:
        used.add(id_key)
    metadata = {
        str(k): jsonable(v, file=file, row=row, column=str(k)) for k, v in record.items() if k not in used
    }
    samples = conversation_samples(
        cid if cid is not None else str(row),
        messages,
        reference=reference,
        metadata=metadata,
        extras=extras,
        agent=agent,
    )
    return samples, cid is not None


__all__ = [
    "HISTORY_LIMIT",
    "MESSAGE_KEYS",
    "conversation_format",
    "conversation_samples",
    "read_conversation",
    "tool_result_contexts",
    "turn_layout",
]
