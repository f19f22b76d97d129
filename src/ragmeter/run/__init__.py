"""The runner: evaluate / aevaluate, run configuration and results."""

from ragmeter.run.api import evaluate
from ragmeter.run.config import RunConfig
from ragmeter.run.result import MetricSummary, Result
from ragmeter.run.runner import aevaluate

__all__ = ["MetricSummary", "Result", "RunConfig", "aevaluate", "evaluate"]
