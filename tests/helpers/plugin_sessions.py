"""The pytest sessions that the plugin's tests and docs/testing.md run: their test files and the
inner-session options (run with pytester)."""

from __future__ import annotations

from pathlib import Path

import pytest

INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
"""

TESTS = """
from ragmeter import Sample
from ragmeter.testing import assert_rag

CTX = ["The Eiffel Tower was built between 1887 and 1889 for the World's Fair in Paris. It is about 330 metres tall."]

def test_ragas_names_pass():
    assert_rag(
        {"user_input": "When was the Eiffel Tower built?", "retrieved_contexts": CTX,
         "response": "The Eiffel Tower was built between 1887 and 1889."},
        {"faithfulness": 0.5, "answer_relevance": 0.3},
    )

async def test_sample_in_async_test_passes():
    assert_rag(Sample(question="How tall is the Eiffel Tower?", contexts=CTX, answer="It is about 330 metres tall.",
                      id="height"), {"faithfulness": 0.5})

def test_unfaithful_fails():
    assert_rag(
        {"query": "Who built the Eiffel Tower?", "contexts": CTX,
         "response": "The Eiffel Tower was completed in 1920 and is 500 metres tall."},
        {"faithfulness": 0.8},
    )
"""


BASELINE_TESTS = """
from ragmeter.testing import assert_rag

CTX = ["The Eiffel Tower was built between 1887 and 1889 for the World's Fair in Paris. It is about 330 metres tall.",
       "Gustave Eiffel's company designed and built the tower."]
ANSWERS = {answers!r}

def test_built():
    assert_rag({{"question": "When was the Eiffel Tower built?", "contexts": CTX, "answer": ANSWERS[0]}},
               {{"faithfulness": 0.0}})

def test_height():
    assert_rag({{"question": "How tall is the Eiffel Tower?", "contexts": CTX, "answer": ANSWERS[1]}},
               {{"faithfulness": 0.0}})

def test_designer():
    assert_rag({{"question": "Who designed the Eiffel Tower?", "contexts": CTX, "answer": ANSWERS[2]}},
               {{"faithfulness": 0.0}})
"""
GOOD = [
    "The Eiffel Tower was built between 1887 and 1889 for the World's Fair.",
    "The Eiffel Tower is about 330 metres tall.",
    "Gustave Eiffel's company designed the tower.",
]


def session(inner: pytest.Pytester, out: Path, answers: list[str], *args: str) -> pytest.RunResult:
    inner.makepyfile(test_rag=BASELINE_TESTS.format(answers=answers))
    return inner.runpytest("-p", "no:cacheprovider", f"--ragmeter-out={out}", *args)
