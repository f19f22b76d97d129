"""The real thing: a LlamaIndex query engine and a LangChain chain, instrumented with the OpenInference
instrumentations from PyPI, export with the OpenTelemetry SDK's OTLP/HTTP exporter to ``ragmeter
collect`` on a free loopback port; the trace file it writes is then evaluated. The samples'
questions and contexts are what the app asked and retrieved (taken from the app's own objects),
the answers what it answered, and the indexing traces are counted and skipped.

Fake LLMs and embeddings (LlamaIndex's MockLLM / MockEmbedding, LangChain's FakeListChatModel and
DeterministicFakeEmbedding with its in-memory vector store): nothing needs a network or a model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragmeter.dataset import load_dataset
from ragmeter.traces.collect import collecting

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

pytestmark = [
    # openinference-instrumentation-llama-index calls pydantic's deprecated .json(); as an error its
    # handler drops the LLM spans
    pytest.mark.filterwarnings(
        "ignore:The `json` method is deprecated:DeprecationWarning:openinference\\.instrumentation"
    ),
    # opentelemetry-sdk's get_tracer with a version builds its own deprecated InstrumentationInfo
    pytest.mark.filterwarnings("ignore:You should use InstrumentationScope:DeprecationWarning"),
]

QUESTIONS = ["Where is the Eiffel Tower?", "How tall is Mount Fuji?", "Who painted the Mona Lisa?"]
TEXTS = [
    "The Eiffel Tower is in Paris.",
    "Mount Fuji is 3,776 metres tall.",
    "Leonardo da Vinci painted the Mona Lisa.",
]


def _unsupported(instrumentor: Any) -> str | None:
    """Why an instrumentation refuses the installed framework (CI also runs the oldest lines)."""
    from opentelemetry.instrumentation.dependencies import get_dependency_conflicts

    conflict = get_dependency_conflicts(instrumentor.instrumentation_dependencies())
    return None if conflict is None else f"{type(instrumentor).__name__}: {conflict}"


@pytest.fixture
def provider_for() -> Iterator[Any]:
    """``provider_for(endpoint, batch=..., gzip=...)``: a tracer provider exporting over OTLP/HTTP;
    shut down (everything exported) at the end."""
    made: list[TracerProvider] = []

    def make(endpoint: str, *, batch: bool, gzip: bool) -> TracerProvider:
        exporter = OTLPSpanExporter(
            endpoint=endpoint, compression=Compression.Gzip if gzip else Compression.NoCompression, timeout=10
        )
        provider = TracerProvider(resource=Resource.create({"service.name": "ragmeter-test-app"}))
        provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
        made.append(provider)
        return provider

    yield make
    for p in made:
        p.shutdown()


def test_llamaindex_query_engine(tmp_path: Path, provider_for: Any) -> None:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    instrumentor = LlamaIndexInstrumentor()
    reason = _unsupported(instrumentor)
    if reason:
        pytest.skip(reason)
    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    asked: list[tuple[str, list[str], str]] = []
    with collecting(tmp_path) as collector:
        provider = provider_for(collector.endpoint, batch=False, gzip=False)  # one export per span
        instrumentor.instrument(tracer_provider=provider)
        try:
            Settings.llm = MockLLM(max_tokens=8)
            Settings.embed_model = MockEmbedding(embed_dim=8)
            index = VectorStoreIndex.from_documents([Document(text=t) for t in TEXTS])
            engine = index.as_query_engine(similarity_top_k=2)
            for q in QUESTIONS:
                response = engine.query(q)
                asked.append((q, [n.node.get_content() for n in response.source_nodes], str(response)))
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
        assert collector.counts.spans > 0 and collector.counts.rejected_spans == 0

    ds = load_dataset(collector.path)
    assert [(s.question, list(s.contexts), s.answer) for s in ds] == asked
    for s in ds:
        trace = s.metadata["trace"]
        assert s.id == trace["trace_id"] and len(s.id) == 32
        assert trace["root_span"] == "RetrieverQueryEngine.query"
        assert trace["latency_ms"] > 0 and trace["llm_calls"] == 1
        assert trace["service"] == "ragmeter-test-app"
        assert len(s.context_ids or ()) == 2
    # the index build (node parsing, document embedding) traced too, with no retrieval
    assert ds.problems and all("has no retrieval" in p.message for p in ds.problems)


@pytest.mark.filterwarnings(
    # openinference-instrumentation-langchain calls message.text() on langchain-core >= 1.0
    "ignore:Calling .text\\(\\) as a method is deprecated"
)
def test_langchain_chain(tmp_path: Path, provider_for: Any) -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    reason = _unsupported(instrumentor)
    if reason:
        pytest.skip(reason)
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough
    from langchain_core.vectorstores import InMemoryVectorStore

    answers = [f"answer {i}" for i in range(len(QUESTIONS))]
    retrieved: list[list[str]] = []

    def keep(docs: list[Any]) -> str:
        retrieved.append([d.page_content for d in docs])
        return "\n\n".join(d.page_content for d in docs)

    with collecting(tmp_path) as collector:
        provider = provider_for(collector.endpoint, batch=True, gzip=True)
        instrumentor.instrument(tracer_provider=provider)
        try:
            store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
            store.add_documents([Document(page_content=t, id=f"doc-{i}") for i, t in enumerate(TEXTS)])
            retriever = store.as_retriever(search_kwargs={"k": 2})
            prompt = ChatPromptTemplate.from_messages(
                [("system", "Answer from the context.\n\n{context}"), ("human", "{question}")]
            )
            chain = (
                {"context": retriever | RunnableLambda(keep), "question": RunnablePassthrough()}
                | prompt
                | FakeListChatModel(responses=answers)
                | StrOutputParser()
            )
            got = [chain.invoke(q) for q in QUESTIONS]
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
        assert got == answers

    ds = load_dataset(collector.path)
    assert [(s.question, list(s.contexts), s.answer) for s in ds] == list(
        zip(QUESTIONS, retrieved, answers, strict=True)
    )
    for s in ds:
        assert s.metadata["trace"]["root_span"] == "RunnableSequence"
        assert s.metadata["trace"]["llm_calls"] == 1
    assert not ds.problems


@pytest.mark.filterwarnings("ignore:Calling .text\\(\\) as a method is deprecated")
def test_langchain_chat_with_history_becomes_a_conversation(tmp_path: Path, provider_for: Any) -> None:
    from operator import itemgetter

    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    reason = _unsupported(instrumentor)
    if reason:
        pytest.skip(reason)
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models import FakeListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.runnables import RunnableLambda
    from langchain_core.vectorstores import InMemoryVectorStore

    retrieved: list[list[str]] = []

    def keep(docs: list[Any]) -> str:
        retrieved.append([d.page_content for d in docs])
        return "\n\n".join(d.page_content for d in docs)

    history = [HumanMessage("Tell me about the Eiffel Tower."), AIMessage("It is a tower in Paris.")]
    with collecting(tmp_path) as collector:
        provider = provider_for(collector.endpoint, batch=True, gzip=False)
        instrumentor.instrument(tracer_provider=provider)
        try:
            store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
            store.add_documents([Document(page_content=t) for t in TEXTS])
            prompt = ChatPromptTemplate.from_messages(
                [
                    ("system", "Answer from the context.\n\n{context}"),
                    MessagesPlaceholder("history"),
                    ("human", "{question}"),
                ]
            )
            chain = (
                {
                    "context": itemgetter("question")
                    | store.as_retriever(search_kwargs={"k": 2})
                    | RunnableLambda(keep),
                    "question": itemgetter("question"),
                    "history": itemgetter("history"),
                }
                | prompt
                | FakeListChatModel(responses=["It is 330 metres tall."])
                | StrOutputParser()
            )
            chain.invoke({"question": "How tall is it?", "history": history})
        finally:
            instrumentor.uninstrument()
            provider.shutdown()

    conversation, turn = load_dataset(collector.path)
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", "Tell me about the Eiffel Tower."),
        ("assistant", "It is a tower in Paris."),
        ("user", "How tall is it?"),
        ("assistant", "It is 330 metres tall."),
    ]
    assert (turn.question, list(turn.contexts), turn.answer, turn.turn) == (
        "How tall is it?",
        retrieved[0],
        "It is 330 metres tall.",
        2,
    )
    assert [m.content for m in turn.history] == ["Tell me about the Eiffel Tower.", "It is a tower in Paris."]
    assert turn.metadata["trace"]["root_span"] == "RunnableSequence"


def test_evaluate_the_collected_file(tmp_path: Path, provider_for: Any) -> None:
    """`ragmeter evaluate DIR/traces.otlp.jsonl` scores what the app sent."""
    from click.testing import CliRunner
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    from ragmeter.cli.main import cli

    instrumentor = LlamaIndexInstrumentor()
    reason = _unsupported(instrumentor)
    if reason:
        pytest.skip(reason)
    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    with collecting(tmp_path / "traces") as collector:
        provider = provider_for(collector.endpoint, batch=True, gzip=False)
        instrumentor.instrument(tracer_provider=provider)
        try:
            Settings.llm = MockLLM(max_tokens=8)
            Settings.embed_model = MockEmbedding(embed_dim=8)
            engine = VectorStoreIndex.from_documents([Document(text=t) for t in TEXTS]).as_query_engine()
            for q in QUESTIONS[:2]:
                engine.query(q)
        finally:
            instrumentor.uninstrument()
            provider.shutdown()

    result = CliRunner().invoke(
        cli,
        [
            "evaluate",
            str(collector.path),
            "--metrics",
            "context_relevance",
            "--out",
            str(tmp_path / "runs"),
            "--json",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    import json

    out = json.loads(result.stdout)
    assert out["n_samples"] == 2
    assert out["metrics"]["context_relevance"]["n_scored"] == 2
