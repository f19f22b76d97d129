"""The fault run: 200 samples through the real HTTP client while 30% of requests fail.

The run must finish; every (sample, metric) is either scored or invalid with its cause; the
endpoint never sees more requests in flight than the limit; and a second run of the same data is
served from the cache with zero requests.
"""

from __future__ import annotations

from pathlib import Path

import ragmeter
from helpers.server import FakeOpenAIServer
from ragmeter import JudgeConfig, make_judge

KNOWN_CAUSES = {
    "JudgeOutputError",
    "RateLimitError",
    "TransportError",
    "JudgeError",
    "NoClaims",
    "NoQuestions",
}


def _rows(n: int) -> list[dict[str, object]]:
    return [
        {
            "id": f"q{i}",
            "question": f"What does item {i} say about topic {i % 7}?",
            "contexts": [
                f"Item {i} says the topic {i % 7} is important. It was written in {1900 + i}.",
                f"Unrelated note number {i}.",
            ],
            "answer": f"Item {i} says topic {i % 7} is important. It was written in {1900 + i}.",
        }
        for i in range(n)
    ]


def _judge(server: FakeOpenAIServer, cache: Path, limit: int) -> ragmeter.Judge:
    return make_judge(
        "openai-compatible:fake-model",
        base_url=server.url,
        config=JudgeConfig(
            concurrency=limit, timeout_s=0.5, max_retries=10, backoff_base_s=0.005, backoff_max_s=0.05
        ),
        cache_path=cache,
    )


async def test_fault_run_200_samples(tmp_path: Path) -> None:
    limit = 8
    rows = _rows(200)
    with FakeOpenAIServer(fail_rate=0.3, hang_s=1.0, seed=7) as server:
        judge = _judge(server, tmp_path / "cache.sqlite", limit)
        try:
            result = await ragmeter.aevaluate(
                rows, ["faithfulness", "answer_relevance"], judge, out=tmp_path / "runs", concurrency=64
            )
        finally:
            await judge.aclose()
        first_requests = server.total_requests
        assert server.peak_in_flight <= limit
        assert sum(server.by_kind[k] for k in ("429", "500", "malformed", "timeout", "invalid_content")) > 50

        assert result.status == "finished"
        for metric in ("faithfulness", "answer_relevance"):
            s = result.summary()[metric]
            assert s.n_scored + s.n_invalid == 200, metric
            for score in result.scores(metric):
                assert score is not None
                if not score.valid:
                    assert score.error is not None and score.error.kind in KNOWN_CAUSES
                    assert score.error.message
        # Usage is attributed to jobs: every request the server saw is in some job's record
        # (requests abandoned by a client timeout are counted by the client as attempts too).
        assert result.usage.requests >= first_requests - server.by_status[499]
        assert result.usage.prompt_tokens > 0

        # Second run: the same data, the same judge settings -> all from the cache.
        server.reset_counters()
        judge2 = _judge(server, tmp_path / "cache.sqlite", limit)
        try:
            again = await ragmeter.aevaluate(rows, ["faithfulness", "answer_relevance"], judge2)
        finally:
            await judge2.aclose()
        assert server.total_requests == 0
        assert again.usage.requests == 0 and again.usage.cached_requests > 0
        for metric in ("faithfulness", "answer_relevance"):
            assert [s.value if s else None for s in again.scores(metric)] == [
                s.value if s else None for s in result.scores(metric)
            ]
