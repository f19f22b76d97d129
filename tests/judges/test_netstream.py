"""The HTTP client (:mod:`ragmeter.judges.providers.netstream` through
:func:`ragmeter.judges.providers.http.make_client`), against a raw HTTP/1.1 server on 127.0.0.1 that
this test drives byte by byte: keep-alive reuse, one send per request, servers that close idle
connections, timeouts, chunked, gzip and close-delimited replies, redirects, TLS, proxies."""

from __future__ import annotations

import asyncio
import gzip
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ragmeter.errors import TransportError
from ragmeter.judges.providers import netstream
from ragmeter.judges.providers.http import HttpxJsonClient, default_tls_context, make_client, post_json
from ragmeter.judges.providers.netstream import HTTPError, HTTPTimeout, JsonClient, parse_target
from ragmeter.judges.providers.openai_compat import OpenAICompatibleProvider
from ragmeter.judges.types import ChatRequest, Message

CHAT = json.dumps({"choices": [{"message": {"content": '{"a": 1}'}, "finish_reason": "stop"}]}).encode()


class RawServer:
    """HTTP/1.1 by hand. ``delay_s`` before each reply, ``close_after_reply`` (no keep-alive, and
    no ``Connection: close`` header either: the client must notice the close itself), ``body``
    (the reply; default a chat completion), ``raw`` (the whole reply, bytes as they are). Records
    connections, each request's path, headers and body, and the size of each read."""

    def __init__(self, *, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self.delay_s = 0.0
        self.close_after_reply = False
        self.body: bytes | None = None
        self.raw: bytes | None = None
        self.connections = 0
        self.requests: list[dict[str, Any]] = []
        self.seen: list[dict[str, Any]] = []
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
                lines = head.decode().split("\r\n")
                headers = {
                    k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:] if ": " in line)
                }
                length = int(headers.get("content-length") or 0)
                while len(buf) < length:
                    chunk = await reader.read(65536)
                    if not chunk:
                        return
                    self.reads.append(len(chunk))
                    buf += chunk
                body, buf = buf[:length], buf[length:]
                self.seen.append({"line": lines[0], "headers": headers, "body": body})
                if body:
                    self.requests.append(json.loads(body))
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                if self.raw is not None:
                    writer.write(self.raw)
                else:
                    data = self.body or CHAT
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


def new_client() -> Any:
    return make_client("openai-compatible", "k", {})


async def test_requests_share_connections(server: RawServer) -> None:
    async with new_client() as client:
        assert isinstance(client, JsonClient)  # the client in use without a proxy
        for i in range(5):
            reply = await post_json(client, server.url + "/chat/completions", {"i": i, "pad": "x" * 2000})
            assert reply["choices"][0]["message"]["content"] == '{"a": 1}'
        await asyncio.gather(
            *(post_json(client, server.url + "/chat/completions", {"i": i}) for i in range(8))
        )
    assert [r["i"] for r in server.requests[:5]] == [0, 1, 2, 3, 4]
    assert server.connections <= 8  # kept alive and reused, never one per request
    line, headers = server.seen[0]["line"], server.seen[0]["headers"]
    assert line == "POST /v1/chat/completions HTTP/1.1" and headers["authorization"] == "Bearer k"
    assert headers["host"].startswith("127.0.0.1:") and headers["content-type"] == "application/json"


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return False


async def test_a_request_leaves_in_one_send() -> None:
    reader = netstream._Reader(asyncio.get_running_loop())
    transport = FakeTransport()
    conn = netstream._Connection(transport, reader)
    reader.data_received(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
    target = parse_target("http://127.0.0.1:8000/v1/chat/completions")
    timeouts = netstream.Timeouts(1.0, 1.0, 1.0)
    body = b'{"pad": "' + b"x" * 5000 + b'"}'
    headers = [(b"host", b"127.0.0.1:8000"), (b"content-length", str(len(body)).encode())]
    reply = await conn.exchange(b"POST", target, headers, body, timeouts)
    assert reply.status_code == 200 and reply.content == b"{}" and conn.reusable
    assert len(transport.writes) == 1 and transport.writes[0].endswith(body)  # head and body together


async def test_a_server_that_closes_idle_connections_is_noticed(server: RawServer) -> None:
    server.close_after_reply = True
    async with new_client() as client:
        for i in range(3):
            await post_json(client, server.url + "/chat/completions", {"i": i})
            await asyncio.sleep(0.05)  # the close reaches the client before the next request
    assert server.connections == 3 and len(server.requests) == 3


async def test_a_connection_closed_while_reused_is_retried_once_on_a_new_one(server: RawServer) -> None:
    server.close_after_reply = True
    async with new_client() as client:
        for i in range(4):  # no pause: the next request may find the connection already closed
            await post_json(client, server.url + "/chat/completions", {"i": i})
    assert [r["i"] for r in server.requests] == [0, 1, 2, 3]  # each sent once, none lost


async def test_read_timeout_is_an_http_timeout_and_the_provider_s_transport_error(server: RawServer) -> None:
    server.delay_s = 1.0
    async with new_client() as client:
        with pytest.raises(HTTPTimeout):
            await post_json(client, server.url + "/chat/completions", {}, timeout_s=0.1)
    provider = OpenAICompatibleProvider("m", base_url=server.url, timeout_s=0.1, structured="none")
    request = ChatRequest(messages=(Message("user", "hi"),))
    try:
        with pytest.raises(TransportError, match="timed out"):
            await provider.generate(request)
    finally:
        await provider.aclose()


async def test_connect_error() -> None:
    async with RawServer() as gone:
        url = gone.url
    async with new_client() as client:
        with pytest.raises(HTTPError, match="cannot connect") as info:
            await post_json(client, url + "/chat/completions", {})
    assert not isinstance(info.value, HTTPTimeout)


async def test_a_reply_larger_than_the_read_limit_arrives_whole(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(netstream, "READ_HIGH_WATER", 4096)  # reading pauses and resumes many times
    text = "y" * 300_000
    server.body = json.dumps({"choices": [{"message": {"content": text}}]}).encode()
    async with new_client() as client:
        reply = await post_json(client, server.url + "/chat/completions", {})
    assert reply["choices"][0]["message"]["content"] == text


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in (CHAT[:10], CHAT[10:]))
            + b"0\r\n\r\n",
            id="1xx-then-chunked",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
            + f"Content-Length: {len(gzip.compress(CHAT))}\r\n\r\n".encode()
            + gzip.compress(CHAT),
            id="gzip",
        ),
        pytest.param(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + CHAT, id="close-delimited"),
    ],
)
async def test_reply_framings(server: RawServer, raw: bytes) -> None:
    server.raw = raw
    server.close_after_reply = b"close" in raw
    async with new_client() as client:
        for _ in range(2):
            reply = await post_json(client, server.url + "/chat/completions", {"x": 1})
            assert reply["choices"][0]["message"]["content"] == '{"a": 1}'


