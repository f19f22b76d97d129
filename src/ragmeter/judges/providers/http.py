"""The HTTP side of :mod:`ragmeter.judges.providers.openai_compat`: one ``AsyncClient`` of
``httpx2`` per event loop, JSON in and out, nothing else.

``httpx2`` is the ``httpx`` line the ``openai`` SDK itself sends with (same API, imported here as
``httpx``). Not ``httpx`` 0.28: its connection pool re-checks every connection on each request
(``httpcore`` 1.0), which at 64 requests in flight cost more CPU than the SDK did
(bench/runner_overhead.py: 10.7 s against 6.0 s of CPU for the same 600 requests; docs/performance.md).

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
import ssl
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx2 as httpx

from ragmeter import __version__

#: the SDK's default when no timeout is given: 600 s overall, 5 s to connect
DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=5.0)
#: how long an idle connection is kept for the next request (httpx's default)
KEEPALIVE_EXPIRY_S = 5.0


class StatusError(Exception):
    """An HTTP reply with status >= 400, read as the SDK read it (see the module docstring).

    ``status_code``, ``body`` (the ``error`` object of a JSON body, the JSON body, or the text),
    ``response`` (its ``headers`` and ``text``) and ``message``: what
    :mod:`ragmeter.judges.providers.replies` reads.
    """

    def __init__(self, response: httpx.Response) -> None:
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


class PooledTransport(httpx.AsyncHTTPTransport):
    """``httpx2``'s transport over :class:`~ragmeter.judges.providers.netstream.KeepAlivePool`
    (``httpcore2``'s HTTP/1.1 connections, kept alive 5 s, no cap on their number, on asyncio's own
    transports): the same requests, replies and errors as ``httpx2``'s own pool, for a fraction of
    its CPU (see :mod:`ragmeter.judges.providers.netstream`). ``ssl_context`` None: a TLS
    connection (an ``http://`` endpoint redirected to ``https://``) gets ``httpcore2``'s default
    context, the one ``httpx2`` would have built, when it is needed instead of at every start."""

    def __init__(self, ssl_context: ssl.SSLContext | None) -> None:
        # not super().__init__(): that builds the anyio pool (and a TLS context) only to drop them
        from ragmeter.judges.providers.netstream import KeepAlivePool

        self._pool = KeepAlivePool(ssl_context, KEEPALIVE_EXPIRY_S)  # type: ignore[assignment]


def make_client(name: str, api_key: str, default_headers: Mapping[str, str], base_url: str) -> httpx.AsyncClient:
    """The client for one event loop. The pool keeps every connection it opened alive and sets no
    cap of its own: the number in flight is bounded by :class:`~ragmeter.judges.client.ModelClient`
    (the run's concurrency), so the pool grows to exactly that many and a request never waits on it.

    The pool runs on :class:`PooledTransport`, unless the environment names a proxy
    (``HTTPS_PROXY``, ``ALL_PROXY``...): then ``httpx2``'s own transport, which honours it (and
    ``NO_PROXY``) as it always did."""
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": f"ragmeter/{__version__}",
        **auth_headers(name, api_key),
        **default_headers,
    }
    if urllib.request.getproxies():
        return httpx.AsyncClient(
            headers=headers,
            timeout=DEFAULT_TIMEOUT,
            limits=httpx.Limits(
                max_connections=None, max_keepalive_connections=None, keepalive_expiry=KEEPALIVE_EXPIRY_S
            ),
            follow_redirects=True,
        )
    tls = httpx.create_ssl_context() if base_url.lower().startswith("https:") else None
    return httpx.AsyncClient(
        headers=headers, timeout=DEFAULT_TIMEOUT, transport=PooledTransport(tls), follow_redirects=True
    )


def endpoint_url(name: str, base_url: str, path: str, model: str) -> str:
    """Where ``path`` (``/chat/completions``, ``/embeddings``) goes: Azure routes by deployment."""
    if name != "azure":
        return f"{base_url}{path}"
    root = f"{base_url}/openai"
    if "/deployments" in httpx.URL(root).path:
        return f"{root}{path}"
    return f"{root}/deployments/{quote(model, safe='')}{path}"


def httpx_url(url: str) -> httpx.URL:
    """``url`` parsed, to post to many times (a string is parsed again by each request)."""
    return httpx.URL(url)


def read_reply(response: httpx.Response) -> Any:
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
    client: httpx.AsyncClient,
    url: str | httpx.URL,
    body: Mapping[str, Any],
    *,
    params: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
) -> Any:
    """POST ``body`` as JSON and return the reply read by :func:`read_reply`. Transport failures
    raise httpx's own errors (``httpx.TimeoutException``, other ``httpx.HTTPError``)."""
    response = await client.post(
        url,
        content=json.dumps(body, ensure_ascii=False).encode("utf-8"),
        params=params,
        timeout=httpx.Timeout(timeout_s) if timeout_s is not None else DEFAULT_TIMEOUT,
    )
    return read_reply(response)


__all__ = [
    "DEFAULT_TIMEOUT",
    "KEEPALIVE_EXPIRY_S",
    "PooledTransport",
    "StatusError",
    "auth_headers",
    "endpoint_url",
    "httpx_url",
    "make_client",
    "post_json",
    "read_reply",
]
