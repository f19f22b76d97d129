"""The provider's HTTP client (:class:`~ragmeter.judges.providers.http.PostClient`) on ``aiohttp``.

One :class:`AiohttpClient` per event loop and provider, one ``aiohttp.ClientSession`` in it:

- **Connections** are kept alive for :data:`KEEPALIVE_EXPIRY_S` and reused, with no cap on their
  number: how many requests are in flight is bounded by
  :class:`~ragmeter.judges.client.ModelClient` (the run's concurrency), so a request never waits
  for a connection. A request that meets a kept-alive connection the server has just closed (the
  server hangs up before any byte of the reply) is sent once more, at once, on a new connection:
  aiohttp does that by itself only for idempotent methods, and a judge's POST is safe to send
  again (the client would retry it anyway, after a backoff).
- **TLS**: :func:`default_tls_context`, the system's trust store (see there), taken once, when the
  first ``https://`` request goes out; HTTP/1.1 only in ALPN.
- **Proxies**: :class:`~ragmeter.judges.providers.http.Proxies`, read from the environment once
  (by the provider when it is made; by the client when it is made without them).
  aiohttp's own ``trust_env`` stays off: it would read the environment and ``~/.netrc`` again at
  every request, in a worker thread each time, and a ``.netrc`` entry for the endpoint's host
  would clash with the ``Authorization`` header.
- **Redirects** are followed as aiohttp follows them (a 301/302 after a POST and a 303 become a GET
  without a body, 307/308 keep both; at most :data:`MAX_REDIRECTS`), and the credentials
  (:data:`CREDENTIAL_HEADERS`) are not sent to another origin: aiohttp drops ``Authorization``
  itself, the others (Azure's ``api-key``) are dropped by a client middleware.
- **Bodies**: ``gzip`` and ``deflate`` replies decoded by aiohttp; no cookies kept (judge requests
  are stateless).

Failures are :class:`~ragmeter.judges.providers.http.HTTPError` (connection refused or reset, TLS,
a malformed or cut-off reply, too many redirects) and its subclass ``HTTPTimeout`` (connecting or
waiting for the reply took longer than its limit), with aiohttp's error chained.
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from ragmeter.judges.providers.http import (
    ConnectError,
    HTTPError,
    HTTPTimeout,
    Proxies,
    Reply,
    Target,
    Timeouts,
)

#: how long an idle connection is kept for the next request (one that the server closed sooner is
#: met by the one resend)
KEEPALIVE_EXPIRY_S = 5.0
#: redirects followed for one request at most
MAX_REDIRECTS = 20
#: headers that carry credentials: not sent on a redirect to another origin
CREDENTIAL_HEADERS = ("Authorization", "Proxy-Authorization", "api-key", "x-api-key")


def default_tls_context() -> ssl.SSLContext | None:
    """The TLS context of ``https://`` endpoints: the system's trust store, which is what an
    administrator manages (a company's own root, a TLS-inspecting proxy's) and what the OS keeps up
    to date; ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name another bundle (e.g. ``certifi``'s, on a
    system without one). ``certifi``'s bundle is not the default: it knows none of a system's own
    roots. HTTP/1.1 only in ALPN, so a server that prefers HTTP/2 still answers in HTTP/1.1.

    On Linux and the BSDs that is aiohttp's own default context (returned as None):
    ``ssl.create_default_context()``, i.e. OpenSSL's default verify paths, which OpenSSL takes
    from ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when they are set, with HTTP/1.1 in ALPN, made once
    when aiohttp is imported (building another would load the certificates once more: 20-50 ms).
    On macOS and Windows, where Python's OpenSSL does not see the system's store, the OS's own
    verifier through ``truststore``, unless those variables name a bundle."""
    if sys.platform not in ("darwin", "win32"):
        return None
    return _macos_windows_tls_context()  # pragma: no cover - macOS, Windows


def _macos_windows_tls_context() -> ssl.SSLContext:  # pragma: no cover - macOS, Windows
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if cafile or capath:
        context = ssl.create_default_context(cafile=cafile or None, capath=capath or None)
    else:
        import truststore

        context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.set_alpn_protocols(["http/1.1"])
    return context


@dataclass(frozen=True)
class _Route:
    """How requests to one URL go out, worked out once."""

    url: URL
    headers: CIMultiDict[str]
    proxy: URL | None
    proxy_headers: Mapping[str, str] | None  # a CONNECT's (for https:// through a proxy)
    tls: ssl.SSLContext | bool


class AiohttpClient:
    """Kept-alive connections for POSTing JSON (see the module docstring).

    ``headers``: sent with every request (``Host`` and ``Content-Length`` are added).
    ``proxies``: the proxy settings (default: read from the environment now). ``tls``: a callable
    that returns the TLS context of ``https://`` targets (None: aiohttp's default), called once,
    when the first one is requested. Made, used and closed in one event loop.
    """

    def __init__(
        self,
        headers: Mapping[str, str],
        *,
        proxies: Proxies | None = None,
        tls: Callable[[], ssl.SSLContext | None] = default_tls_context,
    ) -> None:
        self._proxies = Proxies.from_environment() if proxies is None else proxies
        self._tls_factory = tls
        self._tls: ssl.SSLContext | bool | None = None  # True: aiohttp's default context
        self._routes: dict[str, _Route] = {}
        self._timeouts: dict[Timeouts, aiohttp.ClientTimeout] = {}
        self._home: set[URL] = set()  # the origins requests are sent to; redirects may lead elsewhere
        lower = {k.lower() for k in headers}
        middlewares: tuple[Any, ...] = ()
        # aiohttp drops Authorization itself on a redirect to another origin; the others need this
        if any(h.lower() in lower for h in CREDENTIAL_HEADERS if h != "Authorization"):
            middlewares = (self._credentials_stay_home,)
        # the headers go with each request, not as the session's defaults: aiohttp also sends its
        # defaults to a proxy (in a CONNECT too, which would show the proxy the API key)
        self._headers = CIMultiDict(headers)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, keepalive_timeout=KEEPALIVE_EXPIRY_S),
            cookie_jar=aiohttp.DummyCookieJar(),
            middlewares=middlewares,
        )

    async def _credentials_stay_home(self, req: aiohttp.ClientRequest, handler: Any) -> aiohttp.ClientResponse:
        if req.url.origin() not in self._home:  # a redirect led to another origin
            for name in CREDENTIAL_HEADERS:
                req.headers.popall(name, None)
        response: aiohttp.ClientResponse = await handler(req)
        return response

    def _route(self, target: Target) -> _Route:
        url = URL(target.url)
        tls: ssl.SSLContext | bool = True
        if target.scheme == "https":
            if self._tls is None:
                self._tls = self._tls_factory() or True
            tls = self._tls
        proxy: URL | None = None
        headers, proxy_headers = self._headers, None
        named = self._proxies.url_for(target.scheme, target.host)
        if named:
            proxy = URL(named)
            if proxy.user is not None:  # the proxy's user:password, as Proxy-Authorization
                login = f"{proxy.user}:{proxy.password or ''}".encode()
                auth = {"Proxy-Authorization": "Basic " + base64.b64encode(login).decode("ascii")}
                proxy = proxy.with_user(None)
                if target.scheme == "https":  # in the CONNECT that opens the tunnel
                    proxy_headers = auth
                else:  # in the request itself, which the proxy reads and forwards
                    headers = CIMultiDict({**self._headers, **auth})
        route = self._routes[target.url] = _Route(url, headers, proxy, proxy_headers, tls)
        self._home.add(url.origin())
        return route

    def _timeout(self, t: Timeouts) -> aiohttp.ClientTimeout:
        timeout = self._timeouts[t] = aiohttp.ClientTimeout(total=None, connect=t.connect, sock_read=t.read)
        return timeout

    async def post(self, target: Target, content: bytes, timeouts: Timeouts) -> Reply:
        """POST ``content`` (JSON) to ``target`` and return the whole reply, redirects followed."""
        route = self._routes.get(target.url) or self._route(target)
        timeout = self._timeouts.get(timeouts) or self._timeout(timeouts)
        for attempt in (1, 2):
            try:
                async with self._session.post(
                    route.url,
                    data=content,
                    headers=route.headers,
                    timeout=timeout,
                    proxy=route.proxy,
                    proxy_headers=route.proxy_headers,
                    ssl=route.tls,
                    max_redirects=MAX_REDIRECTS,
                ) as response:
                    body = await response.read()
                    url = str(response.url) if response.history else target.url
                    return Reply(response.status, response.headers, body, url)
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientConnectionResetError, aiohttp.ClientOSError) as e:
                if attempt == 1 and not isinstance(e, aiohttp.ClientConnectorError):
                    continue  # a kept-alive connection closed by the server: once more, on a new one
                raise _http_error(e, target) from e
            except asyncio.TimeoutError as e:
                raise _timeout_error(e, target, timeouts) from e
            except aiohttp.ClientError as e:
                raise _http_error(e, target) from e
            except OSError as e:  # pragma: no cover - aiohttp wraps these; kept for a bare one
                raise HTTPError(f"{target.url}: {e}") from e
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self._session.close()

    async def __aenter__(self) -> AiohttpClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _connect_cause(e: aiohttp.ClientConnectorError) -> str:
    """Why no connection opened, in plain words."""
    where = f"{e.host}:{e.port}"
    if isinstance(e, aiohttp.ClientConnectorDNSError):
        return f"the host name {e.host!r} does not resolve ({e.os_error})"
    if isinstance(e, (aiohttp.ClientConnectorCertificateError, aiohttp.ClientConnectorSSLError)):
        return f"TLS with {where} failed: {e.os_error if e.os_error else e}"
    if isinstance(e.os_error, ConnectionRefusedError):
        return f"the connection to {where} was refused: no server listens there"
    return f"cannot connect to {where}: {e.os_error}"


def _timeout_error(e: BaseException, target: Target, t: Timeouts) -> HTTPTimeout:
    if isinstance(e, aiohttp.ConnectionTimeoutError):
        return HTTPTimeout(f"connecting to {target.host}:{target.port} timed out after {t.connect} s")
    return HTTPTimeout(f"no reply from {target.url} within {t.read} s")


def _http_error(e: aiohttp.ClientError, target: Target) -> HTTPError:
    if isinstance(e, aiohttp.ClientConnectorError):
        return ConnectError(_connect_cause(e))
    if isinstance(e, (aiohttp.ServerDisconnectedError, aiohttp.ClientConnectionResetError, aiohttp.ClientOSError)):
        return HTTPError(f"{target.url}: the connection was closed before the reply came: {e}")
    if isinstance(e, aiohttp.TooManyRedirects):
        return HTTPError(f"{target.url}: {MAX_REDIRECTS} redirects in a row")
    if isinstance(e, aiohttp.ClientHttpProxyError):  # the proxy did not open the tunnel
        return HTTPError(f"{target.url}: the proxy answered HTTP {e.status} ({e.message}) to the CONNECT")
    if isinstance(e, aiohttp.ClientPayloadError):
        return HTTPError(f"{target.url}: the reply's body was cut off or cannot be decoded: {e}")
    if isinstance(e, aiohttp.ClientResponseError):  # the reply is not valid HTTP/1.1
        return HTTPError(f"{target.url}: the reply is not valid HTTP/1.1: {e.message}")
    return HTTPError(f"{target.url}: {type(e).__name__}: {e}")


__all__ = ["CREDENTIAL_HEADERS", "KEEPALIVE_EXPIRY_S", "MAX_REDIRECTS", "AiohttpClient", "default_tls_context"]
