"""A complete trace -> one sample record (or the reason it is not scored).

- **root**: the span without a parent (of several, the first to start); when the root never
  arrived, the first-starting span whose parent is not in the trace.
- **contexts**: the documents of the trace's retriever spans, in the order the retrievals started
  and in rank order within each; a retriever span inside another retriever span that reports
  documents (LlamaIndex's ``retrieve`` around ``_retrieve``, a fusion retriever around its
  sub-retrievers) is left out, as its documents are the outer one's input. ``context_ids`` when
  every document has an id.
- **question**: the root's input (text, or the question in a JSON input: ``question``, ``query``,
  ``input``, ...); else the last user message of the last LLM span that has messages; else the
  first retriever's query.
- **answer**: the root's output (text, or ``answer``, ``output``, ``response``, ... of a JSON one);
  else the last assistant message of the last LLM span, or that span's output text.
- **metadata["trace"]**: trace id, root span name, start time, latency (the root's duration, ms),
  the app's token counts (summed over the LLM spans that report them, the innermost where LLM
  spans nest, so no call counts twice), LLM calls, model, service, span count, retrievals, the
  documents' scores and metadata, session and user ids, and the first error status.

A trace with no retriever span and no tool call (indexing, embedding jobs) is not a sample: it is
counted and skipped as a problem of its row, like a bad row.

**An agent** (docs/agents.md): a trace with ``TOOL`` spans, or an LLM span that called tools,
becomes a conversation record in the OpenAI chat format: the messages the last LLM span with a
tool result among its input messages received and answered (its input messages and its reply),
or, when no LLM span shows the tool results, the question, one call and result per outermost
``TOOL`` span (``tool.name``, ``input.value``'s keyword arguments, ``output.value``) in start order,
and the answer. ``tools`` are the tools the LLM spans offered (``llm.tools.N.tool.json_schema``, when
it holds a JSON tool definition) and those the ``TOOL`` spans describe (``tool.name``,
``tool.description``, ``tool.parameters``). The answer message carries the retrieved documents as
contexts, when there are any, and the ``trace`` metadata; the loader makes of it the conversation
sample (id: the trace id), which the agent metrics score, and a turn sample per answered turn.

**A chat**: when the messages of the LLM span that answered hold earlier turns (a user message
before the one answered), the trace becomes a conversation record in the OpenAI chat format
(:mod:`ragmeter.dataset.conversations`): the system messages that do not carry the retrieved
documents, the earlier user and assistant messages, the question, and the answer with the trace's
contexts and ``trace`` metadata. The loader makes of it a conversation sample (id: the trace id)
and the turn sample of the answered turn (``<trace id>:<turn>``, with the history), which carries
``metadata["trace"]``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from ragmeter.errors import DatasetError
from ragmeter.traces.conventions import (
    ANSWER_KEYS,
    LLM,
    QUESTION_KEYS,
    RETRIEVER,
    TOOL,
    documents,
    first_text,
    indexed,
    io_value,
    last_message,
    messages,
    model_name,
    retrieval_query,
    span_kind,
    text_in,
    token_counts,
)
from ragmeter.traces.spans import STATUS_ERROR, SpanRecord


def _order(span: SpanRecord) -> tuple[int, int, int]:
    return (span.start_ns or 0, span.line, span.end_ns or 0)


def find_root(spans: Sequence[SpanRecord]) -> SpanRecord:
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if not s.parent_id]
    if not roots:
        roots = [s for s in spans if s.parent_id not in ids] or list(spans)
    return min(roots, key=_order)


class _Tree:
    def __init__(self, spans: Sequence[SpanRecord]) -> None:
        self.by_id = {s.span_id: s for s in spans}

    def ancestors(self, span: SpanRecord) -> list[SpanRecord]:
        out: list[SpanRecord] = []
        seen = {span.span_id}
        parent = span.parent_id
        while parent and parent in self.by_id and parent not in seen:
            seen.add(parent)
            node = self.by_id[parent]
            out.append(node)
            parent = node.parent_id
        return out


def _iso(ns: int) -> str | None:
    if not ns:
        return None
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).isoformat(timespec="milliseconds")


def _kinds_summary(kinds: Sequence[str | None]) -> str:
    counts: dict[str, int] = {}
    for k in kinds:
        counts[k or "unknown"] = counts.get(k or "unknown", 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def trace_record(spans: Sequence[SpanRecord], *, source: str, row: int) -> dict[str, Any] | DatasetError:
    """The sample record of one complete trace, or a DatasetError saying why it is not one."""
    root = find_root(spans)
    trace_id = root.trace_id
    kinds = {s.span_id: span_kind(s) for s in spans}
    retrievers = sorted((s for s in spans if kinds[s.span_id] == RETRIEVER), key=_order)
    llm_spans = [s for s in spans if kinds[s.span_id] == LLM]
    calls_tools = any(kinds[s.span_id] == TOOL for s in spans) or any(
        m.get("tool_calls") for s in llm_spans for side in ("input", "output") for m in messages(s, side)
    )
    if not retrievers and not calls_tools:
        return DatasetError(
            f"trace {trace_id} ({root.name!r}, {len(spans)} span{'s' if len(spans) != 1 else ''}: "
            f"{_kinds_summary(list(kinds.values()))}) has no retrieval: counted and skipped, not scored",
            file=source,
            row=row,
        )
    tree = _Tree(spans)
    agent_spans = _outermost([s for s in spans if kinds[s.span_id] == TOOL], tree, kinds)
    docs = {s.span_id: documents(s) for s in retrievers}
    used = [
        s
        for s in retrievers
        if not any(kinds[a.span_id] == RETRIEVER and docs.get(a.span_id) for a in tree.ancestors(s))
    ]
    retrieved = [d for s in used for d in docs[s.span_id]]
    llms = sorted((s for s in spans if kinds[s.span_id] == LLM), key=lambda s: (s.end_ns or 0, s.line))

    question, question_source = text_in(io_value(root, "input"), QUESTION_KEYS), "root input"
    if question is None:
        question, question_source = last_message(messages(root, "input"), "user"), "root input"
    if question is None:
        for span in reversed(llms):
            question = last_message(messages(span, "input"), "user")
            if question is not None:
                question_source = f"user message of LLM span {span.name!r}"
                break
    if question is None:
        for span in used or retrievers:
            question = retrieval_query(span)
            if question is not None:
                question_source = f"query of retriever span {span.name!r}"
                break

    answer = text_in(io_value(root, "output"), ANSWER_KEYS) or last_message(
        messages(root, "output"), "assistant"
    )
    if answer is None:
        for span in reversed(llms):
            answer = last_message(messages(span, "output"), "assistant") or text_in(
                io_value(span, "output"), ANSWER_KEYS
            )
            if answer is not None:
                break

    trace: dict[str, Any] = {
        "trace_id": trace_id,
        "root_span": root.name,
        "start": _iso(root.start_ns),
        "latency_ms": None if root.duration_ms is None else round(root.duration_ms, 3),
    }
    trace.update(_usage(llms, tree))
    service = root.resource.get("service.name")
    extra: dict[str, Any] = {
        "model": next((m for m in (model_name(s) for s in reversed(llms)) if m), None),
        "service": service if isinstance(service, str) else None,
        "spans": len(spans),
        "retrievals": len(used),
        "question_source": question_source if question is not None else None,
        "session_id": next(
            (v for v in (first_text(s, "session.id", "gen_ai.conversation.id") for s in spans) if v), None
        ),
        "user_id": next((v for v in (first_text(s, "user.id") for s in spans) if v), None),
        "error": next(
            (
                f"{s.name}: {s.status_message}".rstrip(": ")
                for s in sorted(spans, key=_order)
                if s.status_code == STATUS_ERROR
            ),
            None,
        ),
    }
    if any(d.score is not None for d in retrieved):
        extra["context_scores"] = [d.score for d in retrieved]
    if any(d.metadata is not None for d in retrieved):
        extra["context_metadata"] = [d.metadata for d in retrieved]
    trace.update({k: v for k, v in extra.items() if v is not None})

    contexts = [d.content if d.content is not None else "" for d in retrieved]
    if calls_tools:
        agent = _agent_record(trace_id, llms, agent_spans, question, answer, contexts, trace)
        if agent is not None:
            return agent
    if question is not None:
        chat = _chat(llms, contexts)
        if chat is not None:
            answer_msg: dict[str, Any] = {"role": "assistant", "content": answer or "", "contexts": contexts}
            answer_msg["trace"] = trace
            return {
                "id": trace_id,
                "messages": [*chat, {"role": "user", "content": question}, answer_msg],
                "trace_id": trace_id,
            }
    record: dict[str, Any] = {
        "id": trace_id,
        "contexts": contexts,
        "metadata": {"trace": trace},
    }
    if question is not None:
        record["question"] = question
    if answer is not None:
        record["answer"] = answer
    if retrieved and all(d.id for d in retrieved):
        record["context_ids"] = [d.id for d in retrieved]
    return record


def _outermost(found: Sequence[SpanRecord], tree: _Tree, kinds: dict[str, str | None]) -> list[SpanRecord]:
    """``found`` without the spans inside another of their kind, in start order."""
    ids = {s.span_id for s in found}
    return sorted((s for s in found if not any(a.span_id in ids for a in tree.ancestors(s))), key=_order)


def _tool_arguments(span: SpanRecord) -> str:
    """A TOOL span's arguments as JSON text: the keyword arguments of its input (LlamaIndex wraps
    them in ``{"kwargs": {...}}``), or the input as it is."""
    value = io_value(span, "input")
    if isinstance(value, dict) and set(value) <= {"args", "kwargs"} and isinstance(value.get("kwargs"), dict):
        value = value["kwargs"]
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _tool_output(span: SpanRecord) -> str:
    """A TOOL span's result: the text of its output (LlamaIndex's ``ToolOutput``: ``raw_output``,
    else its blocks' text), or the output as it is."""
    value = io_value(span, "output")
    if isinstance(value, dict):
        raw = value.get("raw_output", value.get("content"))
        if isinstance(raw, str):
            return raw
        blocks = value.get("blocks")
        if isinstance(blocks, list):
            texts = [str(b["text"]) for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
            if texts:
                return "\n".join(texts)
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _declared_tools(tool_spans: Sequence[SpanRecord], llms: Sequence[SpanRecord]) -> list[dict[str, Any]]:
    """The tools the LLM spans offered (``llm.tools.N.tool.json_schema`` that is a JSON tool
    definition), then those the TOOL spans describe, by name."""
    from ragmeter.dataset.trajectory import read_tools

    out: dict[str, dict[str, Any]] = {}
    for span in llms:
        for item in indexed(span.attributes, "llm.tools."):
            try:
                offered = read_tools([json.loads(str(item.get("tool.json_schema")))])
            except (ValueError, DatasetError):
                continue
            for tool in offered:
                out.setdefault(tool["name"], tool)
    for span in tool_spans:
        name = first_text(span, "tool.name") or span.name
        params = span.attributes.get("tool.parameters")
        if isinstance(params, str):
            try:
                params = json.loads(params)
            except ValueError:
                params = None
        out.setdefault(
            name,
            {
                "name": name,
                "description": first_text(span, "tool.description") or "",
                "parameters": params if isinstance(params, dict) else {},
            },
        )
    return list(out.values())


def _agent_record(
    trace_id: str,
    llms: Sequence[SpanRecord],
    tool_spans: Sequence[SpanRecord],
    question: str | None,
    answer: str | None,
    contexts: Sequence[str],
    trace: dict[str, Any],
) -> dict[str, Any] | None:
    """An agent's trace as a conversation record (see the module docstring), or None when it has
    no question to start from."""
    chat: list[dict[str, Any]] | None = None
    for span in reversed(llms):
        received = messages(span, "input")
        if any(str(m.get("role", "")).lower() == "tool" for m in received):
            replied = [
                m for m in messages(span, "output") if str(m.get("role", "assistant")).lower() == "assistant"
            ]
            chat = [
                {**m, "content": m.get("content") or ""}
                for m in received + [{"role": "assistant", **r} for r in replied]
            ]
            break
    if chat is None:
        if question is None:
            return None
        chat = [{"role": "user", "content": question}]
        for k, span in enumerate(tool_spans):
            call_id = f"call_{k + 1}"
            name = first_text(span, "tool.name") or span.name
            chat.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": call_id, "name": name, "arguments": _tool_arguments(span)}],
                }
            )
            chat.append(
                {"role": "tool", "tool_call_id": call_id, "name": name, "content": _tool_output(span)}
            )
        chat.append({"role": "assistant", "content": answer or ""})
    final = next(
        (m for m in reversed(chat) if m.get("role") == "assistant" and (m.get("content") or "").strip()), None
    )
    if final is None:
        return None
    final["trace"] = trace
    if contexts:
        final["contexts"] = list(contexts)
    record: dict[str, Any] = {"id": trace_id, "messages": chat, "trace_id": trace_id}
    tools = _declared_tools(tool_spans, llms)
    if tools:
        record["tools"] = tools
    return record


