"""Sync entry points over the async core."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.run.config import RunConfig
from ragmeter.run.result import Result
from ragmeter.run.runner import aevaluate
from ragmeter.run.sync import run_sync


def evaluate(
    data: Any,
    metrics: Any,
    judge: Any = None,
    *,
    config: RunConfig | None = None,
    mapping: Mapping[str, str] | None = None,
    meta: Mapping[str, Any] | None = None,
    **options: Any,
) -> Result:
    """Score ``data`` with ``metrics``; see :func:`ragmeter.aevaluate` for the arguments.

    Works in plain scripts and inside a running event loop (Jupyter) alike.
    """
    return run_sync(aevaluate(data, metrics, judge, config=config, mapping=mapping, meta=meta, **options))
