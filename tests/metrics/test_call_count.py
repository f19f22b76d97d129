"""The cost goal: faithfulness, answer relevance, context precision, context recall and context
relevance together in at most 3 LLM calls per sample, whatever the number of contexts, with the
contexts sent once, and a pinned prompt-token budget on the shipped example set -- over HTTP
against the loopback server (whose default responder answers every step; 4 characters a token)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

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
async def test_core_metrics_cost_at_most_three_calls_per_sample(fake_openai_server, k: int) -> None:
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
    assert fake_openai_server.total_requests <= 3 * len(data)
    # per sample: the run record attributes each model call to one job and logs memo hits elsewhere
    for idx in range(len(data)):
        steps = Counter(
            c["step"] for row in result.rows if row.idx == idx for c in row.calls if not c["cached"]
        )
        assert sum(n for s, n in steps.items() if s != "embed") <= 3, steps
        assert steps["check_contexts"] == 1, steps  # the contexts went to the judge once
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
    assert (values[True][1], values[False][1]) == (3, 7)


#: measured on the shipped example set (12 samples, 8 English, 4 Chinese) when the combined
#: check_contexts step came in: 3.0 calls and 1,047 prompt tokens per sample (before: 4.0 and 1,716)
PROMPT_TOKENS_PER_SAMPLE = 1150


async def test_prompt_tokens_per_sample_on_the_shipped_examples(fake_openai_server) -> None:
    import ragmeter.examples

    path = Path(ragmeter.examples.__file__).with_name("rag_samples.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    judge = make_judge(
        "openai-compatible:m", base_url=fake_openai_server.url, embeddings="none", config=JudgeConfig()
    )
    judge.embedder = HashEmbedder()  # type: ignore[attr-defined]
    result = await aevaluate(rows, CORE, judge, concurrency=8)
    await judge.aclose()
    assert result.n_invalid == 0
    n = len(rows)
    assert fake_openai_server.total_requests == 3 * n
    per_sample = result.usage.prompt_tokens / n
    assert per_sample <= PROMPT_TOKENS_PER_SAMPLE, per_sample
    # each prompt starts with the step's fixed text: the same for every sample, whatever its data
    prefixes: dict[str, set[str]] = {}
    for body in fake_openai_server.requests:
        system, user = (m["content"] for m in body["messages"][:2])
        name = body["response_format"]["json_schema"]["name"]
        lang = "zh" if "\u4e00" <= system[0] <= "\u9fff" else "en"
        prefixes.setdefault(f"{name}/{lang}", set()).add(system + user.split("<data-", 1)[0])
    assert all(len(p) == 1 for p in prefixes.values()), {k: len(v) for k, v in prefixes.items()}
