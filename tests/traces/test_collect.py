"""``ragmeter collect``: OTLP/HTTP bodies (protobuf, JSON, gzip) appended as OTLP JSON lines; OTLP
responses (ExportTraceServiceResponse, partial success, google.rpc.Status); a bad body gets a 400
and loses nothing else; Ctrl-C stops it cleanly."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from helpers.otlp import export, rag_trace, span, trace_id
from ragmeter.dataset import load_dataset
from ragmeter.traces.collect import MAX_BODY, collecting
from ragmeter.traces.otlp import request_from_json


def post(url: str, body: bytes, content_type: str, *, gzipped: bool = False) -> tuple[int, str, bytes]:
    headers = {"Content-Type": content_type}
    if gzipped:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers.get("Content-Type", ""), err.read()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_protobuf_json_and_gzip_bodies_are_appended_as_otlp_json_lines(tmp_path: Path) -> None:
    request, _ = request_from_json(export(*rag_trace(1, "q1", ["c1"], "a1")))
    with collecting(tmp_path) as c:
        assert c.endpoint.startswith("http://127.0.0.1:") and c.endpoint.endswith("/v1/traces")
        status, ctype, body = post(c.endpoint, request.SerializeToString(), "application/x-protobuf")
        assert (status, ctype) == (200, "application/x-protobuf")
        assert ExportTraceServiceResponse.FromString(body) == ExportTraceServiceResponse()
        status, ctype, body = post(
            c.endpoint, json.dumps(export(*rag_trace(2, "q2", ["c2"], "a2"))).encode(), "application/json"
        )
        assert (status, ctype, json.loads(body)) == (200, "application/json", {})
        status, _, _ = post(c.endpoint, request.SerializeToString(), "application/x-protobuf", gzipped=True)
        assert status == 200
        status, _, _ = post(c.endpoint, b"{}", "application/json")  # an empty request: success, no line
        assert status == 200
    written = lines(tmp_path / "traces.otlp.jsonl")
    assert len(written) == 3
    first = written[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert first["traceId"] == trace_id(1)  # hex, not base64
    ds = load_dataset(tmp_path / "traces.otlp.jsonl")
    # trace 1 came twice (the gzip copy): each span is read once
    assert [s.question for s in ds] == ["q2", "q1"]
    assert c.counts.exports == 3 and c.counts.spans == 9


def test_a_bad_body_gets_400_and_loses_nothing_else(tmp_path: Path) -> None:
    good = json.dumps(export(*rag_trace(1, "q", ["c"], "a"))).encode()
    with collecting(tmp_path) as c:
        assert post(c.endpoint, good, "application/json")[0] == 200
        status, ctype, body = post(c.endpoint, b"not json", "application/json")
        assert status == 400 and ctype == "application/json"
        assert "not JSON" in json_format.Parse(body, status_pb2.Status()).message
        status, ctype, body = post(c.endpoint, b"\xff\xfe garbage", "application/x-protobuf")
        assert status == 400 and ctype == "application/x-protobuf"
        assert "protobuf" in status_pb2.Status.FromString(body).message
        status, _, body = post(c.endpoint, b"\x1f\x8b broken", "application/json")
        assert status == 400
        req = urllib.request.Request(
            c.endpoint,
            data=b"\x1f\x8b\x08broken",
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
            method="POST",
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=20)
        with info.value as err:
            assert err.code == 400
        assert post(c.endpoint, b"x", "text/plain")[0] == 415
        assert post(c.endpoint, good, "application/json")[0] == 200
    written = lines(tmp_path / "traces.otlp.jsonl")
    assert len(written) == 2 and c.counts.bad_requests == 4


def test_bad_spans_are_refused_with_a_partial_success(tmp_path: Path) -> None:
    bad = span(1, 9, 1, "bad")
    bad["traceId"] = "not-a-trace-id"
    record = export(*rag_trace(1, "q", ["c"], "a"), bad)
    with collecting(tmp_path) as c:
        status, _, body = post(c.endpoint, json.dumps(record).encode(), "application/json")
        response = json_format.Parse(body, ExportTraceServiceResponse())
        assert status == 200
        assert response.partial_success.rejected_spans == 1
        assert "spans[3].traceId" in response.partial_success.error_message
        # a binary span with an id of the wrong length
        request = ExportTraceServiceRequest()
        request.resource_spans.add().scope_spans.add().spans.add(
            trace_id=b"\x01" * 3, span_id=b"\x02" * 8, name="x"
        )
        status, _, body = post(c.endpoint, request.SerializeToString(), "application/x-protobuf")
        assert (
            status == 200 and ExportTraceServiceResponse.FromString(body).partial_success.rejected_spans == 1
        )
    assert [s.question for s in load_dataset(tmp_path / "traces.otlp.jsonl")] == ["q"]


def test_too_large_bodies_get_413(tmp_path: Path) -> None:
    huge = b"{" + b" " * (MAX_BODY + 10) + b"}"
    with collecting(tmp_path) as c:
        assert post(c.endpoint, huge, "application/json")[0] == 413
        assert post(c.endpoint, huge, "application/json", gzipped=True)[0] == 413


def test_concurrent_exports_are_whole_lines(tmp_path: Path) -> None:
    bodies = [json.dumps(export(*rag_trace(i, f"q{i}", ["c" * 2000], "a"))).encode() for i in range(1, 41)]
    with collecting(tmp_path) as c:
        statuses: list[int] = []
        threads = [
            threading.Thread(target=lambda b=b: statuses.append(post(c.endpoint, b, "application/json")[0]))
            for b in bodies
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert statuses == [200] * 40
    ds = load_dataset(tmp_path / "traces.otlp.jsonl")
    assert sorted(s.question for s in ds) == sorted(f"q{i}" for i in range(1, 41)) and not ds.problems


def test_a_busy_port_is_a_config_error(tmp_path: Path) -> None:
    from ragmeter.errors import ConfigError

    with (
        collecting(tmp_path) as c,
        pytest.raises(ConfigError, match="cannot listen"),
        collecting(tmp_path / "b", port=c.port),
    ):
        pass


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_cli_ctrl_c_stops_cleanly(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ragmeter.cli.main",
            "collect",
            "--port",
            "0",
            "--out",
            str(tmp_path),
            "--verbose",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("ragmeter collect: http://127.0.0.1:"), first
        endpoint = first.split()[2]
        assert (
            post(endpoint, json.dumps(export(*rag_trace(1, "q", ["c"], "a"))).encode(), "application/json")[0]
            == 200
        )
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped: 1 export(s), 3 span(s) written" in err
    assert "POST /v1/traces 200: 3 span(s) written" in err
    assert [s.question for s in load_dataset(tmp_path / "traces.otlp.jsonl")] == ["q"]
