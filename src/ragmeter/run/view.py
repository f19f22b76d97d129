"""What a report reads of a run's result: the :class:`RunView` protocol.

The HTML report (:mod:`ragmeter.report.html`, :mod:`ragmeter.report.html_data`) is written from a
run's result, and :meth:`Result.to_html <ragmeter.run.result.Result.to_html>` writes the report:
each needs the other. The piece both need is this interface, which :class:`~ragmeter.run.result.Result`
implements, so the report depends on it and not on the Result class, and ``run/result.py`` imports
the report with no cycle between them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.errors import DatasetError
    from ragmeter.judges.types import Usage
    from ragmeter.log.labels import Label
    from ragmeter.log.reading import ScoreRow
    from ragmeter.metrics.base import Score
    from ragmeter.run.summary import MetricSummary


class RunView(Protocol):
    """A run's result as a report reads it (implemented by :class:`~ragmeter.run.result.Result`)."""

    @property
    def run_id(self) -> str: ...
    @property
    def meta(self) -> Mapping[str, Any]: ...
    @property
    def status(self) -> str: ...
    @property
    def store_dir(self) -> Path | None: ...
    @property
    def metric_names(self) -> Sequence[str]: ...
    @property
    def n_samples(self) -> int: ...
    @property
    def n_skipped(self) -> int: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def cost(self) -> float | None: ...
    @property
    def problems(self) -> Sequence[DatasetError]: ...
    @property
    def samples(self) -> Sequence[tuple[int, Sample]]: ...
    @property
    def keys(self) -> Mapping[int, str]: ...
    @property
    def labels(self) -> Sequence[Label]: ...

    def summary(self) -> Mapping[str, MetricSummary]: ...
    def row(self, idx: int, metric: str) -> ScoreRow | None: ...
    def score(self, idx: int, metric: str) -> Score | None: ...
    def scores(self, metric: str) -> list[Score | None]: ...
    def iter_samples(self) -> Iterator[tuple[int, Sample, Mapping[str, ScoreRow]]]:
        """The samples in order, each with its scores by metric."""
        ...


__all__ = ["RunView"]
