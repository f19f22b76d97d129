"""OTLP trace data: the protobuf messages of ``opentelemetry-proto``, read from and written as OTLP JSON.

OTLP JSON is the proto3 JSON mapping with the OTLP deviations (the OTLP specification, "JSON
Protobuf Encoding"): trace and span ids are hex strings, not base64; enums are integers; keys are
lowerCamelCase; unknown fields are ignored. ``google.protobuf.json_format`` implements the plain
proto3 mapping, so the ids are handled here on both sides: read as hex (or as base64, which some
exporters send by mistake: the two are told apart by length) and written as lowercase hex.

A request is parsed span by span: a span with a bad field is a :class:`SpanProblem` (its place in
the request and the field, e.g. ``resourceSpans[0].scopeSpans[1].spans[3].attributes[2].value``)
and the others are kept. The same function serves the trace file reader and ``ragmeter collect``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import ConfigError

#: what to install for trace support
TRACES_HINT = "pip install 'ragmeter[traces]'"

TRACE_ID_BYTES = 16
SPAN_ID_BYTES = 8

#: an envelope's keys in OTLP JSON (lowerCamelCase), and the proto field names receivers also accept
_RESOURCE_SPANS = ("resourceSpans", "resource_spans")
_SCOPE_SPANS = ("scopeSpans", "scope_spans")
_SPAN_ID_KEYS = {"traceId": "trace_id", "spanId": "span_id", "parentSpanId": "parent_span_id"}
_CHAIN = re.compile(r"Failed to parse (\w+) field: ")


def proto_modules() -> Any:
    """``(trace_service_pb2, trace_pb2, json_format)``, imported on first use."""
    try:
        from google.protobuf import json_format
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
        from opentelemetry.proto.trace.v1 import trace_pb2
    except ImportError as exc:
        raise ConfigError(f"OpenTelemetry traces need opentelemetry-proto: {TRACES_HINT}") from exc
    return trace_service_pb2, trace_pb2, json_format


@dataclass(frozen=True)
class SpanProblem:
    """A part of a request that could not be read: where (a JSON path) and why."""

    path: str
    message: str
    spans: int = 1  # spans lost with it


def is_otlp_record(record: Any) -> bool:
    """Whether a parsed JSON object is an OTLP trace export request (``resourceSpans`` at the top)."""
    return isinstance(record, Mapping) and any(isinstance(record.get(k), list) for k in _RESOURCE_SPANS)


def _get(obj: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str, Any]:
    for name in names:
        if name in obj:
            return name, obj[name]
    return names[0], None


def id_bytes(value: Any, size: int) -> bytes:
    """A trace id (``size`` 16) or span id (8) from OTLP JSON: hex (the spec), or base64 (the
    plain proto3 mapping some exporters use); ``""`` or None is no id. ValueError says what is wrong."""
    if value is None or value == "":
        return b""
    if not isinstance(value, str):
        raise ValueError(f"expected a hex string, got {type(value).__name__}")
    if len(value) == 2 * size:
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise ValueError(f"not hex: {value!r}") from None
    elif len(value) == 4 * -(-size // 3):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"neither {2 * size} hex digits nor base64: {value!r}") from None
        if len(raw) != size:
            raise ValueError(f"base64 of {len(raw)} bytes, expected {size}: {value!r}")
    else:
        raise ValueError(f"expected {2 * size} hex digits, got {len(value)} characters: {value!r}")
    return raw


def trace_ids_of(record: Mapping[str, Any]) -> list[str]:
    """The trace ids (hex) of a request's spans in the order they first come, without parsing the
    rest (ids that do not read are left out; the full parse reports them)."""
    out: dict[str, None] = {}
    _, resource_spans = _get(record, _RESOURCE_SPANS)
    for rs in resource_spans if isinstance(resource_spans, list) else ():
        if not isinstance(rs, Mapping):
            continue
        _, scope_spans = _get(rs, _SCOPE_SPANS)
        for ss in scope_spans if isinstance(scope_spans, list) else ():
            spans = ss.get("spans") if isinstance(ss, Mapping) else None
            for span in spans if isinstance(spans, list) else ():
                if isinstance(span, Mapping):
                    try:
                        raw = id_bytes(span.get("traceId", span.get("trace_id")), TRACE_ID_BYTES)
                    except ValueError:
                        continue
                    if raw:
                        out[raw.hex()] = None
    return list(out)


def _parse_message(json_format: Any, value: Any, message: Any) -> None:
    json_format.ParseDict(value, message, ignore_unknown_fields=True)


def _why(exc: Exception) -> tuple[list[str], str]:
    """(field chain, reason) of a json_format.ParseError message."""
    text = str(exc)
    chain: list[str] = []
    pos = 0
    while True:
        m = _CHAIN.match(text, pos)
        if not m:
            break
        chain.append(m.group(1))
        pos = m.end()
    return chain, text[pos:].rstrip(".") or text


def _locate(json_format: Any, trace_pb2: Any, span: Mapping[str, Any], exc: Exception) -> tuple[str, str]:
    """(field path inside the span, reason) for a span that did not parse; a bad attribute, event
    or link is found by index, and an attribute is named by its key."""
    chain, reason = _why(exc)
    if not chain:
        return "", reason
    head = chain[0]
    items = span.get(head)
    kinds = {"attributes": "KeyValue", "events": "Event", "links": "Link"}
    if head in kinds and isinstance(items, list):
        from opentelemetry.proto.common.v1 import common_pb2

        make = common_pb2.KeyValue if head == "attributes" else getattr(trace_pb2.Span, kinds[head])
        for i, item in enumerate(items):
            try:
                _parse_message(json_format, _ids_out(item) if head == "links" else item, make())
            except Exception as inner:
                sub, reason = _why(inner)
                key = item.get("key") if isinstance(item, Mapping) else None
                named = (
                    f"{head}[{i}:{key}]" if isinstance(key, str) and head == "attributes" else f"{head}[{i}]"
                )
                return ".".join([named, *sub]), reason
    return ".".join(chain), reason


def _ids_out(obj: Any) -> Any:
    """A span or link dict without its id keys (they are not base64, so json_format must not see them)."""
    if not isinstance(obj, Mapping):
        return obj
    out = {k: v for k, v in obj.items() if k not in _SPAN_ID_KEYS and k not in _SPAN_ID_KEYS.values()}
    return out


def _set_ids(target: Any, source: Mapping[str, Any], path: str, *, link: bool = False) -> None:
    """Copy the hex ids of ``source`` into the message ``target``; ValueError names the field."""
    for camel, snake in _SPAN_ID_KEYS.items():
        if link and camel == "parentSpanId":
            continue
        value = source.get(camel, source.get(snake))
        size = TRACE_ID_BYTES if camel == "traceId" else SPAN_ID_BYTES
        try:
            raw = id_bytes(value, size)
        except ValueError as exc:
            raise _FieldError(f"{path}.{camel}", str(exc)) from None
        if raw and not any(raw):
            raise _FieldError(f"{path}.{camel}", "an all-zero id is not a valid id")
        setattr(target, snake, raw)


class _FieldError(Exception):
    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


def _parse_span(json_format: Any, trace_pb2: Any, span: Any, path: str) -> Any:
    if not isinstance(span, Mapping):
        raise _FieldError(path, f"expected an object (a span), got {type(span).__name__}")
    message = trace_pb2.Span()
    try:
        _parse_message(json_format, _ids_out(span), message)
    except Exception as exc:  # json_format.ParseError, and TypeError/ValueError from inside it
        where, reason = _locate(json_format, trace_pb2, span, exc)
        raise _FieldError(f"{path}.{where}" if where else path, reason) from None
    _set_ids(message, span, path)
    if not message.trace_id:
        raise _FieldError(f"{path}.traceId", "missing (every span needs a trace id)")
    if not message.span_id:
        raise _FieldError(f"{path}.spanId", "missing (every span needs a span id)")
    links = span.get("links")
    for i, (link_msg, link) in enumerate(
        zip(message.links, links if isinstance(links, list) else (), strict=False)
    ):
        if isinstance(link, Mapping):
            _set_ids(link_msg, link, f"{path}.links[{i}]", link=True)
    return message


def request_from_json(record: Any) -> tuple[Any, list[SpanProblem]]:
    """An ``ExportTraceServiceRequest`` holding the spans of an OTLP JSON object that read, and a
    problem for each part that did not (the request keeps the rest)."""
    trace_service_pb2, trace_pb2, json_format = proto_modules()
    from opentelemetry.proto.common.v1 import common_pb2
    from opentelemetry.proto.resource.v1 import resource_pb2

    request = trace_service_pb2.ExportTraceServiceRequest()
    problems: list[SpanProblem] = []
    if not isinstance(record, Mapping):
        problems.append(
            SpanProblem("", f"expected an OTLP export request (an object), got {type(record).__name__}", 0)
        )
        return request, problems
    key, resource_spans = _get(record, _RESOURCE_SPANS)
    if not isinstance(resource_spans, list):
        what = (
            "missing" if resource_spans is None else f"expected a list, got {type(resource_spans).__name__}"
        )
        problems.append(SpanProblem(key, f"{what}: not an OTLP trace export request", 0))
        return request, problems
    for i, rs in enumerate(resource_spans):
        rs_path = f"resourceSpans[{i}]"
        if not isinstance(rs, Mapping):
            problems.append(SpanProblem(rs_path, f"expected an object, got {type(rs).__name__}", 0))
            continue
        resource = resource_pb2.Resource()
        _scope_key, scope_spans = _get(rs, _SCOPE_SPANS)
        n_spans = sum(
            len(ss.get("spans") or []) if isinstance(ss, Mapping) and isinstance(ss.get("spans"), list) else 0
            for ss in (scope_spans if isinstance(scope_spans, list) else ())
        )
        try:
            if rs.get("resource") is not None:
                _parse_message(json_format, rs["resource"], resource)
        except Exception as exc:
            chain, reason = _why(exc)
            problems.append(SpanProblem(".".join([rs_path, "resource", *chain]), reason, n_spans))
            continue
        out_rs = request.resource_spans.add()
        out_rs.resource.CopyFrom(resource)
        schema_url = rs.get("schemaUrl", rs.get("schema_url"))
        out_rs.schema_url = schema_url if isinstance(schema_url, str) else ""
        if scope_spans is None:
            continue
        if not isinstance(scope_spans, list):
            problems.append(SpanProblem(f"{rs_path}.scopeSpans", "expected a list", 0))
            continue
        for j, ss in enumerate(scope_spans):
            ss_path = f"{rs_path}.scopeSpans[{j}]"
            if not isinstance(ss, Mapping):
                problems.append(SpanProblem(ss_path, f"expected an object, got {type(ss).__name__}", 0))
                continue
            spans = ss.get("spans")
            if spans is not None and not isinstance(spans, list):
                problems.append(SpanProblem(f"{ss_path}.spans", "expected a list", 0))
                continue
            scope = common_pb2.InstrumentationScope()
            try:
                if ss.get("scope") is not None:
                    _parse_message(json_format, ss["scope"], scope)
            except Exception as exc:
                chain, reason = _why(exc)
                problems.append(SpanProblem(".".join([ss_path, "scope", *chain]), reason, len(spans or [])))
                continue
            out_ss = out_rs.scope_spans.add()
            out_ss.scope.CopyFrom(scope)
            for k, span in enumerate(spans or ()):
                try:
                    out_ss.spans.append(_parse_span(json_format, trace_pb2, span, f"{ss_path}.spans[{k}]"))
                except _FieldError as exc:
                    problems.append(SpanProblem(exc.path, exc.message))
    return request, problems


def request_to_json(request: Any) -> dict[str, Any]:
    """The OTLP JSON object of an ``ExportTraceServiceRequest``: json_format's proto3 mapping with
    enums as integers and the trace and span ids as lowercase hex (json_format writes base64)."""
    _, _, json_format = proto_modules()
    data: dict[str, Any] = json_format.MessageToDict(request, use_integers_for_enums=True)
    for rs_msg, rs in zip(request.resource_spans, data.get("resourceSpans", ()), strict=True):
        for ss_msg, ss in zip(rs_msg.scope_spans, rs.get("scopeSpans", ()), strict=True):
            for span_msg, span in zip(ss_msg.spans, ss.get("spans", ()), strict=True):
                _hex_ids(span_msg, span)
                for link_msg, link in zip(span_msg.links, span.get("links", ()), strict=True):
                    _hex_ids(link_msg, link)
    return data


def _hex_ids(message: Any, data: dict[str, Any]) -> None:
    for camel, snake in _SPAN_ID_KEYS.items():
        raw = getattr(message, snake, b"")
        if raw:
            data[camel] = raw.hex()


def span_count(request: Any) -> int:
    return sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)


__all__ = [
    "SPAN_ID_BYTES",
    "TRACES_HINT",
    "TRACE_ID_BYTES",
    "SpanProblem",
    "id_bytes",
    "is_otlp_record",
    "proto_modules",
    "request_from_json",
    "request_to_json",
    "span_count",
    "trace_ids_of",
]
