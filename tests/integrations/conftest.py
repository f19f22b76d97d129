"""Labelled questions over examples/docs for the framework tests."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

QUESTIONS = [
    {
        "id": "eiffel",
        "question": "How tall is the Eiffel Tower and who built the Eiffel Tower?",
        "reference": "About 330 metres; Gustave Eiffel's company built it.",
        "reference_context_ids": ["en/eiffel_tower#0"],
    },
    {
        "id": "gil",
        "question": "What does the global interpreter lock in CPython allow?",
        "reference": "Only one thread executes Python bytecode at a time.",
        "reference_context_ids": ["en/python_gil#0"],
    },
    {
        "id": "photosynthesis",
        "question": "What is photosynthesis and where does photosynthesis take place?",
        "reference": "Plants convert light energy into chemical energy, mainly in chloroplasts.",
        "reference_context_ids": ["en/photosynthesis#0"],
    },
    {
        "id": "failing",
        "question": "boom: a question the retriever fails on",
        "reference": "none",
        "reference_context_ids": ["en/great_wall_of_china#0"],
    },
]


@pytest.fixture
def questions_file(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    return path


@pytest.fixture
def cli_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, questions_file: Path) -> Callable[..., Any]:
    """``run(module_source, kind, attr, metrics)``: write the module next to questions.jsonl, run
    ``ragmeter evaluate questions.jsonl --<kind> module:attr -m metrics --json`` there and return
    (the JSON summary, the recorded Result)."""
    from click.testing import CliRunner

    from ragmeter.cli.main import cli
    from ragmeter.run.result import Result

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))

    def run(source: str, kind: str, attr: str, metrics: str) -> tuple[dict[str, Any], Result]:
        name = f"rag_{kind}_{abs(hash((tmp_path, source))) % 10**8}"
        (tmp_path / f"{name}.py").write_text(source)
        args = [
            "evaluate",
            "questions.jsonl",
            f"--{kind}",
            f"{name}:{attr}",
            "-m",
            metrics,
            "--out",
            "runs",
            "--json",
            "--no-progress",
        ]
        res = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert res.exit_code == 0, res.stderr
        summary = json.loads(res.stdout)
        return summary, Result.from_store("runs", summary["run_id"])

    return run
