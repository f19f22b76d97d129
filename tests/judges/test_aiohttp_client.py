"""The provider's HTTP client (:class:`ragmeter.judges.providers.aiohttp_client.AiohttpClient`),
against a raw HTTP/1.1 server on 127.0.0.1 that this test drives byte by byte, so that each quirk
of a real server can be staged: keep-alive reuse, servers that close kept-alive connections,
timeouts, connect errors, chunked, gzip and close-delimited replies, malformed and cut-off
replies, redirects to another origin, TLS, proxies from the environment."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import os
import ssl
import sys
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from helpers.proxy import ForwardProxy
from helpers.server import FakeOpenAIServer
from ragmeter.errors import ConfigError, TransportError, Unreachable
from ragmeter.judges.providers.aiohttp_client import AiohttpClient
from ragmeter.judges.providers.http import (
    ConnectError,
    HTTPError,
    HTTPTimeout,
    Proxies,
    parse_target,
    post_json,
    request_headers,
)
from ragmeter.judges.providers.openai_compat import OpenAICompatibleProvider
from ragmeter.judges.types import ChatRequest, Message

CHAT = json.dumps({"choices": [{"message": {"content": '{"a": 1}'}, "finish_reason": "stop"}]}).encode()
NO_PROXIES = Proxies(urls={})


class RawServer:
    """HTTP/1.1 by hand. ``delay_s`` before each reply, ``close_after_reply`` (no keep-alive, and
    no ``Connection: close`` header either: the client must notice the close itself), ``body``
    (the reply; default a chat completion), ``raw`` (the whole reply, bytes as they are),
    ``drop_reused`` (that many times, a request that arrives on a kept-alive connection is read
    and the connection closed without a reply, as a server does whose idle limit just ran out),
    ``drop_all`` (every request: read, then hang up). Records connections, and each request's
    line, headers and body."""

    def __init__(self, *, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self.delay_s = 0.0
        self.close_after_reply = False
        self.body: bytes | None = None
        self.raw: bytes | None = None
        self.drop_reused = 0
        self.drop_all = False
        self.connections = 0
        self.alpn: list[str | None] = []  # the protocol each TLS connection settled on
        self.requests: list[dict[str, Any]] = []
        self.seen: list[dict[str, Any]] = []
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
        tls = writer.get_extra_info("ssl_object")
        if tls is not None:
            self.alpn.append(tls.selected_alpn_protocol())
        buf, served = b"", 0
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = await reader.read(65536)
                    if not chunk:
                        return
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
                    buf += chunk
                body, buf = buf[:length], buf[length:]
                self.seen.append({"line": lines[0], "headers": headers, "body": body})
                if body:
                    self.requests.append(json.loads(body))
                served += 1
                if self.drop_all or (served > 1 and self.drop_reused > 0):
                    self.drop_reused -= 0 if self.drop_all else 1
                    return  # hang up without a reply
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


def new_client(name: str = "openai-compatible", **kwargs: Any) -> AiohttpClient:
    return AiohttpClient(request_headers(name, "k", {}), **{"proxies": NO_PROXIES, **kwargs})


async def chat(client: AiohttpClient, url: str, body: dict[str, Any], **kwargs: Any) -> Any:
    return await post_json(client, url + "/chat/completions", body, **kwargs)


async def test_requests_share_kept_alive_connections(server: RawServer) -> None:
    async with new_client() as client:
        for i in range(5):
            reply = await chat(client, server.url, {"i": i, "pad": "x" * 2000})
            assert reply["choices"][0]["message"]["content"] == '{"a": 1}'
        assert server.connections == 1  # one connection, kept alive and reused
        await asyncio.gather(*(chat(client, server.url, {"i": i}) for i in range(8)))
    assert [r["i"] for r in server.requests[:5]] == [0, 1, 2, 3, 4]
    assert server.connections <= 8  # never one per request
    line, headers = server.seen[0]["line"], server.seen[0]["headers"]
    assert line == "POST /v1/chat/completions HTTP/1.1" and headers["authorization"] == "Bearer k"
    assert headers["host"].startswith("127.0.0.1:") and headers["content-type"] == "application/json"
    assert headers["accept-encoding"] == "gzip, deflate" and headers["user-agent"].startswith("ragmeter/")
    assert "cookie" not in headers


async def test_many_in_flight_are_not_capped_by_the_client(server: RawServer) -> None:
    server.delay_s = 0.2  # all 150 wait at once: a pool cap would hold some back
    async with new_client() as client:
        await asyncio.gather(*(chat(client, server.url, {"i": i}) for i in range(150)))
    assert server.connections == 150


async def test_a_server_that_closes_idle_connections_is_noticed(server: RawServer) -> None:
    server.close_after_reply = True
    async with new_client() as client:
        for i in range(3):
            await chat(client, server.url, {"i": i})
            await asyncio.sleep(0.05)  # the close reaches the client before the next request
    assert server.connections == 3 and len(server.requests) == 3


async def test_a_kept_alive_connection_closed_by_the_server_is_retried_once_on_a_new_one(
    server: RawServer,
) -> None:
    server.drop_reused = 1  # the second request meets a connection the server then hangs up
    async with new_client() as client:
        first = await chat(client, server.url, {"i": 0})
        second = await chat(client, server.url, {"i": 1})
    assert first == second
    assert [r["i"] for r in server.requests] == [0, 1, 1] and server.connections == 2


async def test_closing_races_with_the_next_request_and_nothing_is_lost(server: RawServer) -> None:
    server.close_after_reply = True
    async with new_client() as client:
        for i in range(4):  # no pause: the next request may find the connection already closed
            await chat(client, server.url, {"i": i})
    assert [r["i"] for r in server.requests] == [0, 1, 2, 3]  # each answered once, none lost


async def test_a_server_that_never_answers_is_an_http_error_after_one_resend(server: RawServer) -> None:
    server.drop_all = True
    async with new_client() as client:
        with pytest.raises(HTTPError, match="closed before the reply") as info:
            await chat(client, server.url, {"i": 0})
    assert not isinstance(info.value, HTTPTimeout) and len(server.requests) == 2


async def test_read_timeout_is_an_http_timeout_and_the_provider_s_transport_error(server: RawServer) -> None:
    server.delay_s = 1.0
    async with new_client() as client:
        with pytest.raises(HTTPTimeout, match="no reply"):
            await chat(client, server.url, {}, timeout_s=0.1)
    provider = OpenAICompatibleProvider("m", base_url=server.url, timeout_s=0.1, structured="none")
    request = ChatRequest(messages=(Message("user", "hi"),))
    try:
        with pytest.raises(TransportError, match="timed out"):
            await provider.generate(request)
    finally:
        await provider.aclose()


async def test_connect_error_is_an_http_error_and_the_provider_s_transport_error() -> None:
    """A refused connection says so in plain words: a ConnectError, and the provider's Unreachable
    (a TransportError, which the client stops the run on before the endpoint's first reply)."""
    async with RawServer() as gone:
        url = gone.url
    async with new_client() as client:
        with pytest.raises(ConnectError, match="was refused: no server listens there") as info:
            await chat(client, url, {})
    assert isinstance(info.value, HTTPError) and not isinstance(info.value, HTTPTimeout)
    provider = OpenAICompatibleProvider("m", base_url=url, structured="none")
    try:
        with pytest.raises(Unreachable, match=r"connection error: the connection to .* was refused") as e:
            await provider.generate(ChatRequest(messages=(Message("user", "hi"),)))
        assert isinstance(e.value, TransportError) and e.value.endpoint == url
    finally:
        await provider.aclose()


async def test_a_name_that_does_not_resolve_is_said_plainly() -> None:
    async with new_client() as client:
        with pytest.raises(ConnectError, match=r"the host name 'no-such-host\.invalid' does not resolve"):
            await chat(client, "http://no-such-host.invalid:8000/v1", {})


async def test_a_large_reply_arrives_whole(server: RawServer) -> None:
    text = "y" * 3_000_000
    server.body = json.dumps({"choices": [{"message": {"content": text}}]}).encode()
    async with new_client() as client:
        reply = await chat(client, server.url, {})
    assert reply["choices"][0]["message"]["content"] == text


def _chunked(*parts: bytes) -> bytes:
    return b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in parts) + b"0\r\n\r\n"


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + _chunked(CHAT[:10], CHAT[10:]),
            id="1xx-then-chunked",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
            + f"Content-Length: {len(gzip.compress(CHAT))}\r\n\r\n".encode()
            + gzip.compress(CHAT),
            id="gzip",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
            + _chunked(gzip.compress(CHAT)[:7], gzip.compress(CHAT)[7:]),
            id="gzip-chunked",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n"
            + f"Content-Length: {len(zlib.compress(CHAT))}\r\n\r\n".encode()
            + zlib.compress(CHAT),
            id="deflate",
        ),
        pytest.param(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + CHAT, id="close-delimited"),
    ],
)
async def test_reply_framings(server: RawServer, raw: bytes) -> None:
    server.raw = raw
    server.close_after_reply = b"close" in raw
    async with new_client() as client:
        for _ in range(2):
            reply = await chat(client, server.url, {"x": 1})
            assert reply["choices"][0]["message"]["content"] == '{"a": 1}'


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        pytest.param(b"HTTX/9 nonsense\r\n\r\n", "not valid HTTP", id="not-http"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}", "cut off", id="cut-off-content-length"
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}", "cut off", id="cut-off-chunked"
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!",
            "cannot be decoded",
            id="bad-gzip",
        ),
    ],
)
async def test_a_malformed_or_cut_off_reply_is_an_http_error(server: RawServer, raw: bytes, match: str) -> None:
    server.raw = raw
    server.close_after_reply = True  # then the server hangs up
    async with new_client() as client:
        with pytest.raises(HTTPError, match=match) as info:
            await chat(client, server.url, {})
    assert not isinstance(info.value, HTTPTimeout)


