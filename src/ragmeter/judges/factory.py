"""make_judge: build a judge from a spec string such as ``"openai:gpt-4o-mini"``.

Specs: ``openai:MODEL``, ``openai-compatible:MODEL`` (needs ``base_url``), ``azure:DEPLOYMENT``
(``base_url`` = the Azure endpoint), ``ollama:MODEL`` (default ``http://127.0.0.1:11434/v1``),
``vllm:MODEL`` (needs ``base_url``). ``None`` or ``"local"`` is the offline local judge;
``"local:FILE"`` the local judge with a calibration file that ``ragmeter calibrate`` wrote
(:mod:`ragmeter.local.calibration_file`).

Adding a provider is one module and one entry in :data:`PROVIDERS`; an entry may name its builder
as ``"package.module:function"`` so the module is imported only when used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.judges.base import Judge
from ragmeter.judges.cache import LLMCache
from ragmeter.judges.client import ModelClient
from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.llm import LLMJudge
from ragmeter.judges.providers.openai_compat import OpenAICompatibleProvider

OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1"


def _needs_base_url(kind: str, base_url: str | None) -> str:
    if not base_url:
        raise ConfigError(
            f"judge provider {kind!r} needs a base URL: --base-url URL (Python: base_url=...), "
            "e.g. http://127.0.0.1:8000/v1"
        )
    return base_url


def _openai(model: str, *, base_url: str | None, api_key_env: str | None) -> Any:
    return OpenAICompatibleProvider(model, base_url=base_url, api_key_env=api_key_env, name="openai")


def _openai_compatible(model: str, *, base_url: str | None, api_key_env: str | None) -> Any:
    url = _needs_base_url("openai-compatible", base_url)
    return OpenAICompatibleProvider(model, base_url=url, api_key_env=api_key_env, name="openai-compatible")


def _azure(model: str, *, base_url: str | None, api_key_env: str | None) -> Any:
    if not base_url:
        raise ConfigError(
            "judge provider 'azure' needs the Azure OpenAI endpoint as the base URL, "
            "e.g. --base-url https://YOUR-RESOURCE.openai.azure.com"
        )
    return OpenAICompatibleProvider(model, base_url=base_url, api_key_env=api_key_env, name="azure")


def _ollama(model: str, *, base_url: str | None, api_key_env: str | None) -> Any:
    return OpenAICompatibleProvider(
        model, base_url=base_url or OLLAMA_BASE_URL, api_key_env=api_key_env, name="ollama"
    )


def _vllm(model: str, *, base_url: str | None, api_key_env: str | None) -> Any:
    url = _needs_base_url("vllm", base_url)
    return OpenAICompatibleProvider(model, base_url=url, api_key_env=api_key_env, name="vllm")


@dataclass(frozen=True)
class ProviderEntry:
    """How to build one provider kind.

    ``build``: ``(model, *, base_url, api_key_env) -> provider``, or ``"module:function"`` naming one.
    ``structured``: the structured-output mode to use when the config says ``"auto"`` (None: auto).
    """

    build: Callable[..., Any] | str
    structured: str | None = None
    description: str = ""

    def builder(self) -> Callable[..., Any]:
        if callable(self.build):
            return self.build
        module, _, attr = self.build.partition(":")
        try:
            fn: Callable[..., Any] = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as e:
            raise ConfigError(f"cannot load judge provider {self.build!r}: {e}") from e
        return fn


PROVIDERS: dict[str, ProviderEntry] = {
    "openai": ProviderEntry(_openai, description="OpenAI API; key from $OPENAI_API_KEY"),
    "openai-compatible": ProviderEntry(
        _openai_compatible, description="any OpenAI-compatible server (--base-url)"
    ),
    "azure": ProviderEntry(_azure, description="Azure OpenAI deployment; key from $AZURE_OPENAI_API_KEY"),
    # Ollama's /v1 and vLLM take OpenAI's response_format (json_schema) in current releases, and the
    # fields of their own (`format`, `guided_json`) are ignored there or removed (vLLM 0.12), so both
    # settle their mode like any endpoint (`auto`); `--structured ollama_format|guided_json` still works.
    "ollama": ProviderEntry(_ollama, description="Ollama (default 127.0.0.1:11434)"),
    "vllm": ProviderEntry(_vllm, description="vLLM server (--base-url)"),
}


def parse_spec(spec: str) -> tuple[str, str]:
    """``"ollama:qwen2.5:7b"`` -> ``("ollama", "qwen2.5:7b")`` (split at the first colon)."""
    kind, sep, model = spec.strip().partition(":")
    if not sep or not kind or not model:
        raise ConfigError(
            f"judge spec {spec!r} must be PROVIDER:MODEL, e.g. openai:gpt-4o-mini; "
            f"providers: {', '.join(PROVIDERS)}"
        )
    if kind not in PROVIDERS:
        raise ConfigError(
            f"unknown judge provider {kind!r} in {spec!r}; known: {', '.join(PROVIDERS)}, local"
        )
    return kind, model


def is_local_spec(spec: str | None) -> bool:
    """Whether ``spec`` names the local judge: None, ``"local"`` or ``"local:FILE"``."""
    return spec is None or spec.strip() == "local" or spec.strip().startswith("local:")


def local_calibration(spec: str | None) -> str | None:
    """The calibration file of a ``"local:FILE"`` spec (None for any other spec); ``"local:"``
    with no file is a ConfigError."""
    if spec is None:
        return None
    kind, sep, rest = spec.strip().partition(":")
    if kind != "local" or not sep:
        return None
    if not rest.strip():
        raise ConfigError(
            "judge spec 'local:' names no calibration file: use 'local' or 'local:FILE' "
            "(a file that `ragmeter calibrate` wrote)"
        )
    return rest.strip()


def make_provider(spec: str, *, base_url: str | None = None, api_key_env: str | None = None) -> Any:
    kind, model = parse_spec(spec)
    return PROVIDERS[kind].builder()(model, base_url=base_url, api_key_env=api_key_env)


def make_judge(
    spec: str | None,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    embeddings: str | None = None,
    embeddings_base_url: str | None = None,
    embeddings_api_key_env: str | None = None,
    config: JudgeConfig | None = None,
    cache_path: str | Path | None = None,
    prompts_dir: str | Path | None = None,
) -> Judge:
    """Build the judge ``spec`` names.

    ``embeddings``: ``None`` or ``"local"`` (the offline embedder), ``"none"`` (no embeddings: metrics
    that embed are refused before any call), or a spec like ``"openai:text-embedding-3-small"`` /
    ``"openai-compatible:bge-m3"`` (with ``embeddings_base_url``, else ``base_url``).
    ``cache_path``: an SQLite file for the reply cache (None: no cache).
    """
    calibration = local_calibration(spec)
    if spec is None or spec.strip() == "local" or calibration is not None:
        if base_url is not None:
            raise ConfigError(
                "--base-url is for a remote judge (e.g. openai-compatible:MODEL), not the local judge"
            )
        from ragmeter.local.judge import LocalJudge

        judge: Judge = LocalJudge(calibration=calibration)
        return judge
    kind, model = parse_spec(spec)
    entry = PROVIDERS[kind]
    cfg = config or JudgeConfig()
    if entry.structured and cfg.structured == "auto":
        cfg = replace(cfg, structured=entry.structured)
    provider = entry.builder()(model, base_url=base_url, api_key_env=api_key_env)
    emb_provider = _embedding_provider(
        embeddings,
        judge_kind=kind,
        base_url=base_url,
        api_key_env=api_key_env,
        embeddings_base_url=embeddings_base_url,
        embeddings_api_key_env=embeddings_api_key_env,
    )
    cache = LLMCache(cache_path) if cache_path is not None else None
    client = ModelClient(provider, cfg, cache)
    embedder: Any
    if emb_provider == "local":
        from ragmeter.local.embedders import default_embedder

        embedder = default_embedder()
    elif emb_provider is None:
        embedder = None
    else:
        embedder = ModelClient(emb_provider, config or JudgeConfig(), cache)
    llm = LLMJudge(client, embedder, prompts_dir)
    if cache is not None:
        llm._owned.append(cache)
    return llm


def _embedding_provider(
    embeddings: str | None,
    *,
    judge_kind: str,
    base_url: str | None,
    api_key_env: str | None,
    embeddings_base_url: str | None,
    embeddings_api_key_env: str | None,
) -> Any:
    """``"local"``, None (no embedder) or an embedding provider."""
    if embeddings is None or embeddings.strip() == "local":
        return "local"
    if embeddings.strip() == "none":
        return None
    kind, _ = parse_spec(embeddings)
    same_endpoint = kind == judge_kind and embeddings_base_url in (None, base_url)
    url = embeddings_base_url or (base_url if kind == judge_kind or kind == "openai-compatible" else None)
    key_env = embeddings_api_key_env or (api_key_env if same_endpoint else None)
    return make_provider(embeddings, base_url=url, api_key_env=key_env)


def make_judge_from_recipe(recipe: Mapping[str, Any]) -> Judge:
    """Build a judge from a JSON-able recipe: ``spec`` (None or ``"local"``: the local judge) and
    the keyword arguments of :func:`make_judge` (``base_url``, ``api_key_env``, ``embeddings``,
    ``embeddings_base_url``, ``config`` as a dict of :class:`JudgeConfig` fields, ``cache_path``,
    ``prompts_dir``). The CLI stores one in each run record (``judge_recipe``) for ``--resume``; a
    recipe is also how ``engine="ray"`` builds the judge on every worker."""
    known = {
        "spec",
        "base_url",
        "api_key_env",
        "embeddings",
        "embeddings_base_url",
        "config",
        "cache_path",
        "prompts_dir",
    }
    unknown = sorted(set(recipe) - known)
    if unknown:
        raise ConfigError(
            f"unknown judge recipe key(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    spec = recipe.get("spec")
    if spec in (None, "local"):
        return make_judge(None)
    if local_calibration(spec) is not None:
        return make_judge(spec)
    return make_judge(
        spec,
        base_url=recipe.get("base_url"),
        api_key_env=recipe.get("api_key_env"),
        embeddings=recipe.get("embeddings"),
        embeddings_base_url=recipe.get("embeddings_base_url"),
        config=JudgeConfig.from_dict(dict(recipe.get("config") or {})),
        cache_path=recipe.get("cache_path"),
        prompts_dir=recipe.get("prompts_dir"),
    )
