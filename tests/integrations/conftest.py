"""Labelled questions over examples/docs for the framework tests."""

from __future__ import annotations

import json
from pathlib import Path

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
