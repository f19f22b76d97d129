"""Metrics by name: every built-in metric loaded, found by its name, by another tool's name for it
(an alias such as Ragas's ``answer_relevancy``) or by a cutoff form such as ``ndcg@5``.

Registering is in :mod:`ragmeter.metrics.base` (``register_metric``, ``register_alias``), which
imports no metric, so every metric module imports it; this module imports the built-in metric
modules (which registers them) and looks names up, so it is imported by no metric.
"""

from __future__ import annotations

import logging
from typing import Any

from ragmeter.errors import ConfigError

# Importing the built-in metric modules registers their metrics (and aliases.py other tools' names).
from ragmeter.metrics import (  # noqa: F401
    aliases,
    answer_relevance,
    context,
    conversation,
    correctness,
    faithfulness,
    graded,
    lexical,
    noise,
    similarity,
)
from ragmeter.metrics import base as _base
from ragmeter.metrics.base import Metric, MetricAlias
from ragmeter.metrics.retrieval import metric_from_at_name

_logger = logging.getLogger("ragmeter.metrics")


def list_aliases() -> dict[str, MetricAlias]:
    """Other tools' metric names that ragmeter accepts, by name."""
    return dict(sorted(_base._ALIASES.items()))


def resolve_alias(name: str) -> tuple[str, dict[str, Any], MetricAlias | None]:
    """(registered name, its arguments, the alias or None) for a metric name."""
    alias = _base._ALIASES.get(name)
    if alias is None:
        return name, {}, None
    return alias.target, dict(alias.kwargs), alias


def get_metric(name: str, **kwargs: Any) -> Metric:
    """Instantiate a registered metric by name, or by another tool's name for it (a
    :class:`MetricAlias`, e.g. Ragas's ``answer_relevancy``): the alias is logged once per call,
    with the ragmeter metric it maps to and how the definitions differ (logger
    ``ragmeter.metrics``; with no logging configured it prints to stderr). A retrieval metric's
    cutoff form (``ndcg@5``, ``recall@20``) is that metric with ``k`` set."""
    name, alias_kwargs, alias = resolve_alias(name)
    if alias is not None:
        _logger.warning("%s", alias.notice())
        kwargs = {**alias_kwargs, **kwargs}
    try:
        factory = _base._REGISTRY[name]
    except KeyError:
        metric = metric_from_at_name(name, **kwargs) if "@" in name else None
        if metric is not None:
            return metric
        known = ", ".join(sorted(_base._REGISTRY))
        raise ConfigError(
            f"unknown metric {name!r}; known metrics: {known} (and other tools' names: `ragmeter metrics --aliases`)"
        ) from None
    return factory(**kwargs)


def list_metrics() -> dict[str, type[Metric]]:
    """Registered metric classes by name."""
    return {k: v for k, v in sorted(_base._REGISTRY.items())}  # type: ignore[misc]


def resolve_metrics(metrics: Any) -> list[Metric]:
    """Accept metric instances, names, or a comma-separated string; return instances."""
    if metrics is None:
        raise ConfigError("no metrics given")
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    if isinstance(metrics, Metric):
        metrics = [metrics]
    out: list[Metric] = []
    for m in metrics:
        if isinstance(m, str):
            out.append(get_metric(m))
        elif isinstance(m, Metric):
            out.append(m)
        elif isinstance(m, type) and issubclass(m, Metric):
            out.append(m())
        else:
            raise ConfigError(f"not a metric: {m!r}")
    names = [m.name for m in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ConfigError(f"metric given twice: {', '.join(sorted(dupes))}")
    if not out:
        raise ConfigError("no metrics given")
    return out


__all__ = ["get_metric", "list_aliases", "list_metrics", "resolve_alias", "resolve_metrics"]
