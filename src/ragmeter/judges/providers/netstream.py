"""The network under :mod:`ragmeter.judges.providers.http`'s connection pool: asyncio's own
transports, not anyio's streams.

``httpx2``'s pool (``httpcore2``) reads and writes through a network backend; its default wraps
anyio socket streams. At 64 requests in flight that layer cost more CPU than the HTTP itself
(bench/runner_overhead.py, profiled: docs/performance.md): every pool pass asks each idle
connection whether the server closed it, and anyio answers by building the socket's attribute
table (a ``getpeername`` system call) and polling the socket; every read pauses and resumes the
transport (two ``epoll`` calls); headers and body go out as two writes, so the server is woken
twice. Here a connection is an :class:`asyncio.Protocol` that keeps reading into a buffer:

- "has the server closed this idle connection" is whether bytes or an end of stream arrived,
  known without a system call;
- the head and the body of a request leave in one ``send`` (writes made in the same step of the
  event loop are joined, and always flushed before the next read or within that loop iteration);
- reading stops only when more than :data:`READ_HIGH_WATER` bytes wait unread.

The errors and timeouts are ``httpcore2``'s (``ConnectError``, ``ReadTimeout``...), which
``httpx2`` turns into its own exactly as before. TLS goes through :meth:`asyncio.loop.start_tls`.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore2

#: unread bytes at which a connection stops reading from its socket until they are consumed
READ_HIGH_WATER = 1 << 20


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

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


async def _within(fut: asyncio.Future[None], timeout: float | None, error: type[Exception]) -> None:
    """Wait for ``fut``; after ``timeout`` seconds raise ``error`` instead (a timer, not a task)."""
    if timeout is None:
        await fut
        return
    expired = False

    def expire() -> None:
        nonlocal expired
        if not fut.done():
            expired = True
            fut.cancel()

    handle = fut.get_loop().call_later(timeout, expire)
    try:
        await fut
    except asyncio.CancelledError:
        if expired:
            raise error(f"timed out after {timeout} s") from None
        raise  # cancelled from outside
    finally:
        handle.cancel()


class AsyncioStream(httpcore2.AsyncNetworkStream):
    """A connection as ``httpcore2`` sees it, over an asyncio transport and a :class:`_Reader`."""

    def __init__(self, transport: asyncio.Transport, reader: _Reader) -> None:
        self._transport = transport
        self._reader = reader
        self._pending: list[bytes] = []

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._flush()
        r = self._reader
        while not r.buffer:
            if r.error is not None:
                raise httpcore2.ReadError(str(r.error) or type(r.error).__name__)
            if r.eof:
                return b""
            r.waiter = r.loop.create_future()
            await _within(r.waiter, timeout, httpcore2.ReadTimeout)
        data = bytes(r.buffer[:max_bytes])
        del r.buffer[:max_bytes]
        if r.paused and len(r.buffer) <= READ_HIGH_WATER // 2:
            r.paused = False
            self._transport.resume_reading()
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        r = self._reader
        if r.error is not None or self._transport.is_closing():
            raise httpcore2.WriteError(str(r.error) if r.error else "the connection is closed")
        if not self._pending:
            r.loop.call_soon(self._flush)  # what this step writes leaves at the next loop iteration
        self._pending.append(buffer)
        if r.drained is not None:  # the socket's send buffer is full: wait for it
            self._flush()
            drained = r.drained
            if drained is not None:
                await _within(drained, timeout, httpcore2.WriteTimeout)

    def _flush(self) -> None:
        if self._pending:
            data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
            self._pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    async def aclose(self) -> None:
        self._pending.clear()
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        self._flush()
        loop = self._reader.loop
        try:
            transport = await loop.start_tls(
                self._transport,
                self._reader,
                ssl_context,
                server_hostname=server_hostname,
                ssl_handshake_timeout=timeout,
            )
        except (TimeoutError, asyncio.TimeoutError) as e:
            self._transport.close()
            raise httpcore2.ConnectTimeout(str(e) or "TLS handshake timed out") from e
        except (OSError, ssl.SSLError) as e:
            self._transport.close()
            raise httpcore2.ConnectError(str(e) or type(e).__name__) from e
        if transport is None:  # the connection closed during the handshake
            raise httpcore2.ConnectError("the connection closed during the TLS handshake")
        self._reader.transport = transport  # type: ignore[assignment]
        return AsyncioStream(transport, self._reader)  # type: ignore[arg-type]

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # data or an end of stream waits: an idle connection is gone
            return bool(self._reader.buffer) or self._reader.eof
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


class AsyncioBackend(httpcore2.AsyncNetworkBackend):
    """Connections for ``httpcore2``'s pool as :class:`AsyncioStream` objects."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        reader = _Reader(loop)
        connect = loop.create_connection(
            lambda: reader, host, port, local_addr=(local_address, 0) if local_address else None
        )
        transport = await self._connected(connect, timeout)
        sock = transport.get_extra_info("socket")
        if sock is not None:  # asyncio sets TCP_NODELAY itself
            for option in socket_options or ():
                sock.setsockopt(*option)
        return AsyncioStream(transport, reader)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        reader = _Reader(loop)
        transport = await self._connected(loop.create_unix_connection(lambda: reader, path), timeout)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            for option in socket_options or ():
                sock.setsockopt(*option)
        return AsyncioStream(transport, reader)

    @staticmethod
    async def _connected(connect: Any, timeout: float | None) -> asyncio.Transport:
        try:
            transport, _ = await asyncio.wait_for(connect, timeout)
        except (TimeoutError, asyncio.TimeoutError) as e:
            raise httpcore2.ConnectTimeout(str(e) or "connect timed out") from e
        except (OSError, socket.gaierror) as e:
            raise httpcore2.ConnectError(str(e) or type(e).__name__) from e
        return transport  # type: ignore[no-any-return]

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class KeepAlivePool:
    """``httpcore2``'s connection pool, cut to what an unbounded HTTP/1.1 pool needs: idle
    connections kept per origin and reused newest first, a new connection when none is idle.

    ``httpcore2.AsyncConnectionPool`` re-examines every connection it holds each time a request
    starts or ends (closed? idle? expired? reserved?), which at 64 connections was a fifth of the
    run's CPU (docs/performance.md). With no cap on connections there is nothing to queue, so a
    request only needs one idle connection, checked when taken. The connections themselves
    (connect, TLS, HTTP/1.1) are ``httpcore2``'s ``AsyncHTTPConnection``, unchanged."""

    def __init__(self, ssl_context: ssl.SSLContext | None, keepalive_expiry: float) -> None:
        self._ssl_context = ssl_context
        self._keepalive_expiry = keepalive_expiry
        self._backend = AsyncioBackend()
        # idle connections by origin (scheme, host, port: httpcore2's Origin is not hashable)
        self._idle: dict[tuple[bytes, bytes, int], list[httpcore2.AsyncHTTPConnection]] = {}
        self._open: set[httpcore2.AsyncHTTPConnection] = set()

    async def _take(self, origin: httpcore2.Origin) -> httpcore2.AsyncHTTPConnection:
        idle = self._idle.get(_key(origin))
        while idle:
            conn = idle.pop()
            if conn.is_idle() and not conn.has_expired():
                return conn
            await self._drop(conn)  # closed by the server, or kept past its expiry
        conn = httpcore2.AsyncHTTPConnection(
            origin=origin,
            ssl_context=self._ssl_context,
            keepalive_expiry=self._keepalive_expiry,
            network_backend=self._backend,
        )
        self._open.add(conn)
        return conn

    async def _drop(self, conn: httpcore2.AsyncHTTPConnection) -> None:
        self._open.discard(conn)
        if not conn.is_closed():
            await conn.aclose()  # closes the transport; nothing to wait for

    async def release(self, conn: httpcore2.AsyncHTTPConnection, origin: httpcore2.Origin) -> None:
        """A request is done with ``conn``: keep it for the next one, or let it go."""
        if conn.is_idle() and not conn.is_closed():
            self._idle.setdefault(_key(origin), []).append(conn)
        else:
            await self._drop(conn)

    async def handle_async_request(self, request: httpcore2.Request) -> httpcore2.Response:
        if request.url.scheme not in (b"http", b"https"):
            raise httpcore2.UnsupportedProtocol(f"unsupported URL scheme {request.url.scheme.decode()!r}")
        origin = request.url.origin
        while True:
            conn = await self._take(origin)
            try:
                response = await conn.handle_async_request(request)
            except httpcore2.ConnectionNotAvailable:  # it stopped being idle: take another
                self._open.discard(conn)
                continue
            except BaseException:
                await self.release(conn, origin)
                raise
            return httpcore2.Response(
                status=response.status,
                headers=response.headers,
                content=_Released(response.stream, self, conn, origin),  # type: ignore[arg-type]
                extensions=response.extensions,
            )

    async def aclose(self) -> None:
        conns, self._open = list(self._open), set()
        self._idle.clear()
        for conn in conns:
            await conn.aclose()

    async def __aenter__(self) -> KeepAlivePool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _key(origin: httpcore2.Origin) -> tuple[bytes, bytes, int]:
    return (origin.scheme, origin.host, origin.port)


class _Released:
    """A response body that gives its connection back to the pool once read or closed."""

    def __init__(
        self, stream: Any, pool: KeepAlivePool, conn: httpcore2.AsyncHTTPConnection, origin: httpcore2.Origin
    ) -> None:
        self._stream = stream
        self._pool = pool
        self._conn = conn
        self._origin = origin
        self._closed = False

    async def __aiter__(self) -> Any:
        try:
            async for chunk in self._stream:
                yield chunk
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if hasattr(self._stream, "aclose"):
                await self._stream.aclose()
        finally:
            await self._pool.release(self._conn, self._origin)


__all__ = ["READ_HIGH_WATER", "AsyncioBackend", "AsyncioStream", "KeepAlivePool"]