@pytest.mark.parametrize("name", ["openai-compatible", "azure"])
async def test_a_redirect_to_another_origin_carries_no_credentials(server: RawServer, name: str) -> None:
    credential = "authorization" if name == "openai-compatible" else "api-key"
    async with RawServer() as other:
        server.raw = (
            f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {other.url}/chat/completions\r\n"
            "Content-Length: 0\r\n\r\n"
        ).encode()
        async with new_client(name) as client:
            reply = await chat(client, server.url, {"x": 1})
        assert reply["choices"][0]["message"]["content"] == '{"a": 1}'
        moved = other.seen[0]  # 307: the same method and body, elsewhere
        assert moved["line"] == "POST /v1/chat/completions HTTP/1.1" and json.loads(moved["body"]) == {"x": 1}
        assert server.seen[0]["headers"][credential] == ("k" if name == "azure" else "Bearer k")
        assert credential not in moved["headers"] and moved["headers"]["content-type"] == "application/json"


async def test_a_303_is_followed_as_a_get_with_credentials_within_the_origin_up_to_a_limit(
    server: RawServer,
) -> None:
    async with new_client("azure") as client:
        server.raw = b"HTTP/1.1 303 See Other\r\nLocation: /v1/elsewhere\r\nContent-Length: 0\r\n\r\n"
        with pytest.raises(HTTPError, match="20 redirects in a row"):
            await chat(client, server.url, {"x": 1})
    assert server.seen[1]["line"] == "GET /v1/elsewhere HTTP/1.1" and server.seen[1]["body"] == b""
    assert server.seen[1]["headers"]["api-key"] == "k"


