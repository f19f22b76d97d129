"""LlamaIndex's evaluation walkthrough, with only the imports changed to ragmeter, end to end: a
faithfulness evaluator on a query engine's response, a labelled dataset generated from documents,
and a batch runner over the query engine with the generated questions. Offline with the local
judge, and against the loopback OpenAI-compatible server (an LLM judge: the relevancy evaluator
grades by a rubric, which the local judge does not)."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any

import pytest

from helpers.server import FakeOpenAIServer

pytest.importorskip("llama_index.core")

DOCS = Path(__file__).resolve().parents[2] / "examples" / "docs" / "en"


def _documents() -> list[Any]:
    from llama_index.core import SimpleDirectoryReader

    return SimpleDirectoryReader(str(DOCS), required_exts=[".txt", ".md", ".html"]).load_data()


def _extractive_llm() -> Any:
    """The RAG system's LLM: a LlamaIndex ``CustomLLM`` that answers with the first sentence of the
    context in its prompt that shares a word with the query (an extractive reader, offline)."""
    import re

    from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM

    class Extractive(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="extractive")

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            context = (
                prompt.split("---------------------")[1] if "---------------------" in prompt else prompt
            )
            query = prompt.rsplit("Query:", 1)[-1].lower()
            words = {w for w in re.findall(r"[a-z]{4,}", query)}
            sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", context) if len(s.split()) > 4]
            best = next((s for s in sentences if words & set(re.findall(r"[a-z]{4,}", s.lower()))), None)
            return CompletionResponse(text=best or (sentences[0] if sentences else "I don't know."))

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            raise NotImplementedError

    return Extractive()


def _vector_index(documents: list[Any]) -> Any:
    from integrations.frameworks import llamaindex_index

    return llamaindex_index()  # the examples/docs chunks under a hashing embedding, offline


def _walkthrough(llm: Any, relevancy: bool) -> dict[str, Any]:
    # -- LlamaIndex's walkthrough from here on; only the import lines name ragmeter --
    from ragmeter.evaluators import (
        AnswerRelevancyEvaluator,
        BatchEvalRunner,
        FaithfulnessEvaluator,
        RagDatasetGenerator,
        RelevancyEvaluator,
    )

    documents = _documents()
    vector_index = _vector_index(documents)
    query_engine = vector_index.as_query_engine(llm=_extractive_llm())  # the RAG system under test

    evaluator = FaithfulnessEvaluator(llm=llm)
    response = query_engine.query("How tall is the Eiffel Tower?")
    eval_result = evaluator.evaluate_response(response=response)
    passing = str(eval_result.passing)

    dataset_generator = RagDatasetGenerator.from_documents(
        documents=documents, llm=llm, num_questions_per_chunk=2
    )
    rag_dataset = dataset_generator.generate_questions_from_nodes()
    questions = [e.query for e in rag_dataset.examples]

    faithfulness_evaluator = FaithfulnessEvaluator(llm=llm)
    relevancy_evaluator = RelevancyEvaluator(llm=llm) if relevancy else AnswerRelevancyEvaluator(llm=llm)
    runner = BatchEvalRunner(
        {"faithfulness": faithfulness_evaluator, "relevancy": relevancy_evaluator}, workers=8
    )
    eval_results = asyncio.run(
        runner.aevaluate_queries(vector_index.as_query_engine(llm=_extractive_llm()), queries=questions)
    )
    return {"passing": passing, "eval_result": eval_result, "questions": questions, "results": eval_results,
            "dataset": rag_dataset}  # fmt: skip


def _check(out: dict[str, Any]) -> None:
    assert out["passing"] in ("True", "False") and not out["eval_result"].invalid_result, out["eval_result"]
    assert out["eval_result"].contexts  # the response's source nodes were read
    questions = out["questions"]
    assert len(questions) >= 4 and len(set(questions)) == len(questions)
    assert all(e.reference_answer == "" and e.reference_contexts for e in out["dataset"].examples)
    results = out["results"]
    assert set(results) == {"faithfulness", "relevancy"}
    for name in results:
        assert [r.query for r in results[name]] == questions
        assert sum(not r.invalid_result for r in results[name]) >= len(questions) // 2, name


def test_the_walkthrough_offline_with_the_local_judge() -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "RagDatasetGenerator: no llm given", UserWarning)
        out = _walkthrough(llm=None, relevancy=False)
    _check(out)
    assert out["dataset"].examples[0].query_by.model_name == "offline-cloze"


def test_the_walkthrough_against_an_openai_compatible_server(fake_openai_server: FakeOpenAIServer) -> None:
    from ragmeter import make_judge

    llm = make_judge("openai-compatible:fake-model", base_url=fake_openai_server.url)
    out = _walkthrough(llm=llm, relevancy=True)
    _check(out)
    assert out["dataset"].examples[0].query_by.model_name == "llm:openai-compatible:fake-model"
    assert all(r.score in (0.0, 1.0) for r in out["results"]["relevancy"] if not r.invalid_result)
