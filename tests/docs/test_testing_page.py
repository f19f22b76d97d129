"""docs/testing.md shows what pytest prints with the plugin: a failing ``assert_rag``, the session
summary, and a session against a baseline. Those lines are the output of the sessions here
(tests/helpers/plugin_sessions.py, the local judge, offline), so a change of the judge or of the
plugin's output that moves a figure fails here, naming the line, until the page says the new one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers.plugin_sessions import GOOD, INI, TESTS, session
from ragmeter.run.result import Result

pytest_plugins = ("pytester",)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
MADE_UP = "The Eiffel Tower was designed by Thomas Edison in 1920."

# The lines compared: a metric row of a summary or a comparison table, an assertion's lines (E ...)
# and the FAILED line; lines with a run id (they differ from run to run) are left out.
COMPARED = re.compile(r"^(E |FAILED |(faithfulness|answer_relevance)\s)")


def _blocks(text: str) -> list[list[str]]:
    return [b.splitlines() for b in re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)]


def _compared(lines: list[str]) -> list[str]:
    return [" ".join(line.split()) for line in lines if COMPARED.match(line)]


def _block_with(marker: str) -> list[str]:
    found = [b for b in _blocks(PAGE.read_text(encoding="utf-8")) if any(marker in line for line in b)]
    assert len(found) == 1, f"docs/testing.md: expected one block with {marker!r}, found {len(found)}"
    return _compared(found[0])


@pytest.fixture
def inner(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    return pytester


def _same(page_lines: list[str], run_lines: list[str], what: str) -> None:
    missing = [line for line in page_lines if line not in run_lines]
    assert not missing, (
        f"docs/testing.md, {what}: these lines are not the run's:\n"
        + "\n".join(missing)
        + "\nthe run printed:\n"
        + "\n".join(run_lines)
    )


def test_the_failure_and_the_session_summary_are_the_runs(inner: pytest.Pytester, tmp_path: Path) -> None:
    inner.makepyfile(test_rag=TESTS)
    res = inner.runpytest("-p", "no:cacheprovider", f"--ragmeter-out={tmp_path / 'runs'}")
    res.assert_outcomes(passed=2, failed=1)
    run = _compared(res.stdout.lines)
    failure = _block_with("AssertionError: ragmeter:")
    summary = _block_with("FAILED test_rag.py::test_unfaithful_fails: faithfulness")
    assert len(failure) == 3 and len(summary) == 3  # the page still shows what is compared
    _same(failure, run, "the failing assert_rag")
    _same(summary, run, "the session summary")


def test_the_session_against_a_baseline_is_the_runs(inner: pytest.Pytester, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    session(inner, out, GOOD).assert_outcomes(passed=3)
    baseline = Result.from_store(out, "latest").run_id
    res = session(inner, out, [GOOD[0], "I don't know.", MADE_UP], "--ragmeter-baseline", baseline)
    res.assert_outcomes(passed=2, failed=1)
    run = _compared(res.stdout.lines)
    page = _block_with("against baseline")
    assert len(page) == 3
    _same(page, run, "the session against a baseline")
    # the prose after the block quotes the comparison's difference
    diff = next(line.split()[1] for line in run if line.startswith("faithfulness") and "[" in line)
    text = PAGE.read_text(encoding="utf-8")
    assert f"B − A = {diff.replace('-', '−')}" in text, f"docs/testing.md should quote B − A = {diff}"