def _chat(llms: Sequence[SpanRecord], contexts: Sequence[str]) -> list[dict[str, str]] | None:
    """The messages before the answered user message of the last LLM span with messages, when they
    hold an earlier turn (a user message): its system messages that carry none of the retrieved
    documents (the prompt's role, not its stuffed context), then the user and assistant messages
    with text. None when there is no earlier turn."""
    for span in reversed(llms):
        msgs = messages(span, "input")
        if not msgs:
            continue
        users = [i for i, m in enumerate(msgs) if str(m.get("role", "")).lower() in ("user", "human")]
        if len(users) < 2:
            return None
        before = msgs[: users[-1]]
        docs = [c.strip() for c in contexts if c.strip()]
        out: list[dict[str, str]] = []
        for m in before:
            role, content = str(m.get("role", "")).lower(), m.get("content")
            if not isinstance(content, str) or not content.strip():
                continue
            role = {"human": "user", "ai": "assistant"}.get(role, role)
            if role == "system" and not any(d in content for d in docs):
                out.append({"role": "system", "content": content})
            elif role in ("user", "assistant"):
                out.append({"role": role, "content": content})
        return out
    return None


def _usage(llms: Sequence[SpanRecord], tree: _Tree) -> dict[str, Any]:
    """The app's own token counts and LLM calls: the innermost LLM spans (an LLM span with an LLM
    span inside it, like LlamaIndex's ``predict`` around ``complete``, is the same call)."""
    llm_ids = {s.span_id for s in llms}
    outer = {a.span_id for s in llms for a in tree.ancestors(s) if a.span_id in llm_ids}
    calls = [s for s in llms if s.span_id not in outer]
    counted = [s for s in llms if any(c is not None for c in token_counts(s))]
    counted_outer = {a.span_id for s in counted for a in tree.ancestors(s)}
    prompt = completion = total = None
    for s in counted:
        if s.span_id in counted_outer:
            continue
        p, c, t = token_counts(s)
        if p is not None:
            prompt = (prompt or 0) + p
        if c is not None:
            completion = (completion or 0) + c
        if t is not None:
            total = (total or 0) + t
    out: dict[str, Any] = {"llm_calls": len(calls)}
    for key, value in (("prompt_tokens", prompt), ("completion_tokens", completion), ("total_tokens", total)):
        if value is not None:
            out[key] = value
    return out


__all__ = ["find_root", "trace_record"]