async def test_a_malformed_or_cut_off_reply_is_an_http_error(server: RawServer) -> None:
    async with new_client() as client:
        server.raw = b"HTTX/9 nonsense\r\n\r\n"
        with pytest.raises(HTTPError, match="not valid HTTP"):
            await post_json(client, server.url + "/chat/completions", {})
        server.raw = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}"  # then the server hangs up
        server.close_after_reply = True
        with pytest.raises(HTTPError):
            await post_json(client, server.url + "/chat/completions", {})


async def test_a_redirect_to_another_origin_carries_no_credentials(server: RawServer) -> None:
    async with RawServer() as other:
        server.raw = (
            f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {other.url}/chat/completions\r\n"
            "Content-Length: 0\r\n\r\n"
        ).encode()
        async with new_client() as client:
            reply = await post_json(client, server.url + "/chat/completions", {"x": 1})
        assert reply["choices"][0]["message"]["content"] == '{"a": 1}'
        moved = other.seen[0]
        assert moved["line"] == "POST /v1/chat/completions HTTP/1.1" and json.loads(moved["body"]) == {"x": 1}
        assert (
            "authorization" not in moved["headers"]
            and server.seen[0]["headers"]["authorization"] == "Bearer k"
        )


async def test_tls_endpoint() -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(server_ctx)
    async with RawServer(tls=server_ctx) as tls_server:
        client_ctx = ssl.create_default_context()
        ca.configure_trust(client_ctx)
        async with JsonClient({"Content-Type": "application/json"}, lambda: client_ctx) as client:
            reply = await post_json(client, tls_server.url + "/chat/completions", {"x": 1})
            again = await post_json(client, tls_server.url + "/chat/completions", {"x": 2})
        assert reply == again and reply["choices"][0]["message"]["content"] == '{"a": 1}'
        assert tls_server.connections == 1
        # the default context (httpx2's, as for a real https endpoint) offers only HTTP/1.1 in ALPN,
        # so a server that prefers HTTP/2 still answers in HTTP/1.1
        server_ctx.set_alpn_protocols(["h2", "http/1.1"])
        default_ctx = default_tls_context()
        ca.configure_trust(default_ctx)
        async with JsonClient({"Content-Type": "application/json"}, lambda: default_ctx) as client:
            reply = await post_json(client, tls_server.url + "/chat/completions", {"x": 3})
            conn = next(iter(client._open))
            assert conn.transport.get_extra_info("ssl_object").selected_alpn_protocol() == "http/1.1"
        assert reply["choices"][0]["message"]["content"] == '{"a": 1}'
        # a certificate the client does not trust is a connection error
        async with JsonClient({}, ssl.create_default_context) as strict:
            with pytest.raises(HTTPError, match="cannot connect"):
                await post_json(strict, tls_server.url + "/chat/completions", {})


async def test_proxies_in_the_environment_use_httpx(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with new_client() as client:
        assert isinstance(client, HttpxJsonClient)
        await post_json(client, server.url + "/chat/completions", {})  # NO_PROXY: straight there
    assert len(server.requests) == 1
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # a proxy that refuses: httpx's error, as ours
    monkeypatch.setenv("NO_PROXY", "")
    async with new_client() as client:
        with pytest.raises(HTTPError):
            await post_json(client, server.url + "/chat/completions", {})


def test_urls_are_parsed_once_and_strictly() -> None:
    t = parse_target("https://example.com/v1/chat/completions").with_params({"api-version": "2024-06-01"})
    assert (t.scheme, t.host, t.port, t.path) == (
        "https",
        "example.com",
        443,
        "/v1/chat/completions?api-version=2024-06-01",
    )
    assert t.host_header == "example.com" and parse_target("http://[::1]:8080/v1").host_header == "[::1]:8080"
    assert parse_target("http://localhost:8000/a b").path == "/a%20b"
    with pytest.raises(ValueError, match="scheme"):
        parse_target("ftp://example.com/")
    with pytest.raises(ValueError, match="no host"):
        parse_target("http:///v1")
