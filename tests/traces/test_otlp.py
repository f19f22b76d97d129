"""OTLP JSON <-> opentelemetry-proto: hex ids both ways (json_format alone writes base64), span-by-span
parsing that names the bad field and keeps the other spans."""

from __future__ import annotations

import base64
import json

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from helpers.otlp import export, span, span_id, trace_id
from ragmeter.traces.otlp import id_bytes, is_otlp_record, request_from_json, request_to_json, trace_ids_of
from ragmeter.traces.spans import spans_of


def test_ids_are_hex_in_and_out() -> None:
    record = export(span(0xABC, 7, 3, "s", {"k": "v"}))
    record["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["links"] = [
        {"traceId": trace_id(0xDEF), "spanId": span_id(9)}
    ]
    request, problems = request_from_json(record)
    assert not problems
    (s,) = request.resource_spans[0].scope_spans[0].spans
    assert s.trace_id == bytes.fromhex(trace_id(0xABC)) and s.span_id == bytes.fromhex(span_id(7))
    assert s.parent_span_id == bytes.fromhex(span_id(3))
    assert s.links[0].trace_id == bytes.fromhex(trace_id(0xDEF))
    out = request_to_json(request)
    written = out["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert written["traceId"] == trace_id(0xABC) and written["spanId"] == span_id(7)
    assert written["parentSpanId"] == span_id(3)
    assert written["links"][0] == {"traceId": trace_id(0xDEF), "spanId": span_id(9)}
    assert written["kind"] == 1  # enums as integers
    # json_format's own mapping would have written base64
    plain = json_format.MessageToDict(request)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert plain["traceId"] == base64.b64encode(bytes.fromhex(trace_id(0xABC))).decode()
    # and what is written reads back the same
    again, problems = request_from_json(json.loads(json.dumps(out)))
    assert not problems and again == request


def test_base64_ids_from_a_plain_proto3_json_exporter_are_read() -> None:
    raw_t, raw_s = bytes(range(1, 17)), bytes(range(1, 9))
    record = export(span(1, 1, None, "s"))
    sp = record["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    sp["traceId"], sp["spanId"] = base64.b64encode(raw_t).decode(), base64.b64encode(raw_s).decode()
    request, problems = request_from_json(record)
    assert not problems
    assert request.resource_spans[0].scope_spans[0].spans[0].trace_id == raw_t
    assert trace_ids_of(record) == [raw_t.hex()]


@pytest.mark.parametrize(
    ("value", "size", "expected"),
    [
        ("00f067aa0ba902b7", 8, bytes.fromhex("00f067aa0ba902b7")),
        ("00F067AA0BA902B7", 8, bytes.fromhex("00f067aa0ba902b7")),  # case-insensitive hex
        ("", 8, b""),
        (None, 16, b""),
    ],
)
def test_id_bytes(value: object, size: int, expected: bytes) -> None:
    assert id_bytes(value, size) == expected


@pytest.mark.parametrize("value", ["zz", "g" * 16, 12345, "00f067aa0ba902b7ff"])
def test_bad_ids(value: object) -> None:
    with pytest.raises(ValueError):
        id_bytes(value, 8)


def test_a_bad_span_is_named_by_its_path_and_field_and_the_others_are_kept() -> None:
    good = span(1, 1, None, "good", {"n": 3})
    bad_attr = span(1, 2, 1, "bad-attr", {"a": "x"})
    bad_attr["attributes"].append({"key": "llm.token_count.prompt", "value": {"intValue": "many"}})
    bad_id = span(1, 3, 1, "bad-id")
    bad_id["spanId"] = "nothex!!nothex!!"
    no_trace = span(1, 4, 1, "no-trace")
    del no_trace["traceId"]
    zero = span(1, 5, 1, "zero")
    zero["traceId"] = "0" * 32
    request, problems = request_from_json(export(good, bad_attr, bad_id, no_trace, zero))
    assert [s.name for s in request.resource_spans[0].scope_spans[0].spans] == ["good"]
    by_path = {p.path: p.message for p in problems}
    base = "resourceSpans[0].scopeSpans[0].spans"
    assert f"{base}[1].attributes[1:llm.token_count.prompt].value.intValue" in by_path
    assert "many" in by_path[f"{base}[1].attributes[1:llm.token_count.prompt].value.intValue"]
    assert "not hex" in by_path[f"{base}[2].spanId"]
    assert "missing" in by_path[f"{base}[3].traceId"]
    assert "all-zero" in by_path[f"{base}[4].traceId"]


def test_envelope_problems() -> None:
    assert not is_otlp_record({"question": "q"}) and is_otlp_record({"resourceSpans": []})
    _, problems = request_from_json({"question": "q"})
    assert problems[0].path == "resourceSpans" and "not an OTLP" in problems[0].message
    _, problems = request_from_json({"resourceSpans": [{"resource": {"attributes": "x"}, "scopeSpans": []}]})
    assert problems[0].path.startswith("resourceSpans[0].resource")
    # snake_case keys (proto field names) are accepted too
    request, problems = request_from_json(
        {"resource_spans": [{"scope_spans": [{"spans": [span(1, 1, None, "s")]}]}]}
    )
    assert not problems and len(request.resource_spans[0].scope_spans[0].spans) == 1


def test_attribute_values_become_python_values() -> None:
    a = {"s": "x", "i": 7, "d": 0.5, "b": True, "arr": ["a", 1], "kv": {"k": "v"}}
    record = export(span(1, 1, None, "s", a))
    record["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append(
        {"key": "by", "value": {"bytesValue": base64.b64encode(b"\x01\x02").decode()}}
    )
    request, _ = request_from_json(record)
    (s,) = spans_of(request, line=1)
    assert dict(s.attributes) == {**a, "by": "0102"}
    assert s.trace_id == trace_id(1) and s.parent_id is None and s.duration_ms == 10.0


def test_a_protobuf_request_converts_to_the_same_json() -> None:
    request, _ = request_from_json(export(span(5, 6, None, "root", {"x": 1})))
    binary = request.SerializeToString()
    assert request_to_json(ExportTraceServiceRequest.FromString(binary)) == request_to_json(request)
