"""The HTTP side of :mod:`ragmeter.judges.providers.openai_compat`: one client per event loop,
JSON in and out, nothing else.

The client is :class:`~ragmeter.judges.providers.netstream.JsonClient` (HTTP/1.1 over asyncio's own
transports, read by ``h11``), unless the environment names a proxy (``HTTPS_PROXY``,
``ALL_PROXY``...): then ``httpx2`` (the ``httpx`` line the ``openai`` SDK itself sends with), which
honours it and ``NO_PROXY``, behind the same small interface (:class:`HttpxJsonClient`). Both raise
:class:`~ragmeter.judges.providers.netstream.HTTPError` / ``HTTPTimeout`` for a request without a
usable reply, and return a :class:`~ragmeter.judges.providers.netstream.Reply`.

The provider used the ``openai`` SDK for this; importing it cost about 0.45 s of start-up and each
request about 7 ms of CPU in its models and validation, for a POST of a JSON body. What the SDK did
on the wire is kept: the same URLs (Azure: ``{endpoint}/openai/deployments/{deployment}/...`` with
``?api-version=`` and an ``api-key`` header; elsewhere ``{base_url}/chat/completions`` with
``Authorization: Bearer KEY``), redirects followed, its default timeout (600 s, 5 s to connect)
when none is set, and its reading of replies: an error reply becomes a :class:`StatusError` that
carries the body the way the SDK's ``APIStatusError`` did (the JSON body's ``error`` object, else
the whole JSON body, else the text), a JSON content type with a broken body raises ``ValueError``,
and another content type gives the parsed JSON when it parses, else the text.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

from ragmeter import __version__
from ragmeter.judges.providers.netstream import (
    KEEPALIVE_EXPIRY_S,
    Headers,
    HTTPError,
    HTTPTimeout,
    JsonClient,
    Reply,
    Target,
    Timeouts,
    parse_target,
)

#: the SDK's default when no timeout is given: 600 s overall, 5 s to connect
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_CONNECT_TIMEOUT_S = 5.0


def timeouts_for(timeout_s: float | None) -> Timeouts:
    """The limits of one request: ``timeout_s`` for each phase, or the SDK's defaults."""
    if timeout_s is None:
        return Timeouts(connect=DEFAULT_CONNECT_TIMEOUT_S, write=DEFAULT_TIMEOUT_S, read=DEFAULT_TIMEOUT_S)
    return Timeouts(connect=timeout_s, write=timeout_s, read=timeout_s)


class PostClient(Protocol):
    """What the provider needs of an HTTP client."""

    async def post(self, target: Target, content: bytes, timeouts: Timeouts) -> Reply: ...

    async def aclose(self) -> None: ...


class StatusError(Exception):
    """An HTTP reply with status >= 400, read as the SDK read it (see the module docstring).

    ``status_code``, ``body`` (the ``error`` object of a JSON body, the JSON body, or the text),
    ``response`` (its ``headers`` and ``text``) and ``message``: what
    :mod:`ragmeter.judges.providers.replies` reads.
    """

    def __init__(self, response: Reply) -> None:
        self.response = response
        self.status_code = response.status_code
        text = response.text.strip()
        body: Any = text
        try:
            body = json.loads(text)
            message = f"Error code: {self.status_code} - {body}"
        except ValueError:
            message = text or f"Error code: {self.status_code}"
        if isinstance(body, Mapping):
            body = body.get("error", body)
        self.body = body
        self.message = message
        super().__init__(message)


def auth_headers(name: str, api_key: str) -> dict[str, str]:
    """``api-key`` for Azure OpenAI; ``Authorization: Bearer`` (plus OpenAI's organisation and
    project headers when ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID`` are set, as the SDK sent them)
    for the rest."""
    if name == "azure":
        return {"api-key": api_key}
    headers = {"Authorization": f"Bearer {api_key}"}
    org, project = os.environ.get("OPENAI_ORG_ID"), os.environ.get("OPENAI_PROJECT_ID")
    if org:
        headers["OpenAI-Organization"] = org
    if project:
        headers["OpenAI-Project"] = project
    return headers


