"""HTTP/1.1 for the OpenAI-compatible provider: JSON POSTs over asyncio's own transports, read by
``h11``, on kept-alive connections (:class:`JsonClient`).

What a judge request needs from HTTP is small: POST a JSON body to one endpoint, many at once, and
read the whole reply. A general client pays for much more on every request (``httpx2``: the client's
request model, auth and redirect layers, cookies, event hooks; ``httpcore2``: its connection pool,
anyio locks and network streams; 0.39 ms of CPU per request against the loopback server, and
about 0.13 s of imports at start-up). At 64 requests in flight that cost sits between a reply and
the next request in its slot, for every request of the wave (docs/performance.md). Here:

- a connection is an :class:`asyncio.Protocol` that keeps reading into a buffer; "has the server
  closed this idle connection" is whether bytes or an end of stream arrived, known without a
  system call; reading stops only when more than :data:`READ_HIGH_WATER` bytes wait unread;
- the request (head and body) is built by ``h11`` and leaves in one ``send``; the reply is parsed
  by ``h11`` (status line, headers, ``Content-Length``, chunked or close-delimited bodies, ``1xx``
  replies skipped); ``gzip`` and ``deflate`` bodies are decoded;
- idle connections are kept per origin for :data:`KEEPALIVE_EXPIRY_S` and reused newest first; with
  no cap on their number (the caller bounds the requests in flight), a request never waits for one.
  A reused connection that the server closed before answering is retried once on a new one;
- redirects are followed as ``httpx`` follows them (301/302 after a POST and 303 become a GET without
  a body, 307/308 keep both; at most :data:`MAX_REDIRECTS`), and the credentials (``Authorization``,
  ``api-key``) are not sent to another origin;
- TLS through ``loop.create_connection(ssl=...)`` with the context given (``httpx2``'s default, the
  system's trust store: :func:`ragmeter.judges.providers.http.make_client`).

Failures are :class:`HTTPError` (connection refused or reset, TLS, a malformed reply) and its
subclass :class:`HTTPTimeout` (connect, write or read took longer than its limit).
"""

from __future__ import annotations

import asyncio
import ssl
import time
import zlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urljoin, urlsplit

import h11

from ragmeter.judges.limits import within

T = TypeVar("T")

