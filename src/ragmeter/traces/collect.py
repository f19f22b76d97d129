"""``ragmeter collect``: an OTLP/HTTP trace receiver that appends each export to a trace file.

``POST /v1/traces`` takes an ``ExportTraceServiceRequest`` as binary protobuf
(``application/x-protobuf``) or OTLP JSON (``application/json``), plain or gzip-compressed, at
most :data:`MAX_BODY` bytes after decompression (413 past it). Each export that holds spans
becomes one OTLP JSON line of ``<out>/traces.otlp.jsonl`` (:func:`~ragmeter.traces.otlp.request_to_json`:
hex ids, integer enums), so ``ragmeter evaluate <out>/traces.otlp.jsonl`` reads what arrived.

Answers, as the OTLP specification asks: 200 with an ``ExportTraceServiceResponse`` in the
request's encoding (``partial_success`` set when some spans were refused, e.g. a bad trace id or
attribute value: the others are written); 400 with a ``google.rpc.Status`` when the body cannot be
decoded (nothing of it is written; other exports are not affected); 413 past the size limit; 415
for another content type or encoding.

One writer: every export is decoded, converted and appended on one worker thread, in the order
the requests arrived, so lines never interleave and the event loop keeps taking requests. Stopping
(:meth:`Collector.stop`, Ctrl-C in the CLI) stops accepting, lets the requests in progress finish,
writes what they carried, and closes the file.
"""

from __future__ import annotations

import asyncio
import json
import threading
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.traces.otlp import (
    SPAN_ID_BYTES,
    TRACE_ID_BYTES,
    TRACES_HINT,
    proto_modules,
    request_from_json,
    request_to_json,
    span_count,
)

#: the file each export is appended to, in the output directory
TRACE_FILE = "traces.otlp.jsonl"
#: largest body taken, after decompression (the OTLP specification's recommended default)
MAX_BODY = 20 * 1024 * 1024
PATH = "/v1/traces"
#: problems named in a partial-success message
_MAX_NAMED = 5

_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"


class BadBody(Exception):
    """The body cannot be decoded: the request is refused whole (HTTP ``status``)."""

    def __init__(self, message: str, status: int = 400) -> None:
        self.status = status
        super().__init__(message)


@dataclass
class Counts:
    exports: int = 0
    spans: int = 0
    rejected_spans: int = 0
    bad_requests: int = 0


def _aiohttp() -> Any:
    try:
        from aiohttp import web
    except ImportError as exc:
        raise ConfigError(f"ragmeter collect needs aiohttp: {TRACES_HINT}") from exc
    return web


def _status_pb2() -> Any:
    try:
        from google.rpc import status_pb2
    except ImportError as exc:
        raise ConfigError(f"ragmeter collect needs googleapis-common-protos: {TRACES_HINT}") from exc
    return status_pb2


