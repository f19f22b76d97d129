"""Spans as plain values: what the trace reader keeps of each OTLP span until its trace is complete."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

#: OTLP ``Status.code``
STATUS_ERROR = 2


@dataclass(frozen=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: Mapping[str, Any]


@dataclass(frozen=True)
class SpanRecord:
    """One span: ids in hex, times in ns since the epoch, attributes as Python values (an OTLP
    array is a list, a key-value list a dict, bytes are hex), and the line of the file it came on."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    events: tuple[SpanEvent, ...]
    status_code: int
    status_message: str
    resource: Mapping[str, Any]
    line: int

    @property
    def duration_ms(self) -> float | None:
        if not self.start_ns or not self.end_ns or self.end_ns < self.start_ns:
            return None
        return (self.end_ns - self.start_ns) / 1e6


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` message as a Python value (None when unset)."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, which)


def attributes(key_values: Any) -> dict[str, Any]:
    """Repeated ``KeyValue`` -> dict (a key given twice: the last one wins, as OTLP allows neither)."""
    return {kv.key: any_value(kv.value) for kv in key_values}


def spans_of(request: Any, line: int) -> Iterator[SpanRecord]:
    """The spans of a parsed ``ExportTraceServiceRequest`` (see :mod:`ragmeter.traces.otlp`)."""
    for rs in request.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for span in ss.spans:
                yield SpanRecord(
                    trace_id=span.trace_id.hex(),
                    span_id=span.span_id.hex(),
                    parent_id=span.parent_span_id.hex() or None,
                    name=span.name,
                    start_ns=span.start_time_unix_nano,
                    end_ns=span.end_time_unix_nano,
                    attributes=attributes(span.attributes),
                    events=tuple(
                        SpanEvent(e.name, e.time_unix_nano, attributes(e.attributes)) for e in span.events
                    ),
                    status_code=span.status.code,
                    status_message=span.status.message,
                    resource=resource,
                    line=line,
                )


__all__ = ["STATUS_ERROR", "SpanEvent", "SpanRecord", "any_value", "attributes", "spans_of"]
