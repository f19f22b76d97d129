"""Fixtures of the report tests: one recorded run (fake LLM judge over loopback HTTP) and one
headless Chromium, each made once per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.browser import Browser, missing_browser
from helpers.report_runs import make_report_run
from ragmeter import Result


@pytest.fixture(scope="session")
def report_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run store holding the run ``report-test`` of :func:`helpers.report_runs.report_rows`."""
    out = tmp_path_factory.mktemp("report-runs")
    make_report_run(out)
    return out


@pytest.fixture
def report_result(report_store: Path) -> Result:
    return Result.from_store(report_store, "report-test")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    reason = missing_browser()
    if reason is not None:
        pytest.skip(f"browser tests need headless Chromium: {reason}")
    b = Browser()
    try:
        yield b
    finally:
        b.close()
