"""pytest plugin of ragmeter, registered through the ``pytest11`` entry point.

It only adds its options and, at the end of a session in which
:func:`ragmeter.testing.assert_rag` was called, a summary table (and, with ``--ragmeter-out``,
the run record and the comparison with a baseline). It imports nothing but pytest and the
standard library: sessions that never call ``assert_rag`` load nothing of ragmeter and behave
exactly as without the plugin.

Options:

- ``--ragmeter-judge SPEC``: the judge of ``assert_rag`` calls that name none (default: the
  offline local judge). One judge (one client, one memo, and with ``--ragmeter-out`` one reply
  cache file) serves the whole session.
- ``--ragmeter-base-url URL``: its endpoint, for an OpenAI-compatible judge.
- ``--ragmeter-out DIR``: record the session's assertions as one run in the run store ``DIR``,
  so ``ragmeter runs show``, ``report`` and ``compare`` work on test sessions.
- ``--ragmeter-baseline RUN``: compare the recorded session with run ``RUN`` of that store (e.g.
  the main branch's session) as ``ragmeter compare RUN SESSION --fail-on-regression`` does, with
  ``--ragmeter-margin M`` and ``--ragmeter-max-new-invalid N``; the summary shows the comparison
  and a regression fails the session (exit status 1). A sample the baseline scored validly and
  the session did not is a regression, as in ``compare``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest


@dataclass
class Settings:
    """One pytest session's ragmeter options; ``session`` is the ragmeter.testing session that
    ``assert_rag`` creates on first use (None while nothing was asserted)."""

    judge: str | None = None
    base_url: str | None = None
    out: str | None = None
    baseline: str | None = None
    margin: float = 0.0
    max_new_invalid: int = 0
    session: Any = None


# A stack, not one value: pytester runs sessions inside a session, in the same process.
_STACK: list[Settings] = []


def current() -> Settings | None:
    """The innermost running pytest session's settings (None outside pytest)."""
    return _STACK[-1] if _STACK else None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragmeter", "ragmeter: RAG quality assertions (ragmeter.testing.assert_rag)")
    group.addoption(
        "--ragmeter-judge",
        default=None,
        metavar="SPEC",
        help="judge for assert_rag: 'local' (default, offline), 'openai:MODEL', 'openai-compatible:MODEL' "
        "(with --ragmeter-base-url), 'ollama:MODEL', ...; one client and cache for the session",
    )
    group.addoption(
        "--ragmeter-base-url",
        default=None,
        metavar="URL",
        help="base URL of the OpenAI-compatible endpoint of --ragmeter-judge (…/v1)",
    )
    group.addoption(
        "--ragmeter-out",
        default=None,
        metavar="DIR",
        help="record the session's assert_rag scores as one run in this run store directory",
    )
    group.addoption(
        "--ragmeter-baseline",
        default=None,
        metavar="RUN",
        help="compare the recorded session with this run of the --ragmeter-out store (as ragmeter compare "
        "--fail-on-regression); a regression fails the session",
    )
    group.addoption(
        "--ragmeter-margin",
        type=float,
        default=0.0,
        metavar="M",
        help="with --ragmeter-baseline: drop that a regression must exceed, in the metric's units (default 0)",
    )
    group.addoption(
        "--ragmeter-max-new-invalid",
        type=int,
        default=0,
        metavar="N",
        help="with --ragmeter-baseline: samples per metric that may be valid in the baseline and not in the "
        "session (a count; default 0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    base_url = config.getoption("ragmeter_base_url")
    judge = config.getoption("ragmeter_judge")
    if base_url and not judge:
        raise pytest.UsageError("--ragmeter-base-url needs --ragmeter-judge (e.g. openai-compatible:MODEL)")
    out, baseline = config.getoption("ragmeter_out"), config.getoption("ragmeter_baseline")
    margin, allowed = config.getoption("ragmeter_margin"), config.getoption("ragmeter_max_new_invalid")
    if baseline and not out:
        raise pytest.UsageError("--ragmeter-baseline needs --ragmeter-out DIR, the run store that holds the baseline")
    if not 0.0 <= margin < 1e9:
        raise pytest.UsageError(f"--ragmeter-margin must be >= 0, got {margin}")
    if allowed < 0:
        raise pytest.UsageError(f"--ragmeter-max-new-invalid must be a count >= 0, got {allowed}")
    _STACK.append(
        Settings(judge=judge, base_url=base_url, out=out, baseline=baseline, margin=margin, max_new_invalid=allowed)
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    settings = current()
    if settings is None:
        return
    if settings.session is not None:
        settings.session.finish()
        if settings.session.failed_against_baseline and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    settings = current()
    if settings is None or settings.session is None:
        return
    settings.session.report(terminalreporter.write_sep, terminalreporter.write_line)


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _STACK:
        return
    settings = _STACK.pop()
    if settings.session is not None:
        settings.session.close()
        settings.session = None
