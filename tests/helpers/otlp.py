"""OTLP JSON written by hand for the trace tests: spans with OpenInference or GenAI attributes, and
export requests as the OpenTelemetry Collector's file exporter writes them (one a line)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

T0 = 1_700_000_000_000_000_000  # ns


def value(v: Any) -> dict[str, Any]:
    """An OTLP JSON AnyValue."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, (list, tuple)):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    if isinstance(v, Mapping):
        return {"kvlistValue": {"values": [{"key": k, "value": value(x)} for k, x in v.items()]}}
    return {"stringValue": str(v)}


def attrs(a: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": value(v)} for k, v in a.items()]


def trace_id(n: int) -> str:
    return f"{n:032x}"


def span_id(n: int) -> str:
    return f"{n:016x}"


def span(
    trace: int,
    sid: int,
    parent: int | None,
    name: str,
    attributes: Mapping[str, Any] | None = None,
    *,
    start_ms: float = 0.0,
    end_ms: float = 10.0,
    events: Iterable[Mapping[str, Any]] = (),
    status: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace_id(trace),
        "spanId": span_id(sid),
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(T0 + int(start_ms * 1e6)),
        "endTimeUnixNano": str(T0 + int(end_ms * 1e6)),
        "attributes": attrs(attributes or {}),
        "status": dict(status or {}),
    }
    if parent is not None:
        out["parentSpanId"] = span_id(parent)
    ev = [
        {"timeUnixNano": str(T0), "name": e["name"], "attributes": attrs(e.get("attributes", {}))}
        for e in events
    ]
    if ev:
        out["events"] = ev
    return out


def export(*spans: Mapping[str, Any], service: str = "test-app") -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attrs({"service.name": service})},
                "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}],
            }
        ]
    }


def write_lines(path: Path, lines: Iterable[Any]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return path


def rag_trace(
    trace: int,
    question: str,
    docs: list[str],
    answer: str,
    *,
    ids: list[str] | None = None,
    tokens: tuple[int, int] | None = (12, 5),
    base: int = 0,
) -> list[dict[str, Any]]:
    """An OpenInference RAG trace: CHAIN root > RETRIEVER, LLM (spans numbered from ``base``)."""
    retrieval: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": question}
    for i, d in enumerate(docs):
        retrieval[f"retrieval.documents.{i}.document.content"] = d
        retrieval[f"retrieval.documents.{i}.document.score"] = 1.0 - i / 10
        if ids:
            retrieval[f"retrieval.documents.{i}.document.id"] = ids[i]
    llm: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-test",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Context:\n" + "\n".join(docs),
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": question,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": answer,
    }
    if tokens:
        llm |= {
            "llm.token_count.prompt": tokens[0],
            "llm.token_count.completion": tokens[1],
            "llm.token_count.total": sum(tokens),
        }
    root = {"openinference.span.kind": "CHAIN", "input.value": question, "output.value": answer}
    return [
        span(trace, base + 2, base + 1, "retrieve", retrieval, start_ms=1, end_ms=3),
        span(trace, base + 3, base + 1, "llm", llm, start_ms=4, end_ms=9),
        span(trace, base + 1, None, "query", root, start_ms=0, end_ms=10),
    ]
