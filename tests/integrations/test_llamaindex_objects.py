"""ragmeter on real LlamaIndex objects (llama-index-core): a VectorStoreIndex over examples/docs with
the MockLLM and a deterministic embedding, its query engine and retriever, through ``run_pipeline``,
``run_retriever`` and ``evaluate --pipeline / --retriever``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

import ragmeter
from integrations.conftest import QUESTIONS
from integrations.frameworks import (
    llamaindex_failing_retriever,
    llamaindex_index,
    llamaindex_query_engine,
)


@pytest.fixture(scope="module")
def index() -> Any:
    return llamaindex_index()


def _by_id(ds: ragmeter.Dataset) -> dict[str, ragmeter.Sample]:
    return {str(s.id): s for s in ds}


def test_query_engine_answers_contexts_ids_scores_latency_and_errors(
    index: Any, questions_file: Path
) -> None:
    engine = llamaindex_query_engine(index, k=3)
    ds = ragmeter.run_pipeline(engine, questions_file, workers=2)
    samples = _by_id(ds)
    assert set(samples) == {"eiffel", "gil", "photosynthesis"}
    eiffel = samples["eiffel"]
    # MockLLM echoes its prompt, which holds the retrieved passages
    assert eiffel.answer and "Gustave Eiffel" in eiffel.answer
    assert eiffel.context_ids is not None and len(eiffel.context_ids) == 3
    assert eiffel.context_ids[0] == "en/eiffel_tower#0"
    assert eiffel.contexts[0].startswith("The Eiffel Tower")
    scores = eiffel.metadata["context_scores"]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True) and 0 < scores[-1] <= scores[0] <= 1
    assert eiffel.metadata["latency_s"] > 0
    assert eiffel.reference_context_ids == ("en/eiffel_tower#0",)  # the labels are kept
    (problem,) = [p for p in ds.problems if p.row == 4]
    assert "RuntimeError: the vector store is down" in str(problem) and problem.field == "question"


async def test_async_query_engine_path(index: Any) -> None:
    engine = llamaindex_query_engine(index, k=2)
    ds = await ragmeter.pipeline.arun_pipeline(engine, [QUESTIONS[1]["question"]])
    assert ds[0].context_ids and ds[0].context_ids[0] == "en/python_gil#0"


def test_retriever_scored_by_retrieval_metrics(index: Any, questions_file: Path) -> None:
    retriever = llamaindex_failing_retriever(index, k=3)
    ds = ragmeter.run_retriever(retriever, questions_file)
    assert len(ds) == 3 and all(s.answer is None for s in ds)
    assert all(len(s.metadata["context_scores"]) == 3 for s in ds)
    result = ragmeter.evaluate(ds, ["hit_rate", "mrr"], progress=False)
    summary = result.summary()
    assert summary["hit_rate"].mean == 1.0 and summary["hit_rate"].n_scored == 3
    assert summary["mrr"].mean == 1.0


def test_plain_index_retriever(index: Any) -> None:
    ds = ragmeter.run_retriever(index.as_retriever(similarity_top_k=2), ["Where is the Great Wall of China?"])
    assert ds[0].context_ids == ("en/great_wall_of_china#0", ds[0].context_ids[1])
    assert len(ds[0].metadata["context_scores"]) == 2


MODULE = """
from integrations.frameworks import llamaindex_failing_retriever, llamaindex_index, llamaindex_query_engine

INDEX = llamaindex_index()
query_engine = llamaindex_query_engine(INDEX, k=3)
retriever = llamaindex_failing_retriever(INDEX, k=3)
"""


@pytest.mark.parametrize("kind", ["pipeline", "retriever"])
def test_cli_evaluate_runs_the_real_objects(cli_project: Callable[..., Any], kind: str) -> None:
    attr, metrics = (
        ("query_engine", "token_f1,hit_rate") if kind == "pipeline" else ("retriever", "hit_rate,ndcg_at_k")
    )
    summary, result = cli_project(MODULE, kind, attr, metrics)
    assert summary["n_samples"] == 3 and summary["n_skipped"] == 1
    assert summary["metrics"]["hit_rate"]["mean"] == 1.0
    assert {r["sample_id"] for r in result.to_records()} == {q["id"] for q in QUESTIONS[:3]}
    meta = result.meta["pipeline"]
    assert meta["kind"] == kind and meta["n_failed"] == 1 and meta["latency_s_mean"] > 0
