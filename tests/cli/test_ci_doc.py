"""The CI examples in docs/ci.md run as written (offline, local judge) and their JUnit files are valid."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from ragmeter.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
DOC = ROOT / "docs" / "ci.md"


def _workflows() -> dict[str, Any]:
    """The YAML blocks of docs/ci.md, parsed: {'github': ..., 'gitlab': ...}."""
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 2
    return {"github": yaml.safe_load(blocks[0]), "gitlab": yaml.safe_load(blocks[1])}


def _commands(kind: str) -> list[str]:
    wf = _workflows()[kind]
    if kind == "github":
        lines = [s["run"] for s in wf["jobs"]["ragmeter"]["steps"] if "run" in s]
    else:
        lines = wf["rag-quality"]["script"]
    assert lines[0] == "pip install ragmeter"
    return [line for line in lines if line.startswith("ragmeter ")]


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_ci_examples_run_as_written(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "eval").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "eval" / "baseline.jsonl")
    shutil.copy(EXAMPLE, tmp_path / "eval" / "candidate.jsonl")
    monkeypatch.chdir(tmp_path)
    commands = _commands(kind)
    assert [c.split()[1] for c in commands] == ["evaluate", "evaluate", "compare"]
    for command in commands:
        res = CliRunner().invoke(cli, shlex.split(command)[1:], catch_exceptions=False)
        assert res.exit_code == 0, f"{command}\n{res.stderr}"
    for name in ("ragmeter-gates.xml", "ragmeter-compare.xml"):
        root = ET.parse(tmp_path / name).getroot()
        assert root.tag == "testsuites" and int(root.get("tests", "0")) >= 2 and root.get("failures") == "0"
    if kind == "gitlab":
        reports = _workflows()["gitlab"]["rag-quality"]["artifacts"]["reports"]["junit"]
        assert sorted(reports) == ["ragmeter-compare.xml", "ragmeter-gates.xml"]


def test_ci_gate_fails_on_an_unfaithful_candidate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    (tmp_path / "eval").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "eval" / "baseline.jsonl")
    (tmp_path / "eval" / "candidate.jsonl").write_text(
        "".join(
            json.dumps(dict(r, answer=rows[(i + 1) % len(rows)]["answer"])) + "\n" for i, r in enumerate(rows)
        )
    )
    monkeypatch.chdir(tmp_path)
    codes = [
        CliRunner().invoke(cli, shlex.split(c)[1:], catch_exceptions=False).exit_code
        for c in _commands("github")
    ]
    assert codes == [0, 1, 1]  # the candidate fails its absolute gates and regresses against the baseline
