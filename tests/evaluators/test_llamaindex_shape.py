"""The names of LlamaIndex's evaluation module in ragmeter.evaluators, in LlamaIndex's shape: the
relevancy evaluators and the old aliases, ``llm=`` (a judge spec, a Judge or a LlamaIndex LLM
object), and the retrieval evaluators on ragmeter's retrieval measures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ragmeter.evaluators as evaluators
from helpers.server import default_responder
from ragmeter.errors import ConfigError
from ragmeter.evaluators import (
    AnswerRelevancyEvaluator,
    ContextRelevancyEvaluator,
    FaithfulnessEvaluator,
    MultiModalRetrieverEvaluator,
    QueryResponseEvaluator,
    RelevancyEvaluator,
    ResponseEvaluator,
    RetrieverEvaluator,
)
from ragmeter.retrieval import measures

CONTEXTS = [
    "The Eiffel Tower was built between 1887 and 1889 for the World's Fair in Paris.",
    "It is about 330 metres tall including its antennas.",
]


def test_the_module_names_are_importable() -> None:
    for name in (
        "AnswerRelevancyEvaluator", "ContextRelevancyEvaluator", "CorrectnessEvaluator", "FaithfulnessEvaluator",
        "GuidelineEvaluator", "PairwiseComparisonEvaluator", "RelevancyEvaluator", "SemanticSimilarityEvaluator",
        "QueryResponseEvaluator", "ResponseEvaluator", "BaseEvaluator", "EvaluationResult", "RetrieverEvaluator",
        "BaseRetrievalEvaluator", "MultiModalRetrieverEvaluator", "RetrievalEvalResult", "RetrievalEvalMode",
        "RetrievalMetricResult",
    ):  # fmt: skip
        assert name in evaluators.__all__ and getattr(evaluators, name) is not None, name
    # LlamaIndex's older names are the same classes there, and here
    assert QueryResponseEvaluator is RelevancyEvaluator and ResponseEvaluator is FaithfulnessEvaluator


def test_answer_and_context_relevancy_with_the_local_judge() -> None:
    ev = AnswerRelevancyEvaluator()
    on = ev.evaluate(
        query="How tall is the Eiffel Tower?", response="The Eiffel Tower is about 330 metres tall."
    )
    off = ev.evaluate(query="How tall is the Eiffel Tower?", response="Bananas are rich in potassium.")
    assert on.score is not None and off.score is not None and on.score > off.score
    assert 0.0 <= off.score <= 1.0 and on.passing is None  # LlamaIndex's evaluator sets no passing
    assert (
        AnswerRelevancyEvaluator(threshold=0.5)
        .evaluate(
            query="How tall is the Eiffel Tower?", response="The Eiffel Tower is about 330 metres tall."
        )
        .passing
    )
    ctx = ContextRelevancyEvaluator()
    good = ctx.evaluate(query="How tall is the Eiffel Tower?", contexts=CONTEXTS)
    bad = ctx.evaluate(query="How tall is the Eiffel Tower?", contexts=["Bananas are rich in potassium."])
    assert good.score is not None and bad.score is not None and good.score > bad.score
    missing = ctx.evaluate(query="How tall is the Eiffel Tower?")
    assert missing.invalid_result and "missing contexts" in (missing.invalid_reason or "")


def test_judge_and_llm_are_one_argument() -> None:
    with pytest.raises(ConfigError, match="not both"):
        FaithfulnessEvaluator(judge="local", llm="local")
    assert FaithfulnessEvaluator(llm=None).judge.name == FaithfulnessEvaluator().judge.name


def _scripted_llama_llm() -> Any:
    """A LlamaIndex LLM (a real ``CustomLLM``) whose replies come from the tests' scripted responder."""
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse, CompletionResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM

    class Scripted(CustomLLM):
        calls: int = 0

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="scripted-llama")

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            raise NotImplementedError

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            raise NotImplementedError

        async def achat(self, messages: Any, **kwargs: Any) -> ChatResponse:
            self.calls += 1
            body = {"messages": [{"role": str(m.role.value), "content": m.content} for m in messages]}
            text = default_responder(body)
            return ChatResponse(message=ChatMessage(role="assistant", content=text), raw={"usage": {
                "prompt_tokens": 100, "completion_tokens": len(text) // 4}})  # fmt: skip

    return Scripted()


def test_a_llama_index_llm_object_is_the_judge() -> None:
    pytest.importorskip("llama_index.core")
    llm = _scripted_llama_llm()
    ev = FaithfulnessEvaluator(llm=llm)
    assert ev.judge.name == "llama-index:scripted-llama"
    good = ev.evaluate(
        query="When was the Eiffel Tower built?",
        response="The Eiffel Tower was built between 1887 and 1889.",
        contexts=CONTEXTS,
    )
    bad = ev.evaluate(
        query="When was the Eiffel Tower built?",
        response="The Eiffel Tower was painted green by Picasso.",
        contexts=CONTEXTS,
    )
    assert not good.invalid_result and good.passing and good.score == 1.0, good.feedback
    assert not bad.passing and bad.score == 0.0
    assert llm.calls >= 4  # claims and verdicts of each answer, through llm.achat
    usage = ev.judge.client.usage  # the LLM's own token counts (100 a prompt), not an estimate
    assert usage.requests == llm.calls and usage.prompt_tokens == 100 * llm.calls
    with pytest.raises(ConfigError, match="LlamaIndex LLM"):
        FaithfulnessEvaluator(llm=object())


# -- retrieval ----------------------------------------------------------------------------------

RANKINGS = {
    "q1": (["d3", "d1", "d9"], ["d1", "d2"]),
    "q2": (["d5", "d5", "d4"], ["d4"]),  # a repeated id counts once, at its first rank
    "q3": (["d7"], ["d8", "d6", "d2"]),  # nothing relevant retrieved; fewer retrieved than relevant
}


def _retriever(query: str) -> list[dict[str, str]]:
    return [{"id": d, "text": f"text of {d}"} for d in RANKINGS[query][0]]


def test_retriever_evaluator_equals_the_retrieval_measures() -> None:
    names = ["hit_rate", "mrr", "precision", "recall", "ap", "ndcg"]
    ev = RetrieverEvaluator.from_metric_names(names, retriever=_retriever)
    fns = {"hit_rate": measures.hit_rate, "mrr": measures.reciprocal_rank, "precision": measures.precision,
           "recall": measures.recall, "ap": measures.average_precision, "ndcg": measures.ndcg}  # fmt: skip
    for query, (ranking, expected) in RANKINGS.items():
        result = ev.evaluate(query=query, expected_ids=expected)
        qrels = {d: 1.0 for d in expected}
        assert result.metric_vals_dict == {n: pytest.approx(fns[n](ranking, qrels)) for n in names}
        assert result.retrieved_ids == ranking and result.retrieved_texts[0] == f"text of {ranking[0]}"
    r1 = ev.evaluate(query="q1", expected_ids=["d1", "d2"])
    assert r1.metric_vals_dict["mrr"] == 0.5 and r1.metric_vals_dict["precision"] == pytest.approx(1 / 3)
    assert "Metrics:" in str(r1)
    with pytest.raises(ValueError, match="expected ids"):
        ev.evaluate(query="q1", expected_ids=[])
    with pytest.raises(ConfigError, match="unknown retrieval metric"):
        RetrieverEvaluator.from_metric_names(["hit_rate", "f1"], retriever=_retriever)


async def test_retriever_evaluator_over_a_dataset() -> None:
    ev = RetrieverEvaluator.from_metric_names(["hit_rate", "mrr"], retriever=_retriever)
    dataset = {"queries": {q: q for q in RANKINGS}, "relevant_docs": {q: e for q, (_, e) in RANKINGS.items()}}
    results = await ev.aevaluate_dataset(dataset, workers=2)
    assert [r.query for r in results] == list(RANKINGS)
    assert [r.metric_vals_dict["hit_rate"] for r in results] == [1.0, 1.0, 0.0]
    with pytest.raises(ConfigError, match="relevant_docs"):
        await ev.aevaluate_dataset({"queries": {"q1": "q1"}, "relevant_docs": {}})


def test_retriever_evaluator_with_a_llama_index_index_and_dataset() -> None:
    pytest.importorskip("llama_index.core")
    from integrations.corpus import chunks
    from integrations.frameworks import llamaindex_index

    index = llamaindex_index()
    ids = [cid for cid, _ in chunks()]
    ev = RetrieverEvaluator.from_metric_names(
        ["hit_rate", "mrr", "ndcg"], retriever=index.as_retriever(similarity_top_k=3)
    )
    text = dict(chunks())[ids[0]]
    result = ev.evaluate(query=text, expected_ids=[ids[0]])
    assert type(result).__module__.startswith("llama_index")  # LlamaIndex's own result class
    from llama_index.core.evaluation import BaseRetrievalEvaluator as LlamaBase
    from llama_index.core.evaluation.retrieval.metrics_base import BaseRetrievalMetric

    assert isinstance(ev, LlamaBase) and all(isinstance(m, BaseRetrievalMetric) for m in ev.metrics)
    assert result.retrieved_ids[0] == ids[0] and result.metric_vals_dict["mrr"] == 1.0
    try:  # llama-index-core 0.12; 0.14 moved it out of core (an object with the same fields here)
        from llama_index.core.evaluation import EmbeddingQAFinetuneDataset
    except ImportError:
        from types import SimpleNamespace as EmbeddingQAFinetuneDataset  # type: ignore[assignment]
    ds = EmbeddingQAFinetuneDataset(
        queries={"a": text}, corpus={cid: t for cid, t in chunks()}, relevant_docs={"a": [ids[0]]}
    )
    from ragmeter.run.sync import run_sync

    (r,) = run_sync(ev.aevaluate_dataset(ds))
    assert r.metric_vals_dict == result.metric_vals_dict


def test_multimodal_retriever_keeps_text_and_image_nodes_apart() -> None:
    items = [
        {"id": "t1", "text": "a caption"},
        {"id": "i1", "text": "", "image_path": "figs/tower.png"},
        {"id": "t2", "text": "more text"},
        {"id": "i2", "text": "", "image_url": "https://example.org/p.jpg"},
    ]
    ev = MultiModalRetrieverEvaluator.from_metric_names(["hit_rate", "mrr"], retriever=lambda q: items)
    text = ev.evaluate(query="q", expected_ids=["t2"], mode="text")
    image = ev.evaluate(query="q", expected_ids=["i2"], mode="image")
    assert text.retrieved_ids == ["t1", "t2"] and text.metric_vals_dict["mrr"] == 0.5
    assert image.retrieved_ids == ["i1", "i2"] and image.metric_vals_dict["mrr"] == 0.5
    assert json.loads(json.dumps(image.metric_vals_dict)) == {"hit_rate": 1.0, "mrr": 0.5}


# -- BatchEvalRunner ----------------------------------------------------------------------------

QUERIES = ["How tall is the Eiffel Tower?", "When was the Eiffel Tower built?", "What is the tower made of?"]
ANSWERS = [
    "The Eiffel Tower is about 330 metres tall.",
    "It was built between 1887 and 1889.",
    "The tower is made of concrete and glass.",
]


def test_batch_runner_equals_ragmeter_evaluate_and_records_the_run(tmp_path: Any) -> None:
    import ragmeter
    from ragmeter.evaluators import BatchEvalRunner

    runner = BatchEvalRunner(
        {"faithfulness": FaithfulnessEvaluator(), "answer_relevancy": AnswerRelevancyEvaluator()},
        workers=4,
        out=tmp_path / "runs",
    )
    results = runner.evaluate_response_strs(
        queries=QUERIES, response_strs=ANSWERS, contexts_list=[CONTEXTS] * 3
    )
    assert set(results) == {"faithfulness", "answer_relevancy"} and all(len(v) == 3 for v in results.values())
    direct = ragmeter.evaluate(
        [{"question": q, "answer": a, "contexts": CONTEXTS} for q, a in zip(QUERIES, ANSWERS, strict=True)],
        ["faithfulness", "answer_relevance"],
        progress=False,
    )
    assert [r.score for r in results["faithfulness"]] == pytest.approx(
        [s.value for s in direct.scores("faithfulness")]  # type: ignore[union-attr]
    )
    assert [r.score for r in results["answer_relevancy"]] == pytest.approx(
        [s.value for s in direct.scores("answer_relevance")]  # type: ignore[union-attr]
    )
    assert [r.passing for r in results["faithfulness"]] == [
        r.details["n_supported"] == r.details["n_claims"] for r in results["faithfulness"]
    ]
    assert not results["faithfulness"][2].passing  # concrete and glass: not in the contexts
    assert results["faithfulness"][1].query == QUERIES[1] and results["faithfulness"][1].contexts == CONTEXTS
    (run,) = runner.runs  # both evaluators share the local judge: one run, in the store
    stored = ragmeter.Result.from_store(tmp_path / "runs", run.run_id)
    assert stored.n_samples == 3 and set(stored.metric_names) == {"faithfulness", "answer_relevance"}


def test_batch_runner_keyword_lists_and_missing_inputs() -> None:
    from ragmeter.evaluators import BatchEvalRunner, SemanticSimilarityEvaluator

    runner = BatchEvalRunner(
        {"similarity": SemanticSimilarityEvaluator(), "faithfulness": FaithfulnessEvaluator()}
    )
    refs = ["It is 330 metres tall.", "Between 1887 and 1889.", "It is made of wrought iron."]
    results = runner.evaluate_response_strs(queries=QUERIES, response_strs=ANSWERS, reference=refs)
    assert all(r.score is not None for r in results["similarity"])
    # no contexts were given: faithfulness says so for every query, nothing is dropped
    assert [r.invalid_result for r in results["faithfulness"]] == [True] * 3
    assert "missing contexts" in (results["faithfulness"][0].invalid_reason or "")
    nested = runner.evaluate_response_strs(
        queries=QUERIES, response_strs=ANSWERS, similarity={"reference": refs}
    )
    assert [r.score for r in nested["similarity"]] == [r.score for r in results["similarity"]]
    with pytest.raises(ConfigError, match="same length"):
        runner.evaluate_response_strs(queries=QUERIES, response_strs=ANSWERS[:2])
    with pytest.raises(ConfigError, match="one value per query"):
        runner.evaluate_response_strs(queries=QUERIES, response_strs=ANSWERS, reference=refs[:1])
    with pytest.raises(ConfigError, match="not a ragmeter evaluator"):
        BatchEvalRunner({"x": object()})  # type: ignore[dict-item]


def test_batch_runner_over_a_llama_index_query_engine() -> None:
    pytest.importorskip("llama_index.core")
    from integrations.frameworks import BOOM, llamaindex_index, llamaindex_query_engine
    from ragmeter.evaluators import BatchEvalRunner

    engine = llamaindex_query_engine(llamaindex_index())
    runner = BatchEvalRunner(
        {"faithfulness": FaithfulnessEvaluator(), "context_relevancy": ContextRelevancyEvaluator()}, workers=2
    )
    queries = ["How tall is the Eiffel Tower?", f"{BOOM}: what then?", "Who designed the Eiffel Tower?"]
    results = runner.evaluate_queries(engine, queries=queries)
    ctx = results["context_relevancy"]
    assert [r.query for r in ctx] == queries
    assert ctx[0].contexts and ctx[0].score is not None and not ctx[0].invalid_result
    # the engine failed on the second query: an invalid result that says so, the others scored
    assert ctx[1].invalid_result and "the vector store is down" in (ctx[1].invalid_reason or "")
    assert results["faithfulness"][1].invalid_result and not ctx[2].invalid_result


# -- RagDatasetGenerator and LabelledRagDataset -------------------------------------------------


def test_rag_dataset_generator_offline_file_round_trip(tmp_path: Any) -> None:
    import ragmeter
    from ragmeter.evaluators import LabelledRagDataset, RagDatasetGenerator

    docs = Path(__file__).resolve().parents[2] / "examples" / "docs"
    with pytest.warns(UserWarning, match="no llm given"):
        ds = RagDatasetGenerator.from_documents(docs, num_questions_per_chunk=2).generate_dataset_from_nodes()
    assert len(ds.examples) >= 4
    first = ds.examples[0]
    assert first.query and first.reference_answer and first.reference_contexts
    assert first.reference_answer in first.reference_contexts[0]  # the blanked span, from its chunk
    path = tmp_path / "rag_dataset.json"
    ds.save_json(str(path))
    again = LabelledRagDataset.from_json(str(path))
    assert [e.query for e in again.examples] == [e.query for e in ds.examples]
    loaded = ragmeter.load_dataset(str(path))  # a LabelledRagDataset file is data ragmeter reads
    assert [s.question for s in loaded] == [e.query for e in ds.examples]
    assert [s.reference for s in loaded] == [e.reference_answer for e in ds.examples]
    frame = ds.to_pandas()
    assert list(frame["query"]) == [e.query for e in ds.examples]


def test_rag_dataset_generator_keeps_nodes_whole_and_refuses_templates() -> None:
    from ragmeter.evaluators import RagDatasetGenerator

    class Node:  # the shape of a LlamaIndex TextNode: text and node_id
        def __init__(self, node_id: str, text: str) -> None:
            self.node_id, self.text, self.metadata = node_id, text, {}

    text = "The Eiffel Tower was completed in 1889. " * 40  # longer than a default chunk
    gen = RagDatasetGenerator([Node("n1", text)], num_questions_per_chunk=1)
    with pytest.warns(UserWarning):
        ds = gen.generate_questions_from_nodes()
    assert gen.stats.n_chunks == 1  # the node is one chunk, as LlamaIndex asks each node
    assert all(e.reference_answer == "" for e in ds.examples)  # questions only
    with pytest.raises(ConfigError, match="text_qa_template not supported"):
        RagDatasetGenerator([Node("n1", text)], text_qa_template="{context_str}")
    with pytest.raises(ConfigError, match="question_gen_query needs an llm"):
        RagDatasetGenerator([Node("n1", text)], question_gen_query="Write quiz questions.")
    with pytest.raises(ConfigError, match="no document left"):
        RagDatasetGenerator.from_documents([Node("n1", text)], required_keywords=["Colosseum"])


def test_question_gen_query_reaches_the_generation_prompt(fake_openai_server: Any) -> None:
    import ragmeter
    from ragmeter.evaluators import RagDatasetGenerator

    judge = ragmeter.make_judge("openai-compatible:fake-model", base_url=fake_openai_server.url)
    query = "You are a Teacher. Set up {num_questions_per_chunk} questions for an upcoming quiz."
    docs = Path(__file__).resolve().parents[2] / "examples" / "docs" / "en" / "photosynthesis.txt"
    gen = RagDatasetGenerator.from_documents(
        str(docs), llm=judge, num_questions_per_chunk=2, question_gen_query=query
    )
    ds = gen.generate_dataset_from_nodes()
    assert ds.examples and all(e.reference_answer for e in ds.examples)
    prompts = [json.dumps(r["messages"], ensure_ascii=False) for r in fake_openai_server.requests]
    assert any("Set up 2 questions for an upcoming quiz." in p for p in prompts)