#: unread bytes at which a connection stops reading from its socket until they are consumed
READ_HIGH_WATER = 1 << 20
#: how long an idle connection is kept for the next request (httpx's default)
KEEPALIVE_EXPIRY_S = 5.0
#: redirects followed for one request at most (httpx's default)
MAX_REDIRECTS = 20
#: headers that carry credentials: not sent on a redirect to another origin
_CREDENTIALS = frozenset({b"authorization", b"api-key"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


class HTTPError(Exception):
    """No usable HTTP reply: the connection was refused, reset or closed early, TLS failed, or the
    reply was not valid HTTP/1.1."""


class HTTPTimeout(HTTPError):
    """Connecting, sending or waiting for the reply took longer than its limit."""


class _Stale(Exception):
    """A kept-alive connection turned out closed before any byte of the reply came."""


@dataclass(frozen=True)
class Timeouts:
    """Seconds allowed to connect, to send a request, and to wait for each part of the reply."""

    connect: float | None
    write: float | None
    read: float | None


@dataclass(frozen=True)
class Target:
    """Where a request goes: ``url`` split once (a URL string would be parsed at every request)."""

    url: str
    scheme: str
    host: str
    port: int
    path: str  # the request target: path and query, percent-encoded

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    def with_params(self, params: Mapping[str, str] | None) -> Target:
        """This target with ``params`` added to its query."""
        if not params:
            return self
        sep = "&" if "?" in self.url else "?"
        return parse_target(f"{self.url}{sep}{urlencode(params)}")


def parse_target(url: str) -> Target:
    """``url`` (``http://`` or ``https://``) as a :class:`Target`; ``ValueError`` for anything else."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(f"unsupported URL scheme {parts.scheme!r} in {url!r} (use http:// or https://)")
    if not parts.hostname:
        raise ValueError(f"no host in the URL {url!r}")
    host = parts.hostname
    if not host.isascii():
        host = host.encode("idna").decode("ascii")
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    if parts.query:
        path += "?" + quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
    return Target(url=url, scheme=scheme, host=host, port=parts.port or _DEFAULT_PORTS[scheme], path=path)


class Headers(Mapping[str, str]):
    """Reply headers, looked up without regard to case; a repeated header's values are joined by
    ", " (as RFC 9110 allows)."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._items: dict[str, str] = {}
        for name, value in raw:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            self._items[key] = f"{self._items[key]}, {text}" if key in self._items else text

    def __getitem__(self, key: str) -> str:
        return self._items[key.lower()]

    def get(self, key: str, default: Any = None) -> Any:
        return self._items.get(key.lower(), default)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


@dataclass(frozen=True)
class Reply:
    """A whole HTTP reply: status, headers, body (content-decoded), and the URL that gave it."""

    status_code: int
    headers: Headers
    content: bytes
    url: str

    @property
    def text(self) -> str:
        """The body as text: the charset the content type names, else UTF-8 (bad bytes replaced)."""
        charset = "utf-8"
        for part in str(self.headers.get("content-type", "")).split(";")[1:]:
            name, _, value = part.strip().partition("=")
            if name.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")


async def _timed(aw: Awaitable[T], timeout_s: float | None, error: str) -> T:
    try:
        return await within(aw, timeout_s)
    except (TimeoutError, asyncio.TimeoutError):
        raise HTTPTimeout(error) from None


class _Reader(asyncio.Protocol):
    """One connection's receiving end: bytes arrive into ``buffer``; a reader waits on ``waiter``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.paused = False
        self.drained: asyncio.Future[None] | None = None  # set while writing is paused

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > READ_HIGH_WATER and not self.paused and self.transport is not None:
            self.transport.pause_reading()
            self.paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if exc is not None:
            self.error = exc
        self._wake()
        drained, self.drained = self.drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def pause_writing(self) -> None:
        if self.drained is None:
            self.drained = self.loop.create_future()

    def resume_writing(self) -> None:
        drained, self.drained = self.drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def take(self) -> bytes:
        """Everything received and not yet taken (reading resumes if it was paused)."""
        data = bytes(self.buffer)
        self.buffer.clear()
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class _Connection:
    """One HTTP/1.1 connection: a transport, its :class:`_Reader`, and ``h11``'s state."""

    def __init__(self, transport: asyncio.Transport, reader: _Reader) -> None:
        self.transport = transport
        self.reader = reader
        self.h11 = h11.Connection(h11.CLIENT)
        self.idle_since = time.monotonic()

    def idle_and_open(self, now: float) -> bool:
        """Whether this idle connection can take a request: the server has sent nothing (an end
        of stream, or stray bytes, mean it is closing it) and it was used recently enough."""
        r = self.reader
        return (
            not r.eof
            and not r.buffer
            and r.error is None
            and not self.transport.is_closing()
            and now - self.idle_since < KEEPALIVE_EXPIRY_S
        )

    def close(self) -> None:
        self.transport.close()

    async def exchange(
        self, method: bytes, target: Target, headers: list[tuple[bytes, bytes]], body: bytes, t: Timeouts
    ) -> Reply:
        conn = self.h11
        try:
            data = conn.send(h11.Request(method=method, target=target.path.encode("ascii"), headers=headers))
            if body:
                data += conn.send(h11.Data(data=body))  # type: ignore[operator]
            data += conn.send(h11.EndOfMessage())  # type: ignore[operator]
        except h11.LocalProtocolError as e:
            raise HTTPError(f"cannot send this request to {target.url}: {e}") from e
        r = self.reader
        if r.eof or r.error is not None or self.transport.is_closing():
            raise _Stale
        self.transport.write(data)  # type: ignore[arg-type]
        if r.drained is not None:  # the socket's send buffer is full: wait for it to drain
            await _timed(r.drained, t.write, f"sending the request to {target.url} timed out after {t.write} s")
        status, reply_headers, chunks, received = 0, Headers([]), [], False
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as e:
                raise HTTPError(f"{target.url}: the reply is not valid HTTP/1.1: {e}") from e
            if event is h11.NEED_DATA:
                if r.buffer:
                    received = True
                    conn.receive_data(r.take())
                elif r.error is not None and not received:
                    raise _Stale  # reset before any byte of the reply
                elif r.error is not None:
                    raise HTTPError(f"{target.url}: the connection broke during the reply: {r.error}")
                elif r.eof:
                    if not received:
                        raise _Stale
                    conn.receive_data(b"")  # the end of a close-delimited body, or a cut-off reply
                else:
                    r.waiter = r.loop.create_future()
                    await _timed(r.waiter, t.read, f"no reply from {target.url} within {t.read} s")
                continue
            if isinstance(event, h11.InformationalResponse):
                continue
            if isinstance(event, h11.Response):
                status, reply_headers = event.status_code, Headers(list(event.headers))
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                if not received:
                    raise _Stale
                raise HTTPError(f"{target.url}: the server closed the connection before the reply ended")
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()  # kept alive for the next request
        content = _decoded(b"".join(chunks), reply_headers.get("content-encoding"), target)
        return Reply(status, reply_headers, content, target.url)

    @property
    def reusable(self) -> bool:
        return self.h11.our_state is h11.IDLE and self.h11.their_state is h11.IDLE


def _decoded(data: bytes, encoding: str | None, target: Target) -> bytes:
    name = (encoding or "identity").strip().lower()
    try:
        if name in ("identity", ""):
            return data
        if name in ("gzip", "x-gzip"):
            return zlib.decompress(data, 16 + zlib.MAX_WBITS)
        if name == "deflate":
            try:
                return zlib.decompress(data)
            except zlib.error:  # a raw deflate stream, as some servers send it
                return zlib.decompress(data, -zlib.MAX_WBITS)
    except zlib.error as e:
        raise HTTPError(f"{target.url}: the {name} body cannot be decoded: {e}") from e
    raise HTTPError(f"{target.url}: the reply is encoded with {encoding!r}, which was not asked for")


class JsonClient:
    """Kept-alive HTTP/1.1 connections for POSTing JSON (see the module docstring).

    ``headers``: sent with every request (``Host`` and ``Content-Length`` are added). ``tls``: a
    callable that returns the TLS context for ``https://`` targets, called once, when the first
    one connects. One client per event loop.
    """

    def __init__(self, headers: Mapping[str, str], tls: Callable[[], ssl.SSLContext]) -> None:
        self._headers = [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in headers.items()]
        self._tls_factory = tls
        self._tls: ssl.SSLContext | None = None
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._open: set[_Connection] = set()

    async def post(self, target: Target, content: bytes, timeouts: Timeouts) -> Reply:
        """POST ``content`` (JSON) to ``target`` and return the whole reply, redirects followed."""
        method, body = b"POST", content
        first_origin = target.origin
        for _ in range(MAX_REDIRECTS + 1):
            headers = [(b"host", target.host_header.encode("ascii"))]
            headers += [
                h for h in self._headers if target.origin == first_origin or h[0] not in _CREDENTIALS
            ]
            if method == b"POST":
                headers.append((b"content-length", str(len(body)).encode()))
            reply = await self._send(method, target, headers, body, timeouts)
            location = reply.headers.get("location")
            if reply.status_code not in (301, 302, 303, 307, 308) or not location:
                return reply
            if reply.status_code in (301, 302, 303):
                method, body = b"GET", b""
            try:
                target = parse_target(urljoin(target.url, location))
            except ValueError as e:
                raise HTTPError(f"{target.url} redirected to {location!r}: {e}") from e
        raise HTTPError(f"more than {MAX_REDIRECTS} redirects, the last to {target.url}")

    async def _send(
        self, method: bytes, target: Target, headers: list[tuple[bytes, bytes]], body: bytes, t: Timeouts
    ) -> Reply:
        for attempt in (1, 2):
            conn, reused = await self._take(target, t)
            try:
                reply = await conn.exchange(method, target, headers, body, t)
            except _Stale:
                self._drop(conn)
                if reused and attempt == 1:
                    continue  # the server had closed this idle connection: once more, on a new one
                raise HTTPError(f"{target.url}: the server closed the connection without a reply") from None
            except BaseException:
                self._drop(conn)
                raise
            if conn.reusable:
                conn.idle_since = time.monotonic()
                self._idle.setdefault(target.origin, []).append(conn)
            else:
                self._drop(conn)
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    async def _take(self, target: Target, t: Timeouts) -> tuple[_Connection, bool]:
        idle = self._idle.get(target.origin)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.idle_and_open(now):
                return conn, True
            self._drop(conn)
        return await self._connect(target, t), False

    async def _connect(self, target: Target, t: Timeouts) -> _Connection:
        loop = asyncio.get_running_loop()
        reader = _Reader(loop)
        tls = None
        if target.scheme == "https":
            if self._tls is None:
                self._tls = self._tls_factory()
            tls = self._tls
        where = f"{target.host}:{target.port}"
        try:
            transport, _ = await _timed(
                loop.create_connection(
                    lambda: reader, target.host, target.port, ssl=tls, server_hostname=target.host if tls else None
                ),
                t.connect,
                f"connecting to {where} timed out after {t.connect} s",
            )
        except HTTPTimeout:
            raise
        except (OSError, ssl.SSLError) as e:
            raise HTTPError(f"cannot connect to {where}: {e}") from e
        conn = _Connection(transport, reader)  # type: ignore[arg-type]
        self._open.add(conn)
        return conn

    def _drop(self, conn: _Connection) -> None:
        self._open.discard(conn)
        conn.close()

    async def aclose(self) -> None:
        conns, self._open = list(self._open), set()
        self._idle.clear()
        for conn in conns:
            conn.close()

    async def __aenter__(self) -> JsonClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


__all__ = [
    "KEEPALIVE_EXPIRY_S",
    "MAX_REDIRECTS",
    "READ_HIGH_WATER",
    "HTTPError",
    "HTTPTimeout",
    "Headers",
    "JsonClient",
    "Reply",
    "Target",
    "Timeouts",
    "parse_target",
]