def gunzip(body: bytes, limit: int = MAX_BODY) -> bytes:
    """A gzip body, decompressed to at most ``limit`` bytes (BadBody 413 past it, 400 if broken)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise BadBody(f"broken gzip body: {exc}") from None
    if len(out) > limit:
        raise BadBody(f"body larger than {limit} bytes after decompression", 413)
    if not inflater.eof:
        raise BadBody("truncated gzip body")
    return out


def decode_request(body: bytes, content_type: str) -> tuple[Any, int, list[str]]:
    """(request holding the spans that read, spans refused, why) for a body; BadBody if it is not one."""
    trace_service_pb2, _, _ = proto_modules()
    if content_type == _PROTOBUF:
        from google.protobuf.message import DecodeError

        try:
            request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        except DecodeError as exc:
            raise BadBody(f"not a protobuf ExportTraceServiceRequest: {exc}") from None
        return _drop_bad_ids(request)
    try:
        record = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadBody(f"not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise BadBody(
            f"expected an OTLP JSON object (an ExportTraceServiceRequest), got {type(record).__name__}"
        )
    if not any(k in record for k in ("resourceSpans", "resource_spans")):
        # unknown fields are ignored (OTLP JSON): an empty request, with a warning for the sender
        return trace_service_pb2.ExportTraceServiceRequest(), 0, ["no resourceSpans in the request"]
    request, problems = request_from_json(record)
    return (
        request,
        sum(p.spans for p in problems),
        [f"{p.path}: {p.message}" if p.path else p.message for p in problems],
    )


def _drop_bad_ids(request: Any) -> tuple[Any, int, list[str]]:
    """Binary spans whose trace or span id has the wrong length (or is all zero) are refused."""
    rejected, why = 0, []
    for i, rs in enumerate(request.resource_spans):
        for j, ss in enumerate(rs.scope_spans):
            for k in reversed(range(len(ss.spans))):
                span = ss.spans[k]
                for name, value, size in (
                    ("trace_id", span.trace_id, TRACE_ID_BYTES),
                    ("span_id", span.span_id, SPAN_ID_BYTES),
                ):
                    if len(value) != size or not any(value):
                        why.append(
                            f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}].{name}: not a valid {size}-byte id"
                        )
                        rejected += 1
                        del ss.spans[k]
                        break
    return request, rejected, why


class Collector:
    """The receiver. ``await start()`` binds (``port`` 0: any free port, then read ``port``);
    ``await stop()`` finishes the requests in progress and closes the file."""

    def __init__(
        self,
        out_dir: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 4318,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / TRACE_FILE
        self.host = host
        self.port = port
        self.counts = Counts()
        self._log = log
        self._file: Any = None
        self._writer: ThreadPoolExecutor | None = None
        self._runner: Any = None

    @property
    def endpoint(self) -> str:
        """The URL to export to (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{PATH}"

    async def start(self) -> None:
        web = _aiohttp()
        _status_pb2()
        proto_modules()
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("ab")
        except OSError as exc:
            raise ConfigError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragmeter-collect")
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_post(PATH, self._handle)
        self._runner = web.AppRunner(app, auto_decompress=False, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await self.stop()
            raise ConfigError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from exc
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or ()
        if sockets:
            self.port = sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()  # stops listening; waits for the handlers in progress
            self._runner = None
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
        if self._file is not None:
            self._file.close()
            self._file = None

    # ------------------------------------------------------------------ requests

    async def _handle(self, request: Any) -> Any:
        web = _aiohttp()
        content_type = request.content_type
        if content_type not in (_PROTOBUF, _JSON):
            return self._error(
                web, 415, f"Content-Type must be {_PROTOBUF} or {_JSON}, got {content_type!r}", _JSON
            )
        encoding = request.headers.get("Content-Encoding", "").strip().lower()
        if encoding not in ("", "identity", "gzip"):
            return self._error(
                web, 415, f"Content-Encoding {encoding!r} is not supported (gzip or none)", content_type
            )
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return self._error(web, 413, f"body larger than {MAX_BODY} bytes", content_type)
        loop = asyncio.get_running_loop()
        try:
            assert self._writer is not None
            accepted, rejected, why = await loop.run_in_executor(
                self._writer, self._ingest, body, content_type, encoding == "gzip"
            )
        except BadBody as exc:
            self.counts.bad_requests += 1
            self._say(f"{request.method} {request.path} {exc.status}: {exc}")
            return self._error(web, exc.status, str(exc), content_type)
        self._say(
            f"{request.method} {request.path} 200: {accepted} span(s) written"
            + (f", {rejected} refused ({why[0]})" if rejected else "")
        )
        return self._response(web, rejected, why, content_type)

    def _ingest(self, body: bytes, content_type: str, gzipped: bool) -> tuple[int, int, list[str]]:
        """Decode, convert, append (on the writer thread)."""
        if gzipped:
            body = gunzip(body)
        request, rejected, why = decode_request(body, content_type)
        n = span_count(request)
        if n:
            line = json.dumps(request_to_json(request), ensure_ascii=False, separators=(",", ":"))
            self._file.write(line.encode("utf-8") + b"\n")
            self._file.flush()
            self.counts.exports += 1
            self.counts.spans += n
        self.counts.rejected_spans += rejected
        return n, rejected, why

    def _response(self, web: Any, rejected: int, why: list[str], content_type: str) -> Any:
        trace_service_pb2, _, json_format = proto_modules()
        response = trace_service_pb2.ExportTraceServiceResponse()
        if why:
            message = "; ".join(why[:_MAX_NAMED]) + (
                f"; and {len(why) - _MAX_NAMED} more" if len(why) > _MAX_NAMED else ""
            )
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = message
        if content_type == _PROTOBUF:
            return web.Response(body=response.SerializeToString(), content_type=_PROTOBUF)
        return web.Response(
            body=json_format.MessageToJson(response, indent=None).encode(), content_type=_JSON
        )

    def _error(self, web: Any, status: int, message: str, content_type: str) -> Any:
        status_pb2 = _status_pb2()
        _, _, json_format = proto_modules()
        body = status_pb2.Status(message=message)
        if content_type == _PROTOBUF:
            return web.Response(status=status, body=body.SerializeToString(), content_type=_PROTOBUF)
        return web.Response(
            status=status, body=json_format.MessageToJson(body, indent=None).encode(), content_type=_JSON
        )

    def _say(self, line: str) -> None:
        if self._log is not None:
            self._log(line)


@contextmanager
def collecting(out_dir: str | Path, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[Collector]:
    """A :class:`Collector` running on its own thread while the block runs (an app in this process
    exports to ``collector.endpoint``); stopped, with everything written, when the block ends."""
    collector = Collector(out_dir, host=host, port=port)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(collector.start())
        except BaseException as exc:
            failure.append(exc)
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.run_until_complete(collector.stop())

    thread = threading.Thread(target=run, name="ragmeter-collect-loop", daemon=True)
    thread.start()
    started.wait()
    if failure:
        thread.join()
        loop.close()
        raise failure[0]
    try:
        yield collector
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


async def serve(collector: Collector, on_start: Callable[[Collector], None] | None = None) -> None:
    """Run ``collector`` until SIGINT or SIGTERM, then stop it cleanly."""
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
        except (NotImplementedError, RuntimeError):  # Windows: Ctrl-C arrives as KeyboardInterrupt
            pass
    await collector.start()
    try:
        if on_start is not None:
            on_start(collector)
        await stop.wait()
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        await collector.stop()


__all__ = [
    "MAX_BODY",
    "PATH",
    "TRACE_FILE",
    "BadBody",
    "Collector",
    "Counts",
    "collecting",
    "decode_request",
    "gunzip",
    "serve",
]
