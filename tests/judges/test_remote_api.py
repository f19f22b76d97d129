"""A real remote judge, opt in: ``pytest -m remote`` with ``RAGMETER_REMOTE_JUDGE`` naming it.

Deselected by default (``addopts``: ``-m 'not slow and not remote'``) and never run by CI, which has
no key and no internet. To run it against your provider::

    RAGMETER_REMOTE_JUDGE=openai:gpt-4o-mini OPENAI_API_KEY=... pytest -m remote
    RAGMETER_REMOTE_JUDGE=openai-compatible:qwen2.5 RAGMETER_REMOTE_BASE_URL=http://host:8000/v1 pytest -m remote

The key comes from the provider's usual environment variable, as for ``--judge`` (docs/judges.md).
Three English and one Chinese example sample are scored with three LLM metrics: every score must be
valid, the faithful answers must score above the unfaithful ones, and the run must count its
requests and tokens.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.examples import EXAMPLE
from ragmeter import evaluate, load_dataset
from ragmeter.judges.factory import make_judge

pytestmark = pytest.mark.remote

JUDGE = os.environ.get("RAGMETER_REMOTE_JUDGE", "")
BASE_URL = os.environ.get("RAGMETER_REMOTE_BASE_URL") or None
IDS = ("en-photosynthesis", "en-eiffel-tower", "en-tides", "zh-yangtze")


@pytest.fixture(scope="module")
def judge_spec() -> str:
    if not JUDGE:
        pytest.skip("RAGMETER_REMOTE_JUDGE names no judge (e.g. openai:gpt-4o-mini)")
    return JUDGE


def test_a_remote_judge_scores_the_examples(judge_spec: str, tmp_path: Path) -> None:
    samples = [s for s in load_dataset(str(EXAMPLE)) if s.id in IDS]
    assert len(samples) == len(IDS)
    judge = make_judge(judge_spec, base_url=BASE_URL)
    result = evaluate(
        samples,
        ["faithfulness", "answer_relevance", "context_precision"],
        judge,
        out=tmp_path,
        progress=False,
    )
    for name, summary in result.summary().items():
        assert summary.n_invalid == 0, f"{name}: {summary.n_invalid} invalid scores with {judge_spec}"
    faith = {s.id: result.score(i, "faithfulness").value for i, s in result.samples}  # type: ignore[union-attr]
    assert min(faith["en-photosynthesis"], faith["en-tides"]) > max(
        faith["en-eiffel-tower"], faith["zh-yangtze"]
    )
    assert result.usage.requests > 0 and result.usage.prompt_tokens > 0, result.usage
