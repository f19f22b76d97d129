"""JudgeConfig: how ragmeter talks to one model endpoint (limits, retries, sampling, structured output).

A frozen object, validated on construction (:class:`~ragmeter.errors.ConfigError`), stored whole in the
run record. Nothing here reads the environment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ragmeter.errors import ConfigError

#: How a JSON schema is passed to the server. ``auto`` starts with ``json_schema`` and, when the server
#: answers 400/422 about the response format, falls back along :data:`AUTO_FALLBACK`.
STRUCTURED_MODES: tuple[str, ...] = (
    "auto",
    "json_schema",  # OpenAI: response_format {"type": "json_schema", "json_schema": {name, schema, strict}}
    "json_object_schema",  # llama-cpp-python: response_format {"type": "json_object", "schema": ...}
    "guided_json",  # vLLM: extra_body {"guided_json": schema}
    "ollama_format",  # Ollama: extra_body {"format": schema}
    "json_object",  # response_format {"type": "json_object"}, schema in the prompt only
    "none",  # prompt only, tolerant parsing
)

AUTO_FALLBACK: tuple[str, ...] = ("json_schema", "json_object_schema", "json_object", "none")


def price(config: Mapping[str, Any], prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float | None:
    """The cost of tokens at the prices of a judge config (a :class:`JudgeConfig` as a dict, as the
    run record stores it); None when it has no price. Cached prompt tokens cost
    ``cached_prompt_price_per_1k`` (the prompt price when that is not set)."""
    p_in, p_out = config.get("prompt_price_per_1k"), config.get("completion_price_per_1k")
    if p_in is None and p_out is None:
        return None
    p_cached = config.get("cached_prompt_price_per_1k")
    p_cached = p_in if p_cached is None else p_cached
    cached = min(max(int(cached_tokens), 0), int(prompt_tokens))
    return (
        (prompt_tokens - cached) / 1000.0 * float(p_in or 0)
        + cached / 1000.0 * float(p_cached or 0)
        + completion_tokens / 1000.0 * float(p_out or 0)
    )


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))


@dataclass(frozen=True)
class JudgeConfig:
    """Limits, retries and sampling for one judge endpoint.

    - ``concurrency``: at most this many requests in flight per client (= per endpoint). ``None``
      (the default) follows the run's ``concurrency`` (``RunConfig.concurrency``, the CLI's
      ``--concurrency``, 16 by default); an integer here overrides it for this judge.
    - ``timeout_s``: per-request timeout; a timeout is retried like a 5xx.
    - ``max_retries``: retries after the first attempt for 429 / 5xx / timeouts / connection errors.
    - ``backoff_base_s`` / ``backoff_max_s``: exponential backoff with full jitter,
      ``uniform(0, min(max, base * 2**(attempt-1)))``; a server's Retry-After (capped at
      ``backoff_max_s``) is a floor.
    - ``rpm`` / ``tpm``: optional requests-per-minute and tokens-per-minute limits (token buckets).
    - ``temperature``, ``max_tokens``, ``seed``: sampling parameters sent with each request.
    - ``structured``: one of :data:`STRUCTURED_MODES`.
    - ``prompt_price_per_1k`` / ``completion_price_per_1k``: prices (any currency) for cost reports.
    - ``cached_prompt_price_per_1k``: the price of prompt tokens the server served from its prompt
      cache (``cached_tokens``; OpenAI bills them at a discount); None: the prompt price.
    """

    concurrency: int | None = None
    timeout_s: float = 60
    max_retries: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60
    rpm: int | None = None
    tpm: int | None = None
    temperature: float = 0.0
    max_tokens: int | None = 1024
    structured: str = "auto"
    prompt_price_per_1k: float | None = None
    completion_price_per_1k: float | None = None
    cached_prompt_price_per_1k: float | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        problems: list[str] = []
        if self.concurrency is not None and (not _is_int(self.concurrency) or self.concurrency < 1):
            problems.append(f"concurrency must be None or an integer >= 1, got {self.concurrency!r}")
        if not _is_num(self.timeout_s) or self.timeout_s <= 0:
            problems.append(f"timeout_s must be a number > 0, got {self.timeout_s!r}")
        if not _is_int(self.max_retries) or self.max_retries < 0:
            problems.append(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        if not _is_num(self.backoff_base_s) or self.backoff_base_s < 0:
            problems.append(f"backoff_base_s must be a number >= 0, got {self.backoff_base_s!r}")
        if not _is_num(self.backoff_max_s) or self.backoff_max_s < 0:
            problems.append(f"backoff_max_s must be a number >= 0, got {self.backoff_max_s!r}")
        elif _is_num(self.backoff_base_s) and self.backoff_max_s < self.backoff_base_s:
            problems.append(
                f"backoff_max_s ({self.backoff_max_s!r}) must be >= backoff_base_s ({self.backoff_base_s!r})"
            )
        for name in ("rpm", "tpm"):
            v = getattr(self, name)
            if v is not None and (not _is_int(v) or v < 1):
                problems.append(f"{name} must be None or an integer >= 1, got {v!r}")
        if not _is_num(self.temperature) or not 0 <= self.temperature <= 2:
            problems.append(f"temperature must be a number in [0, 2], got {self.temperature!r}")
        if self.max_tokens is not None and (not _is_int(self.max_tokens) or self.max_tokens < 1):
            problems.append(f"max_tokens must be None or an integer >= 1, got {self.max_tokens!r}")
        if self.structured not in STRUCTURED_MODES:
            problems.append(
                f"structured must be one of {', '.join(STRUCTURED_MODES)}; got {self.structured!r}"
            )
        for name in ("prompt_price_per_1k", "completion_price_per_1k", "cached_prompt_price_per_1k"):
            v = getattr(self, name)
            if v is not None and (not _is_num(v) or v < 0):
                problems.append(f"{name} must be None or a number >= 0, got {v!r}")
        if self.seed is not None and not _is_int(self.seed):
            problems.append(f"seed must be None or an integer, got {self.seed!r}")
        if problems:
            raise ConfigError("invalid judge config: " + "; ".join(problems))

    @property
    def has_prices(self) -> bool:
        return self.prompt_price_per_1k is not None or self.completion_price_per_1k is not None

    def cost(self, prompt_tokens: int, completion_tokens: int, *, cached_tokens: int = 0) -> float | None:
        """Cost of the given tokens at the configured prices; None when no price is configured.
        ``cached_tokens`` (part of ``prompt_tokens``) are billed at ``cached_prompt_price_per_1k``."""
        return price(self.to_dict(), prompt_tokens, completion_tokens, cached_tokens)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JudgeConfig:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(d) - known)
        if unknown:
            raise ConfigError(f"unknown judge config field(s): {', '.join(unknown)}")
        return cls(**d)
