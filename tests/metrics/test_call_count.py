"""The cost goal: faithfulness, answer relevance, context precision, context recall and context
relevance together in at most 4 LLM calls per sample, whatever the number of contexts, over HTTP
against the loopback server (whose default responder answers every step)."""

from __future__ import annotations

from collections import Counter

import pytest

from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.factory import make_judge
from ragmeter.judges.providers.fake import hash_embedding
from ragmeter.run.runner import aevaluate

CORE = ["faithfulness", "answer_relevance", "context_precision", "context_recall", "context_relevance"]


class HashEmbedder:
    def embed(self, texts):  # type: ignore[no-untyped-def]
        import numpy as np

        return np.stack([hash_embedding(t, 64) for t in texts])


def samples(k: int) -> list[dict[str, object]]:
    out = []
    for i in range(4):
        ctx = [f"Fact {j} about topic {i}: the tower was built in 18{j:02d}. It is tall." for j in range(k)]
        out.append(
            {
                "question": f"When was tower {i} built?",
                "contexts": ctx,
                "answer": f"Tower {i} was built in 1801. It is tall.",
                "reference": f"Tower {i} was built in 1801.",
            }
        )
    return out


@pytest.mark.parametrize("k", [1, 3, 12])
async def test_core_metrics_cost_at_most_four_calls_per_sample(fake_openai_server, k: int) -> None:
    judge = make_judge(
        "openai-compatible:m",
        base_url=fake_openai_server.url,
        embeddings="none",
        config=JudgeConfig(backoff_base_s=0, backoff_max_s=0),
    )
    judge.embedder = HashEmbedder()  # type: ignore[attr-defined]
    data = samples(k)
    result = await aevaluate(data, CORE, judge, concurrency=16)
    await judge.aclose()
    assert result.n_invalid == 0, [s.error for m in CORE for s in result.scores(m) if s and s.error]
    assert fake_openai_server.total_requests <= 4 * len(data)
    # per sample: the run record attributes each model call to one job and logs memo hits elsewhere
    for idx in range(len(data)):
        steps = Counter(
            c["step"] for row in result.rows if row.idx == idx for c in row.calls if not c["cached"]
        )
        assert sum(n for s, n in steps.items() if s != "embed") <= 4, steps
        memo = [c for row in result.rows if row.idx == idx for c in row.calls if c["cached"]]
        assert len(memo) >= 3 and all(c["usage"]["prompt_tokens"] == 0 for c in memo)


async def test_without_combined_steps_the_same_scores_cost_seven_calls(fake_openai_server) -> None:
    values = {}
    for combine in (True, False):
        judge = make_judge(
            "openai-compatible:m", base_url=fake_openai_server.url, embeddings="none", config=JudgeConfig()
        )
        judge.embedder = HashEmbedder()  # type: ignore[attr-defined]
        judge.combine_steps = combine  # type: ignore[attr-defined]
        fake_openai_server.reset_counters()
        result = await aevaluate(samples(3)[:1], CORE, judge)
        await judge.aclose()
        values[combine] = ({m: result.scores(m)[0].value for m in CORE}, fake_openai_server.total_requests)  # type: ignore[union-attr]
    assert values[True][0] == pytest.approx(values[False][0])
    assert (values[True][1], values[False][1]) == (4, 7)
