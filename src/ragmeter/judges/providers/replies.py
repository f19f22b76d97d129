"""What a server's error reply means: read the way real OpenAI-compatible servers answer.

Servers disagree on how they say the same thing (the bodies are recorded under
``tests/fixtures/servers``):

- "I do not take this structured-output mode": OpenAI and LM Studio 400; vLLM before 0.5.5 a
  400 with a pydantic ``literal_error``; Ollama 400 ``invalid format``; llama-cpp-python 0.3 an
  HTTP **500** holding the pydantic error ``Input should be 'text' or 'json_object'``; the C++
  llama.cpp server (older builds) a 500 ``response_format type must be one of "text" or
  "json_object"``. :func:`rejects_mode` reads all of them.
- "the prompt does not fit": OpenAI / vLLM / llama-cpp-python ``maximum context length``, vLLM
  ``longer than the maximum model length``, llama.cpp ``exceeds the available context size``,
  llama-cpp-python's own ``Requested tokens (N) exceed context window of M``, LM Studio ``context
  length of only``. :func:`context_overflow` finds it and the sizes the server names.
- a content filter (Azure OpenAI's ``content_filter`` code, "content management policy").
- a reply that is not from an OpenAI-compatible server at all (HTML from a web server or proxy,
  JSON without ``choices``): :func:`looks_like_html`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: words that tie a 400/422 to the response format
_FORMAT_WORDS = ("response_format", "json_schema", "response format", "schema", "json_object", "format")
#: a 5xx is about the mode only when it names one of these (a bare "format" is too common)
_FORMAT_WORDS_5XX = ("response_format", "json_schema", "json_object", "guided_json", "'text' or")

_CONTEXT_PATTERNS = (
    r"maximum context length",
    r"context[_ ]length[_ ]exceeded",
    r"exceeds? (?:the )?(?:available )?context (?:size|window|length)",
    r"exceed context window",
    r"longer than the maximum model length",
    r"context length of only",
    r"prompt is too long",
    r"exceed_context_size",
)
_CONTEXT_RE = re.compile("|".join(_CONTEXT_PATTERNS), re.IGNORECASE)
_LIMIT_RES = (
    re.compile(r"maximum context length is (\d+)", re.I),
    re.compile(r"context window of (\d+)", re.I),
    re.compile(r"maximum model length of (\d+)", re.I),
    re.compile(r"context length of only (\d+)", re.I),
    re.compile(r"n_ctx\D{0,20}(\d+)", re.I),
)
_PROMPT_RES = (
    re.compile(r"resulted in (\d+) tokens", re.I),
    re.compile(r"you requested (\d+) tokens", re.I),
    re.compile(r"requested tokens \((\d+)\)", re.I),
    re.compile(r"\(length (\d+)\)", re.I),
    re.compile(r"request has (\d+) input tokens", re.I),
    re.compile(r"n_prompt_tokens\D{0,20}(\d+)", re.I),
    re.compile(r"keep the first (\d+) tokens", re.I),
)
_FILTER_RE = re.compile(r"content[_ ]filter|content management policy|content_policy_violation", re.I)
_TAG_RE = re.compile(r"<[^>]+>")


def server_message(err: Any) -> str:
    """The server's own words from an error reply (``error.message``, ``detail``, a bare string)."""
    body = getattr(err, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        for key in ("message", "detail"):
            if body.get(key):
                return str(body[key])
    if isinstance(body, str) and body.strip():
        return short(body)
    response = getattr(err, "response", None)
    text = getattr(response, "text", None) if response is not None else None
    if isinstance(text, str) and text.strip():
        return short(text)
    return str(getattr(err, "message", "") or err)


def body_text(err: Any) -> str:
    """The whole error body as text (some servers put the sizes beside the message)."""
    import json

    body = getattr(err, "body", None)
    if isinstance(body, (Mapping, list)):
        return json.dumps(body, default=str)
    return str(body or "")


def error_code(err: Any) -> str:
    """``error.code`` / ``code`` of the body as text ('' when absent)."""
    body = getattr(err, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and inner.get("code") is not None:
            return str(inner["code"])
        if body.get("code") is not None:
            return str(body["code"])
    return ""


def short(text: str, limit: int = 300) -> str:
    """One line of at most ``limit`` characters; HTML tags dropped."""
    flat = " ".join(_TAG_RE.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def looks_like_html(text: str | None, content_type: str | None = None) -> bool:
    if content_type and "html" in content_type.lower():
        return True
    head = (text or "").lstrip()[:200].lower()
    return head.startswith("<!doctype html") or head.startswith("<html") or "<body" in head


def rejects_mode(status: int, message: str) -> bool:
    """True when an error reply says the server does not take the structured-output mode sent."""
    msg = message.lower()
    if status in (400, 422):
        return any(w in msg for w in _FORMAT_WORDS) and not context_overflow(message)
    if status >= 500:
        return any(w in msg for w in _FORMAT_WORDS_5XX)
    return False


def context_overflow(message: str) -> tuple[int | None, int | None] | None:
    """``(prompt_tokens, limit)`` (each None when the server did not say) when ``message`` says
    the prompt does not fit the context window; else None."""
    if not _CONTEXT_RE.search(message):
        return None
    return _first_int(_PROMPT_RES, message), _first_int(_LIMIT_RES, message)


def content_filtered(message: str, code: str = "") -> bool:
    return bool(_FILTER_RE.search(message) or _FILTER_RE.search(code))


def _first_int(patterns: tuple[re.Pattern[str], ...], text: str) -> int | None:
    for pattern in patterns:
        m = pattern.search(text)
        if m:
            return int(m.group(1))
    return None


__all__ = [
    "body_text",
    "content_filtered",
    "context_overflow",
    "error_code",
    "looks_like_html",
    "rejects_mode",
    "server_message",
    "short",
]
