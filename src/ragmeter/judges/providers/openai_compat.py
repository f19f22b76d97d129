"""Any OpenAI-compatible endpoint (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp, LM Studio, DeepSeek,
Qwen/DashScope...), for chat and embeddings, straight over HTTP
(:mod:`ragmeter.judges.providers.http`; the ``openai`` SDK is not imported).

No retries here: :class:`~ragmeter.judges.client.ModelClient` owns retries, limits and the cache.
HTTP errors are mapped onto the ragmeter tree (how each server words
them: :mod:`ragmeter.judges.providers.replies`): 429 -> :class:`RateLimitError` (with Retry-After);
5xx / timeouts / connection errors / truncated bodies -> :class:`TransportError` (retried); 401/403,
404/405, HTML pages and replies without ``choices`` -> :class:`EndpointError` (the run stops at
once); a context-length 400 -> :class:`ContextTooLong`, a content filter -> :class:`ContentFiltered`,
other 4xx -> :class:`RequestRejected` (that request only, never retried).

``structured="auto"`` tries :data:`AUTO_FALLBACK` in order and keeps the first mode the server
takes; a reply that rejects a mode moves to the next one, whether the server says so with 400/422
or, like llama-cpp-python, with a 500. Requests do not wait for the first reply to learn the mode:
the run's first N requests go out at once in the first mode (most servers take it, and waiting
would idle N - 1 request slots for a whole round trip). Against a server that refuses it they are
all refused at once (before any generation, so no tokens); the first refusal moves the mode on,
with one warning, and every refused request is sent again in the mode now current, never twice in
a refused one. A mode named explicitly and refused is an :class:`EndpointError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.errors import (
    ConfigError,
    ContentFiltered,
    ContextTooLong,
    EndpointError,
    JudgeError,
    JudgeOutputError,
    RateLimitError,
    RequestRejected,
    TransportError,
    Unreachable,
)
from ragmeter.judges.config import AUTO_FALLBACK, STRUCTURED_MODES
from ragmeter.judges.providers.replies import (
    body_text,
    content_filtered,
    context_overflow,
    error_code,
    looks_like_html,
    rejects_mode,
    server_message,
    short,
)
from ragmeter.judges.schema_shapes import GRAMMAR_MODES
from ragmeter.judges.tokens import EstimatedUsage, estimate_message_tokens, estimate_tokens
from ragmeter.judges.types import ChatRequest, ChatResponse, Usage

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger("ragmeter.judges")

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_AZURE_API_VERSION = "2024-10-21"
#: the key sent to local servers that need none (as the ``openai`` SDK did; some servers want one)
NO_KEY = "not-needed"

_DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "azure": "AZURE_OPENAI_API_KEY"}


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # an HTTP date: rare, so not imported on every run's way

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


_HTTP_CLIENT_MODULE = "ragmeter.judges.providers.aiohttp_client"
_http_client_import: threading.Thread | None = None


def _import_http_client() -> None:
    with contextlib.suppress(Exception):  # a failure is met again, and reported, at the first request
        importlib.import_module(_HTTP_CLIENT_MODULE)


def import_http_client_early() -> None:
    """Start importing the HTTP client in a thread, once per process (when a provider is made):
    ``aiohttp`` takes 70-120 ms of CPU to import, more than half of it building its default TLS
    contexts (loading the system's certificates twice, with the interpreter lock released), so
    the run's own start-up goes on meanwhile and the first request finds it loaded. A fork waits
    for the import to finish (a child must not inherit a module lock held by a thread it has
    not)."""
    global _http_client_import
    if _http_client_import is None and _HTTP_CLIENT_MODULE not in sys.modules:
        _http_client_import = threading.Thread(target=_import_http_client, name="ragmeter-http-import", daemon=True)
        _http_client_import.start()


def _finish_http_client_import() -> None:
    thread = _http_client_import
    if thread is not None and thread.is_alive() and thread is not threading.current_thread():
        thread.join()


if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(before=_finish_http_client_import)


async def _close_at_loop_end(client: Any) -> AsyncGenerator[None, None]:
    """Started once and left suspended: the event loop finalises it at shutdown (``asyncio.run``
    calls ``shutdown_asyncgens``), which closes ``client`` inside the loop that owns it."""
    try:
        yield
    finally:
        await client.aclose()


class OpenAICompatibleProvider:
    """Chat and embeddings over the OpenAI API shape.

    Key: ``api_key``, else the environment variable ``api_key_env``, else ``OPENAI_API_KEY`` for
    ``name="openai"`` (``AZURE_OPENAI_API_KEY`` for ``name="azure"``). Those two need a key and raise
    :class:`ConfigError` naming the variable when it is missing; other (local) servers get a
    placeholder key. ``structured=None`` takes the mode from the client's :class:`JudgeConfig`.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        name: str = "openai-compatible",
        *,
        api_version: str | None = None,
        default_headers: Mapping[str, str] | None = None,
        structured: str | None = None,
        timeout_s: float | None = None,
    ) -> None:
        if not model or not isinstance(model, str):
            raise ConfigError(f"{name}: a model name is required")
        self.name = name
        self.model = model
        self.api_version = api_version
        self.default_headers = dict(default_headers or {})
        if name == "openai" and base_url is None:
            base_url = OPENAI_BASE_URL
        if base_url is None:
            what = "an Azure endpoint (base_url)" if name == "azure" else "a base URL"
            raise ConfigError(
                f"judge provider {name!r} needs {what}, e.g. --base-url http://127.0.0.1:8000/v1"
            )
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env or _DEFAULT_KEY_ENV.get(name)
        self._api_key = self._resolve_key(api_key, api_key_env)
        #: where the key came from, for the run record (never the key itself): "env:VAR",
        #: "argument" (passed in code) or "none" (a local server that needs no key)
        self.api_key_source = (
            "argument" if api_key else f"env:{self.api_key_env}" if self._api_key != NO_KEY else "none"
        )
        if structured is not None and structured not in STRUCTURED_MODES:
            raise ConfigError(f"structured must be one of {', '.join(STRUCTURED_MODES)}; got {structured!r}")
        self.structured: str | None = structured
        self.timeout_s = timeout_s
        self._mode: str | None = None  # in auto: the mode to send (moves on when one is refused)
        self._settled = False  # in auto: a request in self._mode succeeded
        self._client: Any = None
        self._urls: dict[str, Any] = {}  # path -> its parsed URL (see _post)
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._closer: AsyncGenerator[None, None] | None = None
        #: the proxy settings, read from the environment now (a proxy the client cannot speak to is
        #: a ConfigError here, before any request)
        self.proxies = self._read_proxies()
        import_http_client_early()

    # -- configuration ------------------------------------------------------------------------

    def _resolve_key(self, api_key: str | None, api_key_env: str | None) -> str:
        if api_key:
            return api_key
        if api_key_env:
            value = os.environ.get(api_key_env)
            if not value:
                raise ConfigError(
                    f"environment variable {api_key_env} (the API key for {self.name}) is not set"
                )
            return value
        default_env = _DEFAULT_KEY_ENV.get(self.name)
        if default_env:
            value = os.environ.get(default_env)
            if not value:
                raise ConfigError(
                    f"judge {self.name}:{self.model} needs an API key: set the environment variable "
                    f"{default_env} (or name another one with --api-key-env)"
                )
            return value
        return NO_KEY

    def _read_proxies(self) -> Any:
        from urllib.parse import urlsplit

        from ragmeter.judges.providers.http import Proxies

        proxies = Proxies.from_environment()
        parts = urlsplit(self.base_url)
        if parts.hostname:
            try:
                proxies.url_for(parts.scheme.lower(), parts.hostname)
            except ConfigError as e:
                raise ConfigError(f"judge {self.name}:{self.model}: {e}") from None
        return proxies

    def configure(self, config: Any) -> None:
        """Take ``structured`` and ``timeout_s`` from the client's JudgeConfig unless set here."""
        if self.structured is None:
            self.structured = config.structured
        if self.timeout_s is None:
            self.timeout_s = float(config.timeout_s)

    @property
    def structured_mode(self) -> str:
        """The mode requests use now (in auto: the one that works, once known)."""
        mode = self.structured or "auto"
        if mode == "auto":
            return self._mode or AUTO_FALLBACK[0]
        return mode

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "provider": self.name,
            "model": self.model,
            "base_url": self.base_url,
            "structured": self.structured or "auto",
            "api_key_from": self.api_key_source,
        }
        if self.structured in (None, "auto") and self._settled and self._mode:
            d["structured_resolved"] = self._mode
        if self.name == "azure":
            d["api_version"] = self.api_version or DEFAULT_AZURE_API_VERSION
        return d

    def __repr__(self) -> str:
        return (
            f"OpenAICompatibleProvider(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"
        )

    # -- client ---------------------------------------------------------------------------------

    async def _get_client(self) -> Any:
        """The HTTP client for the running event loop (one per loop; created on first use).

        A client is bound to the loop that made it. When a judge is reused across loops (each
        ``evaluate()`` call runs its own), the old client is closed by its loop's
        ``shutdown_asyncgens`` (see :func:`_close_at_loop_end`), so no connection is leaked.
        """
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is loop:
            return self._client
        from ragmeter.judges.providers.aiohttp_client import AiohttpClient
        from ragmeter.judges.providers.http import request_headers

        self._client = AiohttpClient(
            request_headers(self.name, self._api_key, self.default_headers), proxies=self.proxies
        )
        self._client_loop = loop
        closer = _close_at_loop_end(self._client)
        await closer.__anext__()
        self._closer = closer
        return self._client

    async def aclose(self) -> None:
        closer, self._closer = self._closer, None
        loop, self._client_loop = self._client_loop, None
        self._client = None
        if closer is not None and loop is asyncio.get_running_loop():
            await closer.aclose()

    # -- requests -------------------------------------------------------------------------------

    async def _post(self, path: str, body: dict[str, Any]) -> Any:
        """POST ``body`` to ``path`` of this endpoint; the parsed reply (see ``http.read_reply``)."""
        from ragmeter.judges.providers.http import endpoint_url, parse_target, post_json

        client = await self._get_client()
        url = self._urls.get(path)
        if url is None:  # parsed once per path (with Azure's api-version), not at every request
            params = {"api-version": self.api_version or DEFAULT_AZURE_API_VERSION} if self.name == "azure" else None
            url = parse_target(endpoint_url(self.name, self.base_url, path, self.model)).with_params(params)
            self._urls[path] = url
        return await post_json(client, url, body, timeout_s=self.timeout_s)

    def _structured_fields(self, request: ChatRequest, mode: str) -> dict[str, Any]:
        """The body fields that ask for ``mode`` (vLLM's and Ollama's sit at the top level)."""
        schema = request.json_schema
        if schema is None or mode == "none":
            return {}
        if mode in GRAMMAR_MODES and request.grammar_schema is not None:
            schema = request.grammar_schema  # the server decodes under a grammar: the tight shape
        schema = dict(schema)
        if mode == "json_schema":
            return {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": request.schema_name or "reply", "schema": schema, "strict": True},
                }
            }
        if mode == "json_object_schema":
            return {"response_format": {"type": "json_object", "schema": schema}}
        if mode == "json_object":
            return {"response_format": {"type": "json_object"}}
        if mode == "guided_json":
            return {"guided_json": schema}
        if mode == "ollama_format":
            return {"format": schema}
        raise ConfigError(f"unknown structured mode {mode!r}")

    def _next_auto_mode(self, mode: str) -> str | None:
        if (self.structured or "auto") != "auto" or mode not in AUTO_FALLBACK:
            return None
        i = AUTO_FALLBACK.index(mode)
        return AUTO_FALLBACK[i + 1] if i + 1 < len(AUTO_FALLBACK) else None

    @property
    def where(self) -> str:
        return f"{self.name} ({self.base_url}, model {self.model})"

    async def generate(self, request: ChatRequest) -> ChatResponse:
        from ragmeter.judges.providers.http import StatusError

        mode = self.structured_mode
        while True:
            body: dict[str, Any] = {
                "model": self.model,
                "messages": [m.to_dict() for m in request.messages_for(mode)],
                "temperature": request.temperature,
            }
            if request.max_tokens is not None:
                body["max_tokens"] = request.max_tokens
            if request.seed is not None:
                body["seed"] = request.seed
            structured = self._structured_fields(request, mode)
            body.update(structured)
            try:
                resp = await self._post("/chat/completions", body)
            except StatusError as e:
                msg = self._redact(server_message(e))
                if structured:
                    if rejects_mode(e.status_code, msg):
                        current = self.structured_mode
                        if current != mode:  # a concurrent request moved on already: follow it
                            mode = current
                            continue
                        nxt = self._next_auto_mode(mode)
                        if nxt is None:
                            raise EndpointError(
                                f"{self.where}: HTTP {e.status_code}: the server does not take structured "
                                f"output mode {mode!r}: {short(msg)} (use --structured auto, or another mode)",
                                reason="structured",
                                endpoint=self.base_url,
                                status=e.status_code,
                                server_message=msg,
                            ) from e
                        logger.warning(
                            "%s: HTTP %s to structured mode %r (%s); trying %r",
                            self.where,
                            e.status_code,
                            mode,
                            short(msg, 200),
                            nxt,
                        )
                        self._mode = mode = nxt
                        continue
                raise self._map_error(e, request) from e
            except Exception as e:
                raise self._map_error(e, request) from e
            response = self._to_response(resp, request)
            if request.json_schema is not None and (self.structured or "auto") == "auto" and not self._settled:
                self._mode, self._settled = mode, True
                logger.warning("%s: structured output mode %r works; using it for this run", self.where, mode)
            return response

    def _not_openai(self, resp: Any, expected: str, field: str) -> EndpointError:
        text = resp if isinstance(resp, str) else json.dumps(resp, ensure_ascii=False, default=str)
        body = self._redact(text)
        what = "an HTML page" if looks_like_html(body) else f"a reply without {field}"
        return EndpointError(
            f"{self.where}: the server answered with {what}, not an OpenAI {expected}: {short(body, 200)} "
            "(is the base URL the server's OpenAI-compatible API, usually ending in /v1?)",
            reason="not_openai",
            endpoint=self.base_url,
            status=200,
            server_message=short(body),
            raw=body[:2000],
        )

    def _to_response(self, resp: Any, request: ChatRequest) -> ChatResponse:
        choices = resp.get("choices") if isinstance(resp, dict) else None
        if not isinstance(choices, list):
            # the text of a non-JSON body, or JSON without OpenAI's fields
            raise self._not_openai(resp, "chat completion", "'choices'")
        if not choices:
            raise JudgeOutputError(f"{self.name} returned no choices", raw=json.dumps(resp, default=str)[:2000])
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise self._not_openai(resp, "chat completion", "'choices[0].message'")
        text = message.get("content")
        if text is None:
            text = message.get("refusal") or ""
        text = str(text)
        finish_reason = choice.get("finish_reason")
        if finish_reason == "content_filter":
            raise ContentFiltered(
                f"{self.where}: the provider's content filter stopped the reply (finish_reason content_filter)",
                endpoint=self.base_url,
                status=200,
                server_message="finish_reason: content_filter",
                raw=text,
            )
        usage_obj = resp.get("usage")
        usage: Usage
        if isinstance(usage_obj, dict) and usage_obj.get("prompt_tokens") is not None:
            details = usage_obj.get("prompt_tokens_details")
            cached = details.get("cached_tokens") if isinstance(details, dict) else None
            usage = Usage(
                requests=1,
                prompt_tokens=int(usage_obj["prompt_tokens"] or 0),
                completion_tokens=int(usage_obj.get("completion_tokens") or 0),
                cached_tokens=int(cached or 0),
            )
        else:
            usage = EstimatedUsage(
                requests=1,
                prompt_tokens=estimate_message_tokens(request.messages_for(self.structured_mode)),
                completion_tokens=estimate_tokens(text),
            )
        return ChatResponse(
            text=text,
            usage=usage,
            model=str(resp.get("model") or self.model),
            finish_reason=finish_reason,
        )

    async def embed(self, texts: Sequence[str]) -> tuple[np.ndarray, Usage]:
        import numpy as np

        batch = list(texts)
        if not batch:
            return np.zeros((0, 0), dtype=np.float32), Usage()
        body: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        try:
            resp = await self._post("/embeddings", body)
        except Exception as e:
            raise self._map_error(e) from e
        items = resp.get("data") if isinstance(resp, dict) else None
        if not isinstance(items, list) or not all(isinstance(d, dict) and "embedding" in d for d in items):
            raise self._not_openai(resp, "embeddings list", "'data'")
        data = sorted(items, key=lambda d: int(d.get("index") or 0))
        if len(data) != len(batch):
            raise JudgeOutputError(f"{self.name} returned {len(data)} embeddings for {len(batch)} texts")
        arr = np.asarray([d["embedding"] for d in data], dtype=np.float32)
        u = resp.get("usage")
        if isinstance(u, dict) and u.get("prompt_tokens") is not None:
            usage: Usage = Usage(requests=1, prompt_tokens=int(u["prompt_tokens"]))
        else:
            usage = EstimatedUsage(requests=1, prompt_tokens=sum(estimate_tokens(t) for t in batch))
        return arr, usage

    # -- errors -------------------------------------------------------------------------------

    def _map_error(self, err: BaseException, request: ChatRequest | None = None) -> Exception:
        """The ragmeter error for a failed request: retryable (429, 5xx, timeouts, connection, a
        broken body), fatal for the run (:class:`EndpointError`), or final for this request only."""
        from ragmeter.judges.providers.http import ConnectError, HTTPError, HTTPTimeout, StatusError

        where = self.where
        if isinstance(err, (JudgeError, ConfigError)):
            return err
        if isinstance(err, StatusError):
            return self._map_status(err, request)
        if isinstance(err, (HTTPTimeout, asyncio.TimeoutError)):
            return TransportError(f"{where}: request timed out after {self.timeout_s}s ({err})")
        if isinstance(err, ConnectError):
            return Unreachable(f"{where}: connection error: {err}", endpoint=self.base_url)
        if isinstance(err, HTTPError):
            return TransportError(f"{where}: connection error: {err}")
        if isinstance(err, ValueError):
            return TransportError(f"{where}: malformed response body: {err}")
        return err if isinstance(err, Exception) else TransportError(f"{where}: {err!r}")

    def _redact(self, text: str) -> str:
        """``text`` without the API key (a server may echo it in an error message)."""
        key = self._api_key
        if not key or key == NO_KEY or len(key) < 8:  # a toy key of a few letters would mangle any text
            return text
        return text.replace(key, "[API key]")

    def _map_status(self, err: Any, request: ChatRequest | None) -> Exception:
        where, status = self.where, int(err.status_code)
        msg = self._redact(server_message(err))
        said = short(msg)
        headers = getattr(err.response, "headers", None)
        content_type = headers.get("content-type") if headers is not None else None
        facts: dict[str, Any] = {"endpoint": self.base_url, "status": status, "server_message": msg}
        if status == 429:
            return RateLimitError(f"{where}: HTTP 429: {said}", retry_after=parse_retry_after(headers))
        if looks_like_html(getattr(err.response, "text", None), content_type) and status not in (502, 503, 504):
            return EndpointError(
                f"{where}: HTTP {status} with an HTML page, not an OpenAI-compatible reply: {said} "
                "(check the base URL: the server's OpenAI-compatible API usually ends in /v1)",
                reason="route" if status in (404, 405) else "not_openai",
                **facts,
            )
        if status >= 500 or status == 408:
            return TransportError(f"{where}: HTTP {status}: {said}", retry_after=parse_retry_after(headers))
        if status in (401, 403):
            hint = (
                f"check the API key in ${self.api_key_env}"
                if self.api_key_env
                else "this server wants an API key: name its variable with --api-key-env"
            )
            return EndpointError(
                f"{where}: HTTP {status}: {said} ({hint})",
                reason="auth",
                **facts,
            )
        if status in (404, 405):
            if "model" in msg.lower():
                return EndpointError(
                    f"{where}: HTTP {status}: {said} (check the model name {self.model!r}; "
                    f"the server lists its models at GET {self.base_url}/models)",
                    reason="model",
                    **facts,
                )
            return EndpointError(
                f"{where}: HTTP {status}: {said} (no such route: check the base URL, which usually ends in /v1)",
                reason="route",
                **facts,
            )
        overflow = context_overflow(f"{msg} {body_text(err)}")
        if overflow is not None:
            prompt_tokens, limit = overflow
            if prompt_tokens is None and request is not None:
                prompt_tokens = estimate_message_tokens(request.messages_for(self.structured_mode))
                size = f"about {prompt_tokens} tokens (estimated)"
            else:
                size = f"{prompt_tokens} tokens"
            budget = f" of {limit}" if limit else ""
            return ContextTooLong(
                f"{where}: HTTP {status}: the prompt ({size}) does not fit the context window{budget}: {said}",
                prompt_tokens=prompt_tokens,
                limit=limit,
                **facts,
            )
        if content_filtered(msg, error_code(err)):
            return ContentFiltered(f"{where}: HTTP {status}: refused by the content filter: {said}", **facts)
        return RequestRejected(f"{where}: HTTP {status}: {said}", **facts)