def _tls_pair() -> tuple[Any, ssl.SSLContext]:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(server_ctx)
    return ca, server_ctx


TLS_CLIENT = """
import asyncio, json, sys
from ragmeter.judges.providers.aiohttp_client import AiohttpClient
from ragmeter.judges.providers.http import post_json, request_headers

async def main():
    async with AiohttpClient(request_headers("openai-compatible", "k", {})) as client:
        replies = [await post_json(client, sys.argv[1] + "/chat/completions", {"x": i}) for i in range(2)]
    print(json.dumps(replies))

asyncio.run(main())
"""


async def test_tls_with_the_system_trust_store_or_the_bundle_ssl_cert_file_names(tmp_path: Path) -> None:
    ca, server_ctx = _tls_pair()
    server_ctx.set_alpn_protocols(["h2", "http/1.1"])  # a server that prefers HTTP/2
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    async with RawServer(tls=server_ctx) as tls_server:
        # the system's trust store does not know this CA: a connection error, not a timeout
        async with new_client() as strict:
            with pytest.raises(ConnectError, match=r"TLS with localhost:.* failed: .*CERTIFICATE_VERIFY_FAILED") as info:
                await chat(strict, tls_server.url, {})
        assert not isinstance(info.value, HTTPTimeout) and tls_server.connections == 0
        # SSL_CERT_FILE names a bundle that does: a process whose environment sets it is served (the
        # client reads the variable once, when it is made: hence a process of its own)
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        env["SSL_CERT_FILE"] = str(tmp_path / "ca.pem")
        env.pop("SSL_CERT_DIR", None)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            TLS_CLIENT,
            tls_server.url,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()
        first, again = json.loads(out)
        assert first == again and first["choices"][0]["message"]["content"] == '{"a": 1}'
        assert tls_server.connections == 1  # kept alive over TLS
        # HTTP/1.1 only in ALPN: had h2 been offered, this server would have chosen it
        assert tls_server.alpn == ["http/1.1"]


def test_proxies_are_read_from_the_environment_once(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)
    assert Proxies.from_environment().url_for("https", "api.openai.com") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("no_proxy", "localhost,.corp.example,10.1.2.3")
    proxies = Proxies.from_environment()
    monkeypatch.delenv("HTTPS_PROXY")  # read once: later changes do not move a made client
    assert proxies.url_for("https", "api.openai.com") == "http://proxy.internal:3128"
    assert proxies.url_for("http", "api.openai.com") is None  # HTTP_PROXY is not set
    assert proxies.url_for("https", "llm.corp.example") is None and proxies.url_for("https", "10.1.2.3") is None
    monkeypatch.setenv("ALL_PROXY", "http://all.internal:8080")
    assert Proxies.from_environment().url_for("http", "example.com") == "http://all.internal:8080"


