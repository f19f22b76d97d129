"""The runner: evaluate / aevaluate, run configuration and results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_exports

if TYPE_CHECKING:
    from ragmeter.run.api import evaluate
    from ragmeter.run.config import RunConfig
    from ragmeter.run.result import MetricSummary, Result
    from ragmeter.run.runner import aevaluate

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "evaluate": "ragmeter.run.api",
        "RunConfig": "ragmeter.run.config",
        "MetricSummary": "ragmeter.run.result",
        "Result": "ragmeter.run.result",
        "aevaluate": "ragmeter.run.runner",
    },
)

__all__ = ["MetricSummary", "Result", "RunConfig", "aevaluate", "evaluate"]
