"""The HTTP side of :mod:`ragmeter.judges.providers.openai_compat`: the provider's small client
interface, JSON in and out, nothing else.

What the provider needs of HTTP is :class:`PostClient`: POST a JSON body to a :class:`Target` and
get the whole :class:`Reply`, or :class:`HTTPError` (``HTTPTimeout`` when a limit ran out) for a
request without a usable reply. The implementation is
:class:`~ragmeter.judges.providers.aiohttp_client.AiohttpClient` (aiohttp: kept-alive
connections, TLS, proxies, redirects, gzip); this module knows nothing of it.

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
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, urlencode, urlsplit

from ragmeter import __version__
from ragmeter.errors import ConfigError

#: the SDK's default when no timeout is given: 600 s overall, 5 s to connect
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_CONNECT_TIMEOUT_S = 5.0
_DEFAULT_PORTS = {"http": 80, "https": 443}


class HTTPError(Exception):
    """No usable HTTP reply: the connection was refused, reset or closed early, TLS failed, the
    reply was not valid HTTP/1.1 or its body was cut off or could not be decoded."""


class ConnectError(HTTPError):
    """No connection could be opened: refused, a host name that does not resolve, TLS that failed
    (the message says which, in plain words)."""


class HTTPTimeout(HTTPError):
    """Connecting, or waiting for the reply, took longer than its limit."""


@dataclass(frozen=True)
class Timeouts:
    """Seconds allowed to connect, and to wait for each part of the reply (counted from when the
    request starts to leave, so a request that cannot be sent runs out of it too)."""

    connect: float | None
    read: float | None


@dataclass(frozen=True)
class Target:
    """Where a request goes: ``url`` checked and split once (the provider keeps one per path)."""

    url: str
    scheme: str
    host: str  # lower case; an international name in its ASCII (IDNA) form
    port: int

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
    return Target(url=url, scheme=scheme, host=host, port=parts.port or _DEFAULT_PORTS[scheme])


@dataclass(frozen=True)
class Reply:
    """A whole HTTP reply: status, headers (looked up without regard to case), body
    (content-decoded), and the URL that gave it (another than the request's after a redirect)."""

    status_code: int
    headers: Mapping[str, str]
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


#: the proxies the client speaks to (a ``socks5://`` one is a configuration error)
PROXY_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class Proxies:
    """The proxy settings in force, read once (:meth:`from_environment`): ``urls`` by scheme
    (``http``, ``https``, ``all``, from ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, upper or
    lower case) and ``no_proxy`` (``NO_PROXY``'s hosts, ``.domains`` and ``*``), as
    ``urllib.request`` reads them; on macOS and Windows the system's own settings when the
    environment names no proxy."""

    urls: Mapping[str, str]
    no_proxy: str = ""
    system: bool = False  # the system's settings, not the environment's (macOS, Windows)

    @classmethod
    def from_environment(cls) -> Proxies:
        system = sys.platform in ("darwin", "win32")
        if not system and not any(k.lower().endswith("_proxy") for k in os.environ):
            return cls(urls={})  # nothing to read: urllib.request (5-10 ms) is not imported for it
        import urllib.request

        env = urllib.request.getproxies_environment()
        if env:
            urls = {k: v for k, v in env.items() if k != "no" and v}
            return cls(urls=urls, no_proxy=env.get("no", ""))
        if system:  # pragma: no cover - the system's settings
            return cls(urls=dict(urllib.request.getproxies()), system=True)
        return cls(urls={})

    def url_for(self, scheme: str, host: str) -> str | None:
        """The proxy URL for a request to ``scheme://host`` (``http://`` added when the variable
        names none), or None to go there directly. :class:`ConfigError` for a proxy of another
        kind (``socks5://``)."""
        url = self.urls.get(scheme) or self.urls.get("all")
        if not url:
            return None
        import urllib.request

        if self.system:  # pragma: no cover - macOS, Windows
            bypass = urllib.request.proxy_bypass(host)
        else:  # urllib's NO_PROXY matching, on the value read once (the function is not in typeshed)
            bypass = urllib.request.proxy_bypass_environment(host, {"no": self.no_proxy})  # type: ignore[attr-defined]
        if bypass:
            return None
        if "://" not in url:
            url = f"http://{url}"
        kind = url.split("://", 1)[0].lower()
        if kind not in PROXY_SCHEMES:
            raise ConfigError(
                f"the environment names a {kind}:// proxy for {scheme}:// requests to {host} "
                f"({scheme.upper()}_PROXY or ALL_PROXY); ragmeter's HTTP client speaks to http:// and "
                "https:// proxies (or list the host in NO_PROXY to reach it directly)"
            )
        return url


def timeouts_for(timeout_s: float | None) -> Timeouts:
    """The limits of one request: ``timeout_s`` for each phase, or the SDK's defaults."""
    if timeout_s is None:
        return Timeouts(connect=DEFAULT_CONNECT_TIMEOUT_S, read=DEFAULT_TIMEOUT_S)
    return Timeouts(connect=timeout_s, read=timeout_s)


class PostClient(Protocol):
    """What the provider needs of an HTTP client: POST ``content`` (JSON) to ``target`` and return
    the whole reply, redirects followed; :class:`HTTPError` / :class:`HTTPTimeout` otherwise."""

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


def request_headers(name: str, api_key: str, default_headers: Mapping[str, str]) -> dict[str, str]:
    """The headers of every request of a provider (the client adds ``Host`` and
    ``Content-Length``)."""
    return {
        "Accept": "application/json",
        "Accept-Encoding": "gzip, deflate",
        "Content-Type": "application/json",
        "User-Agent": f"ragmeter/{__version__}",
        **auth_headers(name, api_key),
        **default_headers,
    }


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
    usable reply raises :class:`HTTPError` (:class:`HTTPTimeout` when a limit ran out)."""
    target = parse_target(url) if isinstance(url, str) else url
    response = await client.post(
        target,
        json.dumps(body, ensure_ascii=False).encode("utf-8"),
        timeouts_for(timeout_s),
    )
    return read_reply(response)


__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_S",
    "DEFAULT_TIMEOUT_S",
    "PROXY_SCHEMES",
    "HTTPError",
    "HTTPTimeout",
    "PostClient",
    "Proxies",
    "Reply",
    "StatusError",
    "Target",
    "Timeouts",
    "auth_headers",
    "endpoint_url",
    "parse_target",
    "post_json",
    "read_reply",
    "request_headers",
    "timeouts_for",
]
