"""The HTTP client's network layer (:mod:`ragmeter.judges.providers.netstream`) through the real
client (:func:`ragmeter.judges.providers.http.make_client`), against a raw HTTP/1.1 server on
127.0.0.1 that this test drives byte by byte: keep-alive reuse, one segment per request, a server
that closes idle connections, timeouts, a reply larger than the read buffer's limit, and TLS."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx2 as httpx
import pytest

from ragmeter.errors import TransportError
from ragmeter.judges.providers import netstream
from ragmeter.judges.providers.http import PooledTransport, make_client, post_json
from ragmeter.judges.providers.openai_compat import OpenAICompatibleProvider
from ragmeter.judges.types import ChatRequest, Message


class RawServer:
    """HTTP/1.1 by hand. ``delay_s`` before each reply, ``close_after_reply`` (no keep-alive, and
    no ``Connection: close`` header either: the client must notice the close itself), ``body``
    (the reply; default a chat completion). Records connections and the size of each read."""

    def __init__(self, *, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self.delay_s = 0.0
        self.close_after_reply = False
        self.body: bytes | None = None
        self.connections = 0
        self.requests: list[dict[str, Any]] = []
        self.reads: list[int] = []
        self._server: asyncio.AbstractServer | None = None

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"{'https' if self.tls else 'http'}://{'localhost' if self.tls else '127.0.0.1'}:{port}/v1"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = await reader.read(65536)
                    if not chunk:
                        return
                    self.reads.append(len(chunk))
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                headers = dict(
                    line.split(": ", 1) for line in head.decode().split("\r\n")[1:] if ": " in line
                )
                length = int(headers.get("Content-Length") or headers.get("content-length") or 0)
                while len(buf) < length:
                    chunk = await reader.read(65536)
                    if not chunk:
                        return
                    self.reads.append(len(chunk))
                    buf += chunk
                body, buf = buf[:length], buf[length:]
                self.requests.append(json.loads(body))
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                data = self.body or json.dumps(
                    {"choices": [{"message": {"content": '{"a": 1}'}, "finish_reason": "stop"}]}
                ).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(data)}\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
                if self.close_after_reply:
                    return
        except (ConnectionError, ssl.SSLError):
            return
        finally:
            writer.close()


@pytest.fixture
async def server() -> AsyncIterator[RawServer]:
    async with RawServer() as s:
        yield s


def client_for(url: str) -> httpx.AsyncClient:
    return make_client("openai-compatible", "k", {}, url)


async def test_requests_share_connections_and_go_out_in_one_segment(server: RawServer) -> None:
    async with client_for(server.url) as client:
        assert isinstance(client._transport, PooledTransport)  # the transport in use
        for i in range(5):
            reply = await post_json(client, server.url + "/chat/completions", {"i": i, "pad": "x" * 2000})
            assert reply["choices"][0]["message"]["content"] == '{"a": 1}'
        await asyncio.gather(
            *(post_json(client, server.url + "/chat/completions", {"i": i}) for i in range(8))
        )
    assert [r["i"] for r in server.requests[:5]] == [0, 1, 2, 3, 4]
    assert server.connections <= 8  # kept alive and reused, never one per request


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return False


async def test_what_one_step_writes_leaves_in_one_send() -> None:
    """httpcore writes a request's head and body separately; they reach the socket as one write,
    before the read that waits for the reply, and by the next loop iteration at the latest."""
    reader = netstream._Reader(asyncio.get_running_loop())
    transport = FakeTransport()
    stream = netstream.AsyncioStream(transport, reader)
    await stream.write(b"POST / HTTP/1.1\r\n\r\n")
    await stream.write(b"{}")
    assert transport.writes == []
    reader.data_received(b"HTTP/1.1 200 OK\r\n")
    assert await stream.read(100) == b"HTTP/1.1 200 OK\r\n"
    assert transport.writes == [b"POST / HTTP/1.1\r\n\r\n{}"]
    await stream.write(b"more")
    await asyncio.sleep(0)  # no read follows: the loop flushes it
    assert transport.writes[-1] == b"more"
    reader.eof_received()
    assert stream.get_extra_info("is_readable") is True  # an idle connection the server closed
    assert await stream.read(100) == b""


async def test_a_server_that_closes_idle_connections_is_noticed(server: RawServer) -> None:
    server.close_after_reply = True
    async with client_for(server.url) as client:
        for i in range(3):
            await post_json(client, server.url + "/chat/completions", {"i": i})
            await asyncio.sleep(0.05)  # the close reaches the client before the next request
    assert server.connections == 3 and len(server.requests) == 3


async def test_read_timeout_is_httpx_s_and_the_provider_s_transport_error(server: RawServer) -> None:
    server.delay_s = 1.0
    async with client_for(server.url) as client:
        with pytest.raises(httpx.ReadTimeout):
            await post_json(client, server.url + "/chat/completions", {}, timeout_s=0.1)
    provider = OpenAICompatibleProvider("m", base_url=server.url, timeout_s=0.1, structured="none")
    request = ChatRequest(messages=(Message("user", "hi"),))
    try:
        with pytest.raises(TransportError):
            await provider.generate(request)
    finally:
        await provider.aclose()


async def test_connect_error_is_httpx_s() -> None:
    async with RawServer() as gone:
        url = gone.url
    async with client_for(url) as client:
        with pytest.raises(httpx.ConnectError):
            await post_json(client, url + "/chat/completions", {})


async def test_a_reply_larger_than_the_read_limit_arrives_whole(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(netstream, "READ_HIGH_WATER", 4096)  # reading pauses and resumes many times
    text = "y" * 300_000
    server.body = json.dumps({"choices": [{"message": {"content": text}}]}).encode()
    async with client_for(server.url) as client:
        reply = await post_json(client, server.url + "/chat/completions", {})
    assert reply["choices"][0]["message"]["content"] == text


async def test_tls_endpoint() -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(server_ctx)
    async with RawServer(tls=server_ctx) as tls_server:
        client_ctx = ssl.create_default_context()
        ca.configure_trust(client_ctx)
        client = httpx.AsyncClient(transport=PooledTransport(client_ctx))
        async with client:
            reply = await post_json(client, tls_server.url + "/chat/completions", {"x": 1})
            again = await post_json(client, tls_server.url + "/chat/completions", {"x": 2})
        assert reply == again and reply["choices"][0]["message"]["content"] == '{"a": 1}'
        assert tls_server.connections == 1
        # a certificate the client does not trust is a connect error, as with httpx's own transport
        async with httpx.AsyncClient(transport=PooledTransport(ssl.create_default_context())) as strict:
            with pytest.raises(httpx.ConnectError):
                await post_json(strict, tls_server.url + "/chat/completions", {})


async def test_proxies_in_the_environment_keep_httpx_s_own_transport(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with client_for(server.url) as client:
        assert not isinstance(client._transport, PooledTransport)
        await post_json(client, server.url + "/chat/completions", {})  # NO_PROXY: straight there
    assert len(server.requests) == 1