class HttpxJsonClient:
    """``httpx2``'s client, for an environment that names a proxy, behind :class:`PostClient`: the
    same replies and errors as :class:`~ragmeter.judges.providers.netstream.JsonClient`."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        import httpx2 as httpx

        self._httpx = httpx
        self._client = httpx.AsyncClient(
            headers=dict(headers),
            timeout=httpx.Timeout(DEFAULT_TIMEOUT_S, connect=DEFAULT_CONNECT_TIMEOUT_S),
            limits=httpx.Limits(
                max_connections=None, max_keepalive_connections=None, keepalive_expiry=KEEPALIVE_EXPIRY_S
            ),
            follow_redirects=True,
        )

    async def post(self, target: Target, content: bytes, timeouts: Timeouts) -> Reply:
        httpx = self._httpx
        limits = httpx.Timeout(timeouts.read, connect=timeouts.connect, write=timeouts.write, pool=timeouts.read)
        try:
            response = await self._client.post(target.url, content=content, timeout=limits)
        except httpx.TimeoutException as e:
            raise HTTPTimeout(f"{target.url}: {type(e).__name__}: {e}") from e
        except httpx.HTTPError as e:
            raise HTTPError(f"{target.url}: {type(e).__name__}: {e}") from e
        headers = Headers([(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.multi_items()])
        return Reply(response.status_code, headers, response.content, str(response.url))

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> HttpxJsonClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def default_tls_context() -> Any:
    """The TLS context ``httpx2`` builds by default (the system's trust store, ``SSL_CERT_FILE``
    and ``SSL_CERT_DIR`` honoured), offering HTTP/1.1 only in ALPN (as ``httpcore2`` does for an
    HTTP/1.1 connection): imported only for an ``https://`` endpoint."""
    import httpx2 as httpx

    context = httpx.create_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


def _proxies_configured() -> bool:
    """Whether ``urllib.request.getproxies()`` names a proxy: on Linux that is the ``*_proxy``
    environment variables alone, looked at here without importing ``urllib.request`` (about 12 ms
    on the way to the first request); elsewhere (macOS and Windows read system settings too) it
    is asked."""
    if sys.platform.startswith("linux") and not any(
        key.lower().endswith("_proxy") and value for key, value in os.environ.items()
    ):
        return False
    import urllib.request

    return bool(urllib.request.getproxies())


def make_client(name: str, api_key: str, default_headers: Mapping[str, str]) -> PostClient:
    """The client for one event loop (see the module docstring). The client keeps every
    connection it opened alive and sets no cap of its own: the number in flight is bounded by
    :class:`~ragmeter.judges.client.ModelClient` (the run's concurrency)."""
    headers = {
        "Accept": "application/json",
        "Accept-Encoding": "gzip, deflate",
        "Content-Type": "application/json",
        "User-Agent": f"ragmeter/{__version__}",
        **auth_headers(name, api_key),
        **default_headers,
    }
    if _proxies_configured():
        return HttpxJsonClient(headers)
    return JsonClient(headers, default_tls_context)


def endpoint_url(name: str, base_url: str, path: str, model: str) -> str:
    """Where ``path`` (``/chat/completions``, ``/embeddings``) goes: Azure routes by deployment."""
    if name != "azure":
        return f"{base_url}{path}"
    root = f"{base_url}/openai"
    if "/deployments" in urlsplit(root).path:
        return f"{root}{path}"
    return f"{root}/deployments/{quote(model, safe='')}{path}"


def read_reply(response: Reply) -> Any:
    """The parsed body of a 2xx reply, or its text when it is not JSON and does not parse.

    Raises :class:`StatusError` for status >= 400 and ``ValueError`` for a body declared JSON
    that does not parse."""
    if response.status_code >= 400:
        raise StatusError(response)
    content_type = response.headers.get("content-type", "*").split(";")[0].strip()
    if content_type.endswith("json"):
        return json.loads(response.content)
    try:
        return json.loads(response.content)
    except ValueError:
        return response.text


async def post_json(
    client: PostClient,
    url: str | Target,
    body: Mapping[str, Any],
    *,
    timeout_s: float | None = None,
) -> Any:
    """POST ``body`` as JSON and return the reply read by :func:`read_reply`. A request without a
    usable reply raises :class:`~ragmeter.judges.providers.netstream.HTTPError` (``HTTPTimeout``
    when a limit ran out)."""
    target = parse_target(url) if isinstance(url, str) else url
    response = await client.post(
        target,
        json.dumps(body, ensure_ascii=False).encode("utf-8"),
        timeouts_for(timeout_s),
    )
    return read_reply(response)


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "HTTPError",
    "HTTPTimeout",
    "HttpxJsonClient",
    "PostClient",
    "StatusError",
    "auth_headers",
    "endpoint_url",
    "make_client",
    "parse_target",
    "post_json",
    "read_reply",
    "timeouts_for",
]
