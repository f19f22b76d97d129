"""A forward HTTP proxy on 127.0.0.1 for tests: what a company's proxy does for a client whose
environment names it (``HTTP_PROXY`` / ``HTTPS_PROXY``).

- ``http://`` targets come in absolute form (``POST http://host:port/path HTTP/1.1``) and are
  forwarded to their host, the reply relayed back; each target is recorded in ``forwarded``, its
  ``Proxy-Authorization`` header in ``authorizations``.
- ``https://`` targets come as ``CONNECT host:port``: the proxy opens a tunnel and relays bytes both
  ways without reading them; each is recorded in ``tunnels``, its headers in ``tunnel_headers``.

Requests that are not proxy requests (a plain ``POST /path``) are answered 400: a client that
forgets the proxy and sends straight to it is seen at once.
"""

from __future__ import annotations

import base64
import http.client
import select
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer", "upgrade"}


class ForwardProxy:
    """``credentials`` (``"user:password"``): what a client must send as ``Proxy-Authorization``
    (Basic); without it, or with others, the proxy answers 407."""

    def __init__(self, credentials: str | None = None) -> None:
        self.credentials = credentials
        self.forwarded: list[str] = []
        self.tunnels: list[str] = []
        self.tunnel_headers: list[dict[str, str]] = []  # the headers of each CONNECT
        self.not_proxied: list[str] = []
        self.authorizations: list[str | None] = []  # the Proxy-Authorization of each request
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "proxy not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> ForwardProxy:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _note(self, where: list[Any], what: Any) -> None:
        with self._lock:
            where.append(what)


def _make_handler(proxy: ForwardProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        timeout = 30

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _refused(self) -> bool:
            """Answer 407 when the proxy wants credentials that the request does not carry."""
            if proxy.credentials is None:
                return False
            expected = "Basic " + base64.b64encode(proxy.credentials.encode()).decode()
            if self.headers.get("Proxy-Authorization") == expected:
                return False
            self.close_connection = True
            self._reply(407, b"proxy authentication required", {"Proxy-Authenticate": 'Basic realm="test"'})
            return True

        def _forward(self) -> None:
            if self._refused():
                return
            target = urlsplit(self.path)
            if target.scheme != "http" or not target.hostname:
                proxy._note(proxy.not_proxied, self.path)
                self._reply(400, b"not a proxy request", {"Content-Type": "text/plain"})
                return
            proxy._note(proxy.forwarded, self.path)
            with proxy._lock:
                proxy.authorizations.append(self.headers.get("Proxy-Authorization"))
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
            try:
                path = target.path + (f"?{target.query}" if target.query else "")
                upstream.request(self.command, path or "/", body=body, headers=headers)
                reply = upstream.getresponse()
                data = reply.read()
                relayed = {
                    k: v
                    for k, v in reply.getheaders()
                    if k.lower() not in _HOP_BY_HOP and k.lower() not in ("content-length", "transfer-encoding")
                }
                self._reply(reply.status, data, relayed)
            finally:
                upstream.close()

        def _reply(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = _forward
        do_GET = _forward

        def do_CONNECT(self) -> None:
            host, _, port = self.path.rpartition(":")
            proxy._note(proxy.tunnels, self.path)
            proxy._note(proxy.tunnel_headers, {k.lower(): v for k, v in self.headers.items()})
            if self._refused():
                return
            try:
                upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=30)
            except OSError:
                self._reply(502, b"cannot reach the target", {"Content-Type": "text/plain"})
                return
            self.send_response(200, "Connection established")
            self.end_headers()
            self.close_connection = True
            client = self.connection
            try:
                while True:
                    readable, _, _ = select.select([client, upstream], [], [], 30)
                    if not readable:
                        return
                    for sock in readable:
                        data = sock.recv(65536)
                        if not data:
                            return
                        (upstream if sock is client else client).sendall(data)
            except OSError:
                return
            finally:
                upstream.close()

    return Handler
