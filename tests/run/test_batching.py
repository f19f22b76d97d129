"""Batch scoring: metrics with ``batch_size`` score many samples per call, with the same values
as one by one; a failing batch falls back to per-sample scoring; custom metrics are untouched."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import ragmeter
from ragmeter import Metric, Sample, Score
from ragmeter.run.executor import Batch, Job, work_units

LEXICAL = ["token_f1", "rouge_l", "bleu", "exact_match"]


def _rows(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "id": f"s{i}",
            "question": f"question {i}?",
            "answer": f"the answer number {i} is {i % 7} apples",
            "reference": f"answer number {i} is {i % 5} apples and pears",
        }
        for i in range(n)
    ]
    out[3]["answer"] = "—!"  # no token left: 0.0 with a reason, in the middle of a batch
    out[5]["reference"] = "?!"  # invalid (NoTokens)
    return out


async def _one_by_one(metric: Metric, samples: Sequence[Sample]) -> list[Score]:
    return [await metric.score(s, None) for s in samples]  # type: ignore[arg-type]


async def test_batched_lexical_scores_equal_one_by_one(tmp_path: Path) -> None:
    result = await ragmeter.aevaluate(_rows(600), LEXICAL, None, out=tmp_path)
    samples = [s for _, s in result.samples]
    for name in LEXICAL:
        metric = ragmeter.get_metric(name)
        assert metric.batch_size > 1
        assert result.scores(name) == await _one_by_one(metric, samples), name


class CountingEmbedder:
    """A judge that only embeds, counting calls; vectors depend on the text alone."""

    name = "emb"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def supports(self, step: str) -> bool:
        return step == "embed"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        rows = [[len(t) % 7 + 1.0, t.count(" ") + 1.0, float(sum(map(ord, t)) % 11) + 1.0] for t in texts]
        arr = np.asarray(rows, dtype=np.float32)
        return arr / np.linalg.norm(arr, axis=1, keepdims=True)

    async def aclose(self) -> None:
        return None


async def test_semantic_similarity_embeds_a_whole_batch_in_one_call() -> None:
    judge = CountingEmbedder()
    rows = _rows(300)
    result = await ragmeter.aevaluate(rows, ["semantic_similarity"], judge)
    metric = ragmeter.get_metric("semantic_similarity")
    # one call per batch of 128 samples, two texts a sample
    assert judge.calls == [256, 256, 88]
    one_by_one = [await metric.score(s, judge) for _, s in result.samples]
    assert result.scores("semantic_similarity") == one_by_one


class Fragile(Metric):
    """Batchable, but its batch call fails whenever the batch holds a poisoned sample."""

    name = "fragile"
    requires = ("answer",)
    batch_size = 8

    async def score(self, sample: Sample, judge: Any) -> Score:
        if "poison" in (sample.answer or ""):
            raise ValueError("poisoned sample")
        return Score(float(len(sample.answer or "")))

    async def score_batch(self, samples: Sequence[Sample], judge: Any) -> list[Score]:
        if any("poison" in (s.answer or "") for s in samples):
            raise RuntimeError("the batch failed")
        return [Score(float(len(s.answer or ""))) for s in samples]


async def test_a_failing_batch_is_scored_sample_by_sample() -> None:
    rows = [{"question": "q", "answer": "poison" if i == 10 else "x" * i} for i in range(1, 20)]
    result = await ragmeter.aevaluate(rows, [Fragile()], None)
    scores = result.scores("fragile")
    assert all(s is not None for s in scores)
    bad = [i for i, s in enumerate(scores) if s is not None and not s.valid]
    assert bad == [9]  # only the poisoned sample is invalid, with its own error
    assert "poisoned sample" in scores[9].error.message  # type: ignore[union-attr]
    assert [s.value for s in scores if s is not None and s.valid] == [float(i) for i in range(1, 20) if i != 10]


def test_work_units_batch_only_batchable_metrics_in_order() -> None:
    class Plain(Metric):
        name = "plain"

    plain, fragile = Plain(), Fragile()
    jobs = [Job(i, m, Sample(question="q", answer="a")) for i in range(10) for m in (plain, fragile)]
    units = list(work_units(jobs))
    singles = [u for u in units if isinstance(u, Job)]
    batches = [u for u in units if isinstance(u, Batch)]
    assert [j.idx for j in singles] == list(range(10)) and all(j.metric is plain for j in singles)
    assert [len(b.jobs) for b in batches] == [8, 2]
    assert [j.idx for b in batches for j in b.jobs] == list(range(10))