async def test_requests_go_through_the_proxy_the_environment_names(
    monkeypatch: pytest.MonkeyPatch, fake_openai_server: FakeOpenAIServer
) -> None:
    with ForwardProxy(credentials="user:secret") as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url.replace("http://", "http://user:secret@"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        async with AiohttpClient(request_headers("openai-compatible", "k", {})) as client:
            for i in range(3):
                reply = await chat(client, fake_openai_server.url, {"model": "m", "messages": [], "i": i})
                assert reply["choices"][0]["message"]["role"] == "assistant"
        assert proxy.forwarded == [f"{fake_openai_server.url}/chat/completions"] * 3
        assert proxy.authorizations == ["Basic " + base64.b64encode(b"user:secret").decode()] * 3
        assert fake_openai_server.total_requests == 3 and fake_openai_server.authorizations == ["Bearer k"] * 3
        # NO_PROXY: straight there
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        async with AiohttpClient(request_headers("openai-compatible", "k", {})) as client:
            await chat(client, fake_openai_server.url, {"model": "m", "messages": []})
        assert len(proxy.forwarded) == 3 and fake_openai_server.total_requests == 4


async def test_https_goes_through_the_proxy_in_a_tunnel(monkeypatch: pytest.MonkeyPatch) -> None:
    ca, server_ctx = _tls_pair()
    trusting = ssl.create_default_context()
    ca.configure_trust(trusting)
    with ForwardProxy(credentials="user:secret") as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url.replace("http://", "http://user:secret@"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        headers = request_headers("azure", "azure-key", {"X-Api-Key": "gateway-key"})
        async with RawServer(tls=server_ctx) as tls_server, AiohttpClient(headers, tls=lambda: trusting) as client:
            reply = await chat(client, tls_server.url, {"x": 1})
            await chat(client, tls_server.url, {"x": 2})
            port = tls_server.url.split(":")[2].split("/")[0]
        assert reply["choices"][0]["message"]["content"] == '{"a": 1}'
        assert proxy.tunnels == [f"localhost:{port}"] and tls_server.connections == 1  # one tunnel, kept alive
        assert tls_server.seen[0]["headers"]["api-key"] == "azure-key"  # inside the tunnel
        # the proxy sees where the tunnel goes and its own credentials, and none of the request's headers
        (connect,) = proxy.tunnel_headers
        assert connect.pop("proxy-authorization") == "Basic " + base64.b64encode(b"user:secret").decode()
        assert "key" not in json.dumps(connect) and "azure" not in json.dumps(connect)


async def test_a_proxy_that_refuses_the_tunnel_is_an_http_error() -> None:
    with ForwardProxy(credentials="user:secret") as proxy:
        proxies = Proxies(urls={"https": proxy.url})  # no credentials in the URL
        async with AiohttpClient({}, proxies=proxies) as client:
            with pytest.raises(HTTPError, match="the proxy answered HTTP 407") as info:
                await chat(client, "https://localhost:9/v1", {})
    assert not isinstance(info.value, HTTPTimeout) and proxy.tunnels == ["localhost:9"]


def test_a_proxy_the_client_cannot_speak_to_is_a_config_error_when_the_judge_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(ConfigError, match=r"judge openai-compatible:m: .*socks5:// proxy for http:// requests"):
        OpenAICompatibleProvider("m", base_url="http://127.0.0.1:9/v1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # not used for this endpoint: fine
    OpenAICompatibleProvider("m", base_url="http://127.0.0.1:9/v1")
    assert Proxies.from_environment().url_for("http", "127.0.0.1") is None
    monkeypatch.setenv("HTTP_PROXY", "proxy.internal:3128")  # no scheme: http://
    assert Proxies.from_environment().url_for("http", "example.com") == "http://proxy.internal:3128"


def test_urls_are_parsed_once_and_strictly() -> None:
    t = parse_target("https://Example.com/v1/chat/completions").with_params({"api-version": "2024-06-01"})
    assert (t.url, t.scheme, t.host, t.port) == (
        "https://Example.com/v1/chat/completions?api-version=2024-06-01",
        "https",
        "example.com",
        443,
    )
    assert parse_target("http://bücher.example:8000/v1").host == "xn--bcher-kva.example"
    with pytest.raises(ValueError, match="scheme"):
        parse_target("ftp://example.com/")
    with pytest.raises(ValueError, match="no host"):
        parse_target("http:///v1")
