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

A trace with no retriever span (indexing, embedding jobs) is not a sample: it is counted and
skipped as a problem of its row, like a bad row.

**A chat**: when the messages of the LLM span that answered hold earlier turns (a user message
before the one answered), the trace becomes a conversation record in the OpenAI chat format
(:mod:`ragmeter.dataset.conversations`): the system messages that do not carry the retrieved
documents, the earlier user and assistant messages, the question, and the answer with the trace's
contexts and ``trace`` metadata. The loader makes of it a conversation sample (id: the trace id)
and the turn sample of the answered turn (``<trace id>:<turn>``, with the history), which carries
``metadata["trace"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from ragmeter.errors import DatasetError
from ragmeter.traces.conventions import (
    ANSWER_KEYS,
    LLM,
    QUESTION_KEYS,
    RETRIEVER,
    documents,
    first_text,
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
    if not retrievers:
        return DatasetError(
            f"trace {trace_id} ({root.name!r}, {len(spans)} span{'s' if len(spans) != 1 else ''}: "
            f"{_kinds_summary(list(kinds.values()))}) has no retrieval: counted and skipped, not scored",
            file=source,
            row=row,
        )
    tree = _Tree(spans)
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
