"""The trace file reader: OTLP JSON lines (one ``ExportTraceServiceRequest`` a line, as the
OpenTelemetry Collector's file exporter and ``ragmeter collect`` write them) -> sample records.

The spans of one trace may come on several lines (each export holds the spans that had ended), so
a trace is only complete at the last line holding one of its spans. The reader makes two passes:

1. an index: each line's trace ids (JSON only, no protobuf parse) -> the last line of each trace;
2. the read: each line is parsed span by span; a trace's spans are kept until its last line,
   where the trace becomes a sample (:mod:`ragmeter.traces.samples`) and its spans are dropped.

So memory holds the index (one entry per trace) and the spans of the traces that are open at a
line (for an exporter's file, those in flight together), never the whole file. Samples come in
the order their traces complete; a sample's row is the line where its trace completes. A span
sent twice (an exporter's retry) is read once. Lines appended after the index pass (a collector
still writing) are not read. A file that is one pretty-printed export request (not JSON lines) is
read whole, as row 1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragmeter.dataset.readers import Item, read_jsonl
from ragmeter.errors import DatasetError
from ragmeter.traces.otlp import is_otlp_record, proto_modules, request_from_json, trace_ids_of
from ragmeter.traces.samples import trace_record
from ragmeter.traces.spans import SpanRecord, spans_of

#: file names read as traces whatever their content
TRACE_SUFFIXES = (".otlp.jsonl", ".otlp.json", ".otlp.ndjson")


def is_trace_path(path: Path) -> bool:
    return path.name.lower().endswith(TRACE_SUFFIXES)


def read_traces(path: Path, source: str) -> Iterator[Item]:
    """``(row, sample record)`` for each trace that retrieved, ``(row, DatasetError)`` for each bad
    line or span and for each trace that did not (counted and skipped)."""
    proto_modules()  # a missing extra is a ConfigError before anything is read
    last: dict[str, int] = {}
    n_lines = 0
    for lineno, record in read_jsonl(path, source):
        if n_lines == 0 and isinstance(record, DatasetError):
            document = _one_document(path)
            if document is not None:
                yield from _read_document(document, source)
                return
        n_lines = lineno
        if isinstance(record, dict):
            for trace_id in trace_ids_of(record):
                last[trace_id] = lineno
    ends: dict[int, list[str]] = {}
    for trace_id, lineno in last.items():
        ends.setdefault(lineno, []).append(trace_id)
    del last

    open_traces: dict[str, dict[str, SpanRecord]] = {}
    for lineno, record in read_jsonl(path, source):
        if lineno > n_lines:
            break
        if isinstance(record, DatasetError):
            yield lineno, record
            continue
        request, problems = request_from_json(record)
        for p in problems:
            yield lineno, DatasetError(p.message, file=source, row=lineno, field=p.path or None)
        for span in spans_of(request, lineno):
            open_traces.setdefault(span.trace_id, {}).setdefault(span.span_id, span)
        for trace_id in ends.pop(lineno, ()):
            done = open_traces.pop(trace_id, None)
            if done:
                yield lineno, trace_record(list(done.values()), source=source, row=lineno)
    for spans_by_id in open_traces.values():  # only when a line read now did not read in the index pass
        rest = list(spans_by_id.values())
        row = max(s.line for s in rest)
        yield row, trace_record(rest, source=source, row=row)


def _one_document(path: Path) -> dict[str, Any] | None:
    """The file as one JSON export request (pretty-printed), when it is one."""
    try:
        value = json.loads(path.read_bytes().decode("utf-8", errors="surrogateescape").lstrip("\ufeff"))
    except (OSError, ValueError, RecursionError):
        return None
    return value if is_otlp_record(value) else None


def _read_document(document: dict[str, Any], source: str) -> Iterator[Item]:
    request, problems = request_from_json(document)
    for p in problems:
        yield 1, DatasetError(p.message, file=source, row=1, field=p.path or None)
    traces: dict[str, dict[str, SpanRecord]] = {}
    for span in spans_of(request, 1):
        traces.setdefault(span.trace_id, {}).setdefault(span.span_id, span)
    for spans in traces.values():
        yield 1, trace_record(list(spans.values()), source=source, row=1)


__all__ = ["TRACE_SUFFIXES", "is_trace_path", "read_traces"]
