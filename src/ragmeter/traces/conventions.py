"""What a span says under the two conventions ragmeter reads: OpenInference (``openinference.span.kind``,
``input.value``, ``retrieval.documents.{i}.document.*``, ``llm.input_messages.{i}.message.*``,
``llm.token_count.*``) and the OpenTelemetry GenAI semantic conventions (``gen_ai.operation.name``,
``gen_ai.input.messages`` / ``gen_ai.output.messages`` as attributes or on the
``gen_ai.client.inference.operation.details`` event, ``gen_ai.retrieval.documents``,
``gen_ai.retrieval.query.text``, ``gen_ai.usage.*``; and the older forms still emitted: the
``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events, the per-message
``gen_ai.{system,user,assistant,tool}.message`` and ``gen_ai.choice`` events, indexed
``gen_ai.prompt.{i}.*`` / ``gen_ai.completion.{i}.*`` attributes, ``gen_ai.usage.prompt_tokens``).

Where a span carries both, OpenInference is read first. Every function here reads one span and
returns plain values; what a trace makes of its spans is :mod:`ragmeter.traces.samples`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.traces.spans import SpanRecord

LLM = "LLM"
RETRIEVER = "RETRIEVER"
EMBEDDING = "EMBEDDING"
CHAIN = "CHAIN"
TOOL = "TOOL"
AGENT = "AGENT"

#: gen_ai.operation.name -> the OpenInference kind it is
_GENAI_OPERATIONS = {
    "chat": LLM,
    "text_completion": LLM,
    "generate_content": LLM,
    "embeddings": EMBEDDING,
    "retrieval": RETRIEVER,
    "execute_tool": TOOL,
    "invoke_agent": AGENT,
    "create_agent": AGENT,
    "invoke_workflow": CHAIN,
}

#: keys of a JSON input that hold the question, most specific first
QUESTION_KEYS = ("question", "query", "input", "user_input", "query_str", "q", "prompt", "message", "text")
#: keys of a JSON output that hold the answer
ANSWER_KEYS = ("answer", "output", "response", "result", "output_text", "text", "content", "generation")

_ROLE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"


@dataclass(frozen=True)
class Document:
    """One retrieved document."""

    content: str | None
    id: str | None = None
    score: float | None = None
    metadata: Any = None


def span_kind(span: SpanRecord) -> str | None:
    """``LLM``, ``RETRIEVER``, ``EMBEDDING``, ``CHAIN``, ``TOOL``, ``AGENT``, ... or None."""
    a = span.attributes
    kind = a.get("openinference.span.kind")
    if isinstance(kind, str) and kind.strip():
        return kind.strip().upper()
    op = a.get("gen_ai.operation.name")
    if isinstance(op, str) and op.strip():
        return _GENAI_OPERATIONS.get(op.strip().lower())
    if isinstance(a.get("gen_ai.request.model"), str) or isinstance(a.get("gen_ai.system"), str):
        return LLM  # GenAI conventions before gen_ai.operation.name (1.26 and earlier)
    return None


# --------------------------------------------------------------------------- values


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def io_value(span: SpanRecord, side: str) -> Any:
    """``input.value`` / ``output.value``: text, or the decoded JSON when its mime type says JSON."""
    value = span.attributes.get(f"{side}.value")
    if not isinstance(value, str):
        return None
    mime = span.attributes.get(f"{side}.mime_type")
    if isinstance(mime, str) and "json" in mime.lower():
        return _json(value)
    return value


def text_in(value: Any, keys: Sequence[str], depth: int = 2) -> str | None:
    """The text a value holds: itself when it is text; in an object, the first of ``keys`` holding
    text (or its only text value), looked for one level down too; the only item of a list."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, Mapping):
        for key in keys:
            v = value.get(key)
            if isinstance(v, str) and v.strip():
                return v
        texts = [v for v in value.values() if isinstance(v, str) and v.strip()]
        if len(texts) == 1 and len(value) == 1:
            return texts[0]
        if depth > 0:
            for key in keys:
                found = text_in(value.get(key), keys, depth - 1) if key in value else None
                if found:
                    return found
            inner = [v for v in value.values() if isinstance(v, Mapping)]
            if len(inner) == 1:
                return text_in(inner[0], keys, depth - 1)
        return None
    if isinstance(value, list) and len(value) == 1:
        return text_in(value[0], keys, depth)
    return None


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and math.isfinite(value) and value >= 0 and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _first(a: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if a.get(key) is not None:
            return a[key]
    return None


def token_counts(span: SpanRecord) -> tuple[int | None, int | None, int | None]:
    """(prompt, completion, total) tokens the span reports (total: as reported, else the sum)."""
    a = span.attributes
    prompt = _count(
        _first(a, "llm.token_count.prompt", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
    )
    completion = _count(
        _first(
            a, "llm.token_count.completion", "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"
        )
    )
    total = _count(_first(a, "llm.token_count.total", "gen_ai.usage.total_tokens", "llm.usage.total_tokens"))
    if total is None and (prompt is not None or completion is not None):
        total = (prompt or 0) + (completion or 0)
    return prompt, completion, total


def model_name(span: SpanRecord) -> str | None:
    value = _first(span.attributes, "llm.model_name", "gen_ai.response.model", "gen_ai.request.model")
    return value if isinstance(value, str) and value.strip() else None


def first_text(span: SpanRecord, *keys: str) -> str | None:
    value = _first(span.attributes, *keys)
    return value if isinstance(value, str) and value.strip() else None


# --------------------------------------------------------------------------- flattened lists


def indexed(a: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """OpenInference's flattened lists: ``{prefix}{i}.{rest}`` -> ``[{rest: value}, ...]`` by index."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in a.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if index.isdigit() and rest:
            items.setdefault(int(index), {})[rest] = value
    return [items[i] for i in sorted(items)]


def _as_list(value: Any) -> list[Any] | None:
    value = _json(value)
    return value if isinstance(value, list) else None


# --------------------------------------------------------------------------- documents


def documents(span: SpanRecord) -> list[Document]:
    """The documents a retriever span returned, in rank order."""
    a = span.attributes
    docs = []
    for item in indexed(a, "retrieval.documents."):
        content = item.get("document.content")
        docs.append(
            Document(
                content=content if isinstance(content, str) else None,
                id=_id(item.get("document.id")),
                score=_score(item.get("document.score")),
                metadata=_json(item.get("document.metadata")),
            )
        )
    if docs:
        return docs
    for item in _as_list(a.get("gen_ai.retrieval.documents")) or ():
        if isinstance(item, Mapping):
            content = _first(item, "content", "text", "page_content")
            docs.append(
                Document(
                    content=content if isinstance(content, str) else None,
                    id=_id(item.get("id")),
                    score=_score(item.get("score")),
                    metadata=item.get("metadata"),
                )
            )
        elif isinstance(item, str):
            docs.append(Document(content=item))
    return docs


def _id(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, str)):
        text = str(value).strip()
        return text or None
    return None


def _score(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def retrieval_query(span: SpanRecord) -> str | None:
    return first_text(span, "gen_ai.retrieval.query.text") or text_in(io_value(span, "input"), QUESTION_KEYS)


# --------------------------------------------------------------------------- messages


def _oi_message(item: Mapping[str, Any], base: str = "message.") -> dict[str, Any]:
    msg: dict[str, Any] = {}
    role = item.get(base + "role")
    if isinstance(role, str):
        msg["role"] = role
    content = item.get(base + "content")
    if not isinstance(content, str):
        parts = indexed({k[len(base) :]: v for k, v in item.items() if k.startswith(base)}, "contents.")
        texts = [
            str(p["message_content.text"]) for p in parts if isinstance(p.get("message_content.text"), str)
        ]
        content = "\n".join(texts) if texts else None
    if content is not None:
        msg["content"] = content
    calls = []
    for call in indexed({k[len(base) :]: v for k, v in item.items() if k.startswith(base)}, "tool_calls."):
        calls.append(
            {
                k: v
                for k, v in (
                    ("id", call.get("tool_call.id")),
                    ("name", call.get("tool_call.function.name")),
                    ("arguments", call.get("tool_call.function.arguments")),
                )
                if v is not None
            }
        )
    if calls:
        msg["tool_calls"] = calls
    if isinstance(item.get(base + "tool_call_id"), str):
        msg["tool_call_id"] = item[base + "tool_call_id"]
    return msg


def _genai_message(item: Any) -> dict[str, Any] | None:
    """A GenAI message (``{"role", "parts": [...]}``, or the older ``{"role", "content"}``)."""
    if not isinstance(item, Mapping):
        return None
    msg: dict[str, Any] = {}
    if isinstance(item.get("role"), str):
        msg["role"] = item["role"]
    parts = item.get("parts")
    if isinstance(parts, list):
        texts, calls = [], []
        for part in parts:
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("content"), str):
                texts.append(part["content"])
            elif kind == "tool_call":
                args = part.get("arguments")
                calls.append(
                    {
                        k: v
                        for k, v in (
                            ("id", part.get("id")),
                            ("name", part.get("name")),
                            (
                                "arguments",
                                args if isinstance(args, str) or args is None else json.dumps(args),
                            ),
                        )
                        if v is not None
                    }
                )
            elif kind == "tool_call_response":
                result = part.get("result", part.get("response"))
                texts.append(result if isinstance(result, str) else json.dumps(result, ensure_ascii=False))
                if isinstance(part.get("id"), str):
                    msg["tool_call_id"] = part["id"]
        if texts:
            msg["content"] = "\n".join(texts)
        if calls:
            msg["tool_calls"] = calls
    else:
        content = item.get("content")
        if isinstance(content, str):
            msg["content"] = content
        elif isinstance(item.get("message"), Mapping):  # gen_ai.choice: {"message": {"content": ...}}
            inner = _genai_message(item["message"])
            return {"role": "assistant", **(inner or {})}
    return msg or None


def _genai_messages(value: Any) -> list[dict[str, Any]]:
    return [m for m in (_genai_message(x) for x in _as_list(value) or ()) if m]


def messages(span: SpanRecord, side: str) -> list[dict[str, Any]]:
    """The chat a model span received (``side="input"``) or returned (``"output"``): a list of
    ``{"role", "content", "tool_calls"?, "tool_call_id"?}``."""
    a = span.attributes
    oi = [m for m in (_oi_message(i) for i in indexed(a, f"llm.{side}_messages.")) if m]
    if oi:
        return oi
    key = "gen_ai.input.messages" if side == "input" else "gen_ai.output.messages"
    found = _genai_messages(a.get(key))
    if not found:
        for event in span.events:
            if event.name == _DETAILS_EVENT:
                found = _genai_messages(event.attributes.get(key))
                if found:
                    break
    if found:
        if side == "input":
            system = _as_list(_first(a, "gen_ai.system_instructions"))
            texts = [
                str(p["content"])
                for p in system or ()
                if isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("content"), str)
            ]
            if texts:
                found = [{"role": "system", "content": "\n".join(texts)}, *found]
        return found
    legacy = "gen_ai.prompt" if side == "input" else "gen_ai.completion"
    flat = [m for m in (_oi_message(i, "") for i in indexed(a, legacy + ".")) if m]
    if flat:
        return flat
    out: list[dict[str, Any]] = []
    for event in span.events:
        ea = event.attributes
        if event.name == f"gen_ai.content.{'prompt' if side == 'input' else 'completion'}":
            out.extend(_genai_messages(ea.get(legacy)))
        elif side == "input" and event.name in _ROLE_EVENTS:
            content = _first(ea, "content", "gen_ai.event.content")
            content = _json(content)
            if isinstance(content, Mapping):
                content = content.get("content")
            if isinstance(content, str):
                out.append({"role": _ROLE_EVENTS[event.name], "content": content})
        elif side == "output" and event.name == "gen_ai.choice":
            msg = _genai_message(_json(_first(ea, "message", "gen_ai.event.content")) or {})
            content = ea.get("message.content")
            if msg is None and isinstance(content, str):
                msg = {"role": "assistant", "content": content}
            if msg:
                out.append({"role": "assistant", **msg})
    return out


def last_message(msgs: Sequence[Mapping[str, Any]], role: str) -> str | None:
    """The content of the last message with ``role`` (``user`` also matches ``human``)."""
    roles = {"user", "human"} if role == "user" else {role, "ai"} if role == "assistant" else {role}
    for m in reversed(msgs):
        content = m.get("content")
        if str(m.get("role", "")).lower() in roles and isinstance(content, str) and content.strip():
            return content
    return None


__all__ = [
    "AGENT",
    "ANSWER_KEYS",
    "CHAIN",
    "EMBEDDING",
    "LLM",
    "QUESTION_KEYS",
    "RETRIEVER",
    "TOOL",
    "Document",
    "documents",
    "first_text",
    "indexed",
    "io_value",
    "last_message",
    "messages",
    "model_name",
    "retrieval_query",
    "span_kind",
    "text_in",
    "token_counts",
]
