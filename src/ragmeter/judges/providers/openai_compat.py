"""Any OpenAI-compatible endpoint (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp, LM Studio, DeepSeek,
Qwen/DashScope...) through the ``openai`` SDK, for chat and embeddings.

The SDK's own retries are off (``max_retries=0``): :class:`~ragmeter.judges.client.ModelClient` owns
retries, limits and the cache. SDK errors are mapped onto the ragmeter tree: 429 ->
:class:`RateLimitError` (with Retry-After), 5xx / timeouts / connection errors / malformed bodies ->
:class:`TransportError`, other 4xx -> :class:`JudgeError` (not retried) with the server's message.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError, JudgeError, JudgeOutputError, RateLimitError, TransportError
from ragmeter.judges.config import AUTO_FALLBACK, STRUCTURED_MODES
from ragmeter.judges.tokens import EstimatedUsage, estimate_message_tokens, estimate_tokens
from ragmeter.judges.types import ChatRequest, ChatResponse, Usage

logger = logging.getLogger("ragmeter.judges")

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_AZURE_API_VERSION = "2024-10-21"
#: the key sent to local servers that need none (the SDK insists on some key)
NO_KEY = "not-needed"

_DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "azure": "AZURE_OPENAI_API_KEY"}
_FORMAT_WORDS = ("response_format", "json_schema", "response format", "schema", "json_object", "format")


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
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _server_message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        if body.get("message"):
            return str(body["message"])
    return str(getattr(err, "message", "") or err)


async def _close_at_loop_end(client: Any) -> AsyncGenerator[None, None]:
    """Started once and left suspended: the event loop finalises it at shutdown (``asyncio.run``
    calls ``shutdown_asyncgens``), which closes ``client`` inside the loop that owns it."""
    try:
        yield
    finally:
        await client.close()


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
        if structured is not None and structured not in STRUCTURED_MODES:
            raise ConfigError(f"structured must be one of {', '.join(STRUCTURED_MODES)}; got {structured!r}")
        self.structured: str | None = structured
        self.timeout_s = timeout_s
        self._mode: str | None = None  # working mode in auto; decided on first structured request
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._closer: AsyncGenerator[None, None] | None = None

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
        }
        if self.structured in (None, "auto") and self._mode:
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
        """The SDK client for the running event loop (one per loop; created on first use).

        A client is bound to the loop that made it. When a judge is reused across loops (each
        ``evaluate()`` call runs its own), the old client is closed by its loop's
        ``shutdown_asyncgens`` (see :func:`_close_at_loop_end`), so no connection is leaked.
        """
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is loop:
            return self._client
        try:
            import openai
        except ImportError as e:  # pragma: no cover - openai is a base dependency
            raise ConfigError("the openai package is needed for this judge: pip install openai") from e
        kwargs: dict[str, Any] = {
            "api_key": self._api_key,
            "max_retries": 0,
            "default_headers": self.default_headers or None,
        }
        if self.timeout_s is not None:
            kwargs["timeout"] = self.timeout_s
        if self.name == "azure":
            self._client = openai.AsyncAzureOpenAI(
                azure_endpoint=self.base_url,
                api_version=self.api_version or DEFAULT_AZURE_API_VERSION,
                **kwargs,
            )
        else:
            self._client = openai.AsyncOpenAI(base_url=self.base_url, **kwargs)
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

    def _structured_kwargs(self, request: ChatRequest, mode: str) -> dict[str, Any]:
        schema = request.json_schema
        if schema is None or mode == "none":
            return {}
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
            return {"extra_body": {"guided_json": schema}}
        if mode == "ollama_format":
            return {"extra_body": {"format": schema}}
        raise ConfigError(f"unknown structured mode {mode!r}")

    def _next_auto_mode(self, mode: str) -> str | None:
        if (self.structured or "auto") != "auto" or mode not in AUTO_FALLBACK:
            return None
        i = AUTO_FALLBACK.index(mode)
        return AUTO_FALLBACK[i + 1] if i + 1 < len(AUTO_FALLBACK) else None

    async def generate(self, request: ChatRequest) -> ChatResponse:
        import openai

        client = await self._get_client()
        mode = self.structured_mode
        while True:
            kwargs: dict[str, Any] = {
                "model": self.model,
                "messages": [m.to_dict() for m in request.messages],
                "temperature": request.temperature,
            }
            if request.max_tokens is not None:
                kwargs["max_tokens"] = request.max_tokens
            if request.seed is not None:
                kwargs["seed"] = request.seed
            if self.timeout_s is not None:
                kwargs["timeout"] = self.timeout_s
            kwargs.update(self._structured_kwargs(request, mode))
            try:
                resp = await client.chat.completions.create(**kwargs)
            except openai.APIStatusError as e:
                nxt = self._next_auto_mode(mode) if request.json_schema is not None else None
                if nxt is not None and e.status_code in (400, 422) and self._about_format(e):
                    logger.warning(
                        "%s %s rejected structured mode %r (%s); falling back to %r",
                        self.name,
                        self.base_url,
                        mode,
                        _server_message(e)[:200],
                        nxt,
                    )
                    self._mode = mode = nxt
                    continue
                raise self._map_error(e) from e
            except Exception as e:
                raise self._map_error(e) from e
            if (
                request.json_schema is not None
                and (self.structured or "auto") == "auto"
                and self._mode != mode
            ):
                self._mode = mode
                logger.info("%s %s: structured output mode %r works", self.name, self.base_url, mode)
            return self._to_response(resp, request)

    def _to_response(self, resp: Any, request: ChatRequest) -> ChatResponse:
        choices = getattr(resp, "choices", None)
        if not choices:
            raise JudgeOutputError(f"{self.name} returned no choices", raw=str(resp)[:2000])
        message = choices[0].message
        text = message.content
        if text is None:
            text = getattr(message, "refusal", None) or ""
        usage_obj = getattr(resp, "usage", None)
        usage: Usage
        if usage_obj is not None and getattr(usage_obj, "prompt_tokens", None) is not None:
            details = getattr(usage_obj, "prompt_tokens_details", None)
            usage = Usage(
                requests=1,
                prompt_tokens=int(usage_obj.prompt_tokens or 0),
                completion_tokens=int(getattr(usage_obj, "completion_tokens", 0) or 0),
                cached_tokens=int(getattr(details, "cached_tokens", 0) or 0),
            )
        else:
            usage = EstimatedUsage(
                requests=1,
                prompt_tokens=estimate_message_tokens(request.messages),
                completion_tokens=estimate_tokens(text),
            )
        return ChatResponse(
            text=text,
            usage=usage,
            model=str(getattr(resp, "model", "") or self.model),
            finish_reason=getattr(choices[0], "finish_reason", None),
        )

    async def embed(self, texts: Sequence[str]) -> tuple[np.ndarray, Usage]:
        batch = list(texts)
        if not batch:
            return np.zeros((0, 0), dtype=np.float32), Usage()
        client = await self._get_client()
        kwargs: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.timeout_s is not None:
            kwargs["timeout"] = self.timeout_s
        try:
            resp = await client.embeddings.create(**kwargs)
        except Exception as e:
            raise self._map_error(e) from e
        data = sorted(resp.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise JudgeOutputError(f"{self.name} returned {len(data)} embeddings for {len(batch)} texts")
        arr = np.asarray([d.embedding for d in data], dtype=np.float32)
        u = getattr(resp, "usage", None)
        if u is not None and getattr(u, "prompt_tokens", None) is not None:
            usage: Usage = Usage(requests=1, prompt_tokens=int(u.prompt_tokens))
        else:
            usage = EstimatedUsage(requests=1, prompt_tokens=sum(estimate_tokens(t) for t in batch))
        return arr, usage

    # -- errors -------------------------------------------------------------------------------

    @staticmethod
    def _about_format(err: Any) -> bool:
        msg = _server_message(err).lower()
        return any(w in msg for w in _FORMAT_WORDS)

    def _map_error(self, err: BaseException) -> Exception:
        import openai

        where = f"{self.name} ({self.base_url}, model {self.model})"
        if isinstance(err, (JudgeError, ConfigError)):
            return err
        if isinstance(err, openai.APIStatusError):
            status = err.status_code
            msg = _server_message(err)
            headers = getattr(err.response, "headers", None)
            retry_after = parse_retry_after(headers)
            if status == 429:
                return RateLimitError(f"{where}: HTTP 429: {msg}", retry_after=retry_after)
            if status >= 500 or status == 408:
                return TransportError(f"{where}: HTTP {status}: {msg}", retry_after=retry_after)
            hint = ""
            if status in (401, 403) and self.api_key_env:
                hint = f" (check the API key in ${self.api_key_env})"
            elif status == 404:
                hint = f" (check the model name {self.model!r} and the base URL)"
            return JudgeError(f"{where}: HTTP {status}: {msg}{hint}")
        if isinstance(err, openai.APITimeoutError):
            return TransportError(f"{where}: request timed out after {self.timeout_s}s")
        if isinstance(err, openai.APIConnectionError):
            cause = err.__cause__ or err.__context__
            return TransportError(f"{where}: connection error: {cause or err}")
        if isinstance(err, (openai.APIResponseValidationError, ValueError)):
            return TransportError(f"{where}: malformed response body: {err}")
        if isinstance(err, asyncio.TimeoutError):
            return TransportError(f"{where}: request timed out after {self.timeout_s}s")
        if isinstance(err, openai.OpenAIError):
            return JudgeError(f"{where}: {err}")
        return err if isinstance(err, Exception) else TransportError(f"{where}: {err!r}")
