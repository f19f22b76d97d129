"""ragmeter: measure the quality of retrieval-augmented generation.

The public API is what ``__all__`` lists; everything else may change between versions.
"""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_exports
from ragmeter.errors import (
    ConfigError,
    ContentFiltered,
    ContextTooLong,
    DatasetError,
    EndpointError,
    JudgeError,
    JudgeOutputError,
    RagmeterError,
    RateLimitError,
    RequestRejected,
    RunError,
    TransportError,
    Unreachable,
    UnsupportedStepError,
)

if TYPE_CHECKING:
    from ragmeter.dataset import Dataset, Sample, load_dataset
    from ragmeter.judges.base import GeneratedQuestions, Judge, Verdict
    from ragmeter.judges.config import JudgeConfig
    from ragmeter.judges.factory import make_judge
    from ragmeter.metrics.base import Metric, Score, ScoreError, register_metric
    from ragmeter.metrics.registry import get_metric, list_metrics
    from ragmeter.metrics.rubric import rubric
    from ragmeter.pipeline import run_pipeline, run_retriever
    from ragmeter.report.comparison import Comparison, compare_runs
    from ragmeter.retrieval.api import evaluate_retrieval
    from ragmeter.run.agreement import aagreement, agreement
    from ragmeter.run.api import evaluate
    from ragmeter.run.calibrate import CalibrationReport, acalibrate, calibrate
    from ragmeter.run.config import RunConfig
    from ragmeter.run.result import MetricSummary, Result
    from ragmeter.run.runner import aevaluate
    from ragmeter.testset import generate_testset

# The rest of the API is imported on first use (see ragmeter._lazy).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Dataset": "ragmeter.dataset",
        "Sample": "ragmeter.dataset",
        "load_dataset": "ragmeter.dataset",
        "GeneratedQuestions": "ragmeter.judges.base",
        "Judge": "ragmeter.judges.base",
        "Verdict": "ragmeter.judges.base",
        "JudgeConfig": "ragmeter.judges.config",
        "make_judge": "ragmeter.judges.factory",
        "Metric": "ragmeter.metrics.base",
        "Score": "ragmeter.metrics.base",
        "ScoreError": "ragmeter.metrics.base",
        "get_metric": "ragmeter.metrics.registry",
        "list_metrics": "ragmeter.metrics.registry",
        "register_metric": "ragmeter.metrics.base",
        "rubric": "ragmeter.metrics.rubric",
        "run_pipeline": "ragmeter.pipeline",
        "run_retriever": "ragmeter.pipeline",
        "Comparison": "ragmeter.report.comparison",
        "compare_runs": "ragmeter.report.comparison",
        "evaluate_retrieval": "ragmeter.retrieval.api",
        "aagreement": "ragmeter.run.agreement",
        "agreement": "ragmeter.run.agreement",
        "evaluate": "ragmeter.run.api",
        "CalibrationReport": "ragmeter.run.calibrate",
        "acalibrate": "ragmeter.run.calibrate",
        "calibrate": "ragmeter.run.calibrate",
        "RunConfig": "ragmeter.run.config",
        "MetricSummary": "ragmeter.run.result",
        "Result": "ragmeter.run.result",
        "aevaluate": "ragmeter.run.runner",
        "generate_testset": "ragmeter.testset",
    },
)


__all__ = [
    "CalibrationReport",
    "Comparison",
    "ConfigError",
    "ContentFiltered",
    "ContextTooLong",
    "Dataset",
    "DatasetError",
    "EndpointError",
    "GeneratedQuestions",
    "Judge",
    "JudgeConfig",
    "JudgeError",
    "JudgeOutputError",
    "Metric",
    "MetricSummary",
    "RagmeterError",
    "RateLimitError",
    "RequestRejected",
    "Result",
    "RunConfig",
    "RunError",
    "Sample",
    "Score",
    "ScoreError",
    "TransportError",
    "Unreachable",
    "UnsupportedStepError",
    "Verdict",
    "__version__",
    "aagreement",
    "acalibrate",
    "aevaluate",
    "agreement",
    "calibrate",
    "compare_runs",
    "evaluate",
    "evaluate_retrieval",
    "generate_testset",
    "get_metric",
    "list_metrics",
    "load_dataset",
    "make_judge",
    "register_metric",
    "rubric",
    "run_pipeline",
    "run_retriever",
]
