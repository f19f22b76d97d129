"""The HTML report of a run: one self-contained file (see :mod:`ragmeter.report.page`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from ragmeter.report.html_data import report_data
from ragmeter.report.page import render_page, write_page

if TYPE_CHECKING:
    from ragmeter.run.view import RunView


def render_report(result: RunView, *, label_links: bool = False) -> str:
    """The run's report as one HTML document (a string). ``label_links``: each metric links to
    its labelling page (for the report ``ragmeter view`` serves, where that page exists)."""
    data = report_data(result)
    if label_links:
        data["label_page"] = "/run/" + quote(result.run_id, safe="") + "/label"
    return render_page(f"ragmeter report {result.run_id}", data, scripts=("sample.js", "report.js"))


def default_report_path(result: RunView) -> Path:
    return Path(f"ragmeter-report-{result.run_id}.html")


def write_report(result: RunView, path: str | Path | None = None) -> Path:
    """Write the run's report to ``path`` (default ``ragmeter-report-<run>.html``); return the path."""
    return write_page(
        default_report_path(result) if path is None else path, render_report(result), "the report"
    )
