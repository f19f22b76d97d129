""".ci/run's rules, run on small cases: a failed install fails the script before any test, and a
test skipped in every stage fails (.ci/never_ran.py over the stages' JUnit reports)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEVER_RAN = ROOT / ".ci" / "never_ran.py"

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.local.test_cross_encoder" name="test_end_to_end" time="0.1">{cross}</testcase>
<testcase classname="tests.integrations.test_framework_data" name="test_ragas_objects" time="0.1">{ragas}</testcase>
<testcase classname="tests.test_text" name="test_split" time="0.1"/>
</testsuite></testsuites>
"""
SKIP = '<skipped type="pytest.skip" message="{why}">skip</skipped>'


def _never_ran(*reports: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(NEVER_RAN), *map(str, reports)], capture_output=True, text=True, check=False
    )


def test_a_test_skipped_in_one_stage_and_run_in_another_passes(tmp_path: Path) -> None:
    main = tmp_path / "stage-1.xml"
    main.write_text(REPORT.format(cross=SKIP.format(why="needs torch"), ragas=SKIP.format(why="no ragas")))
    extras = tmp_path / "stage-2.xml"
    extras.write_text(REPORT.format(cross="", ragas=""))
    done = _never_ran(main, extras)
    assert done.returncode == 0, done.stderr
    assert "3 tests ran, 0 skipped in every stage (2 reports)" in done.stdout


def test_a_test_skipped_in_every_stage_fails_with_each_reason(tmp_path: Path) -> None:
    main = tmp_path / "stage-1.xml"
    main.write_text(REPORT.format(cross=SKIP.format(why="needs torch"), ragas=SKIP.format(why="no ragas")))
    extras = tmp_path / "stage-2.xml"
    extras.write_text(REPORT.format(cross="", ragas=SKIP.format(why="ragas does not import")))
    done = _never_ran(main, extras)
    assert done.returncode == 1
    assert "skipped in every stage: tests.integrations.test_framework_data::test_ragas_objects" in done.stderr
    assert "stage-1: no ragas" in done.stderr and "stage-2: ragas does not import" in done.stderr
    assert "test_cross_encoder" not in done.stderr


def test_a_module_skipped_whole_counts_as_run_where_its_tests_ran(tmp_path: Path) -> None:
    # a module-level importorskip shows as one entry with no classname, named after the module
    main = tmp_path / "stage-1.xml"
    main.write_text(
        '<testsuites><testsuite><testcase classname="" name="tests.run.test_ray_engine">'
        '<skipped message="collection skipped"/></testcase></testsuite></testsuites>'
    )
    ray = tmp_path / "stage-2.xml"
    ray.write_text(
        '<testsuites><testsuite><testcase classname="tests.run.test_ray_engine" name="test_shards"/>'
        "</testsuite></testsuites>"
    )
    assert _never_ran(main, ray).returncode == 0
    missing = _never_ran(main)
    assert missing.returncode == 1 and "::tests.run.test_ray_engine" in missing.stderr


def _ci_copy(tmp_path: Path, requirement: str) -> Path:
    """A scratch project whose .ci/run is the real one, with a test extra that pins ``requirement``."""
    project = tmp_path / "project"
    (project / ".ci").mkdir(parents=True)
    (project / ".ci" / "run").write_text((ROOT / ".ci" / "run").read_text(encoding="utf-8"), encoding="utf-8")
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'scratch'\nversion = '0'\n"
        f"[project.optional-dependencies]\ntest = ['{requirement}']\n"
        "[tool.setuptools]\npy-modules = []\n",
        encoding="utf-8",
    )
    return project


def test_a_failed_install_fails_the_script_before_any_test(tmp_path: Path) -> None:
    # A requirement no index can satisfy: pip fails, and so must .ci/run (with set -e alone, the
    # failure on the left of "&&" would not stop it). --no-index keeps pip off the network.
    project = _ci_copy(tmp_path, "a-package-that-does-not-exist-anywhere==0.0.1")
    env = {
        **os.environ,
        "RAGMETER_CI_VENV": str(tmp_path / "venv"),
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    done = subprocess.run(
        ["bash", str(project / ".ci" / "run")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "ci: the README's test command failed" in done.stderr
    assert "stage" not in done.stdout  # no later stage ran
