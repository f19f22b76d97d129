"""run_pipeline: output shapes, sync/async, bounded workers, latency, errors, adapters."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from ragmeter import ConfigError, Sample
from ragmeter.pipeline import (
    as_pipeline,
    langchain_chain,
    normalize_output,
    run_pipeline,
    run_retriever,
)
from ragmeter.pipeline.outputs import PipelineOutputError

from .fakes import (
    CORPUS,
    Document,
    FakeLlamaRetriever,
    FakeQueryEngine,
    FakeRetrievalChain,
    FakeVectorStoreRetriever,
    search,
)

QUESTIONS = [
    "How tall is the Eiffel Tower?",
    "What does the global interpreter lock do in Python?",
    "Where does photosynthesis convert light energy?",
]


def dict_pipeline(question: str) -> dict[str, Any]:
    ids = search(question)
    return {"answer": CORPUS[ids[0]], "contexts": [{"text": CORPUS[i], "id": i} for i in ids]}


def test_sync_function_dict_output_keeps_order_ids_and_latency() -> None:
    ds = run_pipeline(dict_pipeline, QUESTIONS, workers=2)
    assert [s.question for s in ds] == QUESTIONS
    assert ds[0].context_ids[0] == "eiffel" and ds[1].context_ids[0] == "gil"
    assert ds[0].answer == CORPUS["eiffel"]
    assert all(s.metadata["latency_s"] >= 0 for s in ds)
    assert ds.n_skipped == 0


def test_tuple_and_string_outputs() -> None:
    out = normalize_output(("answer", ["c1", "c2"]))
    assert out.answer == "answer" and out.contexts == ("c1", "c2") and out.context_ids is None
    assert normalize_output("just text").contexts == ()
    with pytest.raises(PipelineOutputError, match="without an answer or contexts key"):
        normalize_output({"foo": 1})
    with pytest.raises(PipelineOutputError, match="cannot read the pipeline's output"):
        normalize_output(42)


async def test_async_function_runs_inside_a_running_loop() -> None:
    async def pipe(q: str) -> tuple[str, list[str]]:
        await asyncio.sleep(0.01)
        return q.upper(), [q]

    ds = run_pipeline(pipe, QUESTIONS)  # sync entry point inside a loop: works (no nest_asyncio)
    assert ds[2].answer == QUESTIONS[2].upper() and ds[2].contexts == (QUESTIONS[2],)
    assert ds[0].metadata["latency_s"] >= 0.01


def test_sync_calls_are_bounded_by_workers() -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(q: str) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        return "a"

    ds = run_pipeline(slow, [f"q{i}" for i in range(12)], workers=3)
    assert len(ds) == 12 and state["peak"] == 3


def test_async_calls_are_bounded_by_workers() -> None:
    state = {"now": 0, "peak": 0}

    async def slow(q: str) -> str:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.01)
        state["now"] -= 1
        return "a"

    run_pipeline(slow, [f"q{i}" for i in range(10)], workers=4)
    assert state["peak"] == 4


def test_errors_are_recorded_per_question_and_the_batch_goes_on() -> None:
    def flaky(q: str) -> str:
        if "2" in q:
            raise RuntimeError("index offline")
        if "3" in q:
            return 42  # type: ignore[return-value]
        return "ok"

    ds = run_pipeline(flaky, ["q1", "q2", "q3", "q4"])
    assert [s.question for s in ds] == ["q1", "q4"]
    assert len(ds.problems) == 2
    assert ds.problems[0].row == 2 and "RuntimeError: index offline" in str(ds.problems[0])
    assert ds.problems[1].row == 3 and "cannot read the pipeline's output" in str(ds.problems[1])
    assert ds.rows == (1, 4)


def test_labels_in_the_input_are_kept() -> None:
    samples = [
        Sample(question=QUESTIONS[0], reference="330 metres", reference_context_ids=["eiffel"], id="a")
    ]
    ds = run_pipeline(dict_pipeline, samples)
    assert ds[0].id == "a" and ds[0].reference == "330 metres" and ds[0].reference_context_ids == ("eiffel",)


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="workers"):
        run_pipeline(dict_pipeline, QUESTIONS, workers=0)
    with pytest.raises(ConfigError, match="not a pipeline"):
        run_pipeline(object(), QUESTIONS)
    with pytest.raises(ConfigError, match="not one string"):
        run_pipeline(dict_pipeline, "How tall is it?")


def test_llamaindex_query_engine_prefers_aquery() -> None:
    engine = FakeQueryEngine()
    ds = run_pipeline(engine, QUESTIONS)
    assert engine.async_calls == 3 and engine.sync_calls == 0
    assert ds[0].context_ids == ("eiffel", "gil") or ds[0].context_ids[0] == "eiffel"
    assert ds[0].contexts[0] == CORPUS["eiffel"] and ds[0].answer == CORPUS["eiffel"]


def test_llamaindex_and_langchain_retrievers() -> None:
    for retriever in (FakeLlamaRetriever(), FakeVectorStoreRetriever()):
        ds = run_retriever(retriever, QUESTIONS)
        assert [s.context_ids[0] for s in ds] == ["eiffel", "gil", "photo"]
        assert all(s.answer is None for s in ds)


def test_langchain_chain_input_key_and_document_ids() -> None:
    chain = FakeRetrievalChain()
    ds = run_pipeline(chain, QUESTIONS[:1])
    assert chain.inputs == [{"input": QUESTIONS[0]}]
    assert ds[0].context_ids[0] == "eiffel" and ds[0].answer == CORPUS["eiffel"]
    fn = langchain_chain(chain, input_key="input")
    assert fn("q?")["answer"]
    # Document.id wins over metadata
    out = normalize_output({"answer": "x", "source_documents": [Document("t", {"id": "m"}, id="d")]})
    assert out.context_ids == ("d",)
    assert callable(as_pipeline(dict_pipeline))


def test_real_langchain_objects_when_installed() -> None:
    documents = pytest.importorskip("langchain_core.documents")
    doc = documents.Document(page_content="hello", metadata={"id": "x"})
    out = normalize_output({"answer": "a", "context": [doc]})
    assert out.contexts == ("hello",) and out.context_ids == ("x",)


def test_real_llamaindex_objects_when_installed() -> None:
    schema = pytest.importorskip("llama_index.core.schema")
    node = schema.NodeWithScore(node=schema.TextNode(text="hello", id_="n1"), score=0.5)
    out = normalize_output({"answer": "a", "source_nodes": [node]})
    assert out.contexts == ("hello",) and out.context_ids == ("n1",)
