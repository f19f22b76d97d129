"""ragmeter on real LangChain objects (langchain-core): an InMemoryVectorStore over examples/docs with a
deterministic embedding, its retriever, a runnable chain with a fake chat model, through
``run_pipeline``, ``run_retriever`` and ``evaluate --pipeline / --retriever``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")

import ragmeter
from integrations.conftest import QUESTIONS
from integrations.frameworks import langchain_chain, langchain_store
from ragmeter.pipeline import langchain_retriever


@pytest.fixture(scope="module")
def store() -> Any:
    return langchain_store()


def test_chain_answers_contexts_ids_latency_and_errors(store: Any, questions_file: Path) -> None:
    ds = ragmeter.run_pipeline(langchain_chain(store, k=3), questions_file, workers=2)
    samples = {str(s.id): s for s in ds}
    assert set(samples) == {"eiffel", "gil", "photosynthesis"}
    gil = samples["gil"]
    assert gil.answer == "It is about 330 metres tall."  # the fake chat model's reply
    assert gil.context_ids is not None and gil.context_ids[0] == "en/python_gil#0" and len(gil.contexts) == 3
    assert gil.contexts[0].startswith("The Global Interpreter Lock")
    assert gil.metadata["latency_s"] > 0
    assert "context_scores" not in gil.metadata  # a retriever's Documents carry no score
    (problem,) = ds.problems
    assert problem.row == 4 and "RuntimeError: the vector store is down" in str(problem)


def test_retriever_and_scored_search(store: Any, questions_file: Path) -> None:
    retriever = store.as_retriever(search_kwargs={"k": 2})
    ds = ragmeter.run_retriever(retriever, questions_file)
    assert len(ds) == 4  # this retriever has no failing guard
    result = ragmeter.evaluate(ds, ["hit_rate", "recall_at_k"], progress=False)
    hits = {r["sample_id"]: r["hit_rate"] for r in result.to_records()}
    # the "boom" question shares no word with its labelled chunk; the three real ones hit
    assert hits == {"eiffel": 1.0, "gil": 1.0, "photosynthesis": 1.0, "failing": 0.0}

    # similarity_search_with_score returns (Document, score) pairs: the scores are kept
    scored = ragmeter.run_retriever(
        lambda q: store.similarity_search_with_score(q, k=3), [QUESTIONS[0]["question"]]
    )
    assert scored[0].context_ids and scored[0].context_ids[0] == "en/eiffel_tower#0"
    scores = scored[0].metadata["context_scores"]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)


async def test_async_retriever_adapter(store: Any) -> None:
    call = langchain_retriever(store.as_retriever(search_kwargs={"k": 1}))
    docs = await call(QUESTIONS[2]["question"])
    assert [d.id for d in docs] == ["en/photosynthesis#0"]


MODULE = """
from integrations.frameworks import langchain_chain, langchain_store

STORE = langchain_store()
chain = langchain_chain(STORE, k=3)
retriever = STORE.as_retriever(search_kwargs={"k": 3})
"""


@pytest.mark.parametrize("kind", ["pipeline", "retriever"])
def test_cli_evaluate_runs_the_real_objects(cli_project: Callable[..., Any], kind: str) -> None:
    attr, metrics = ("chain", "token_f1,hit_rate") if kind == "pipeline" else ("retriever", "hit_rate,mrr")
    summary, result = cli_project(MODULE, kind, attr, metrics)
    n_failed = 1 if kind == "pipeline" else 0  # only the chain has the failing guard
    assert summary["n_samples"] == 4 - n_failed and summary["n_skipped"] == n_failed
    assert summary["metrics"]["hit_rate"]["mean"] == 1.0
    meta = result.meta["pipeline"]
    assert meta["kind"] == kind and meta["n_failed"] == n_failed and meta["latency_s_max"] > 0
