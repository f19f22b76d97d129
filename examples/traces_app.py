"""Make examples/traces.otlp.jsonl: a small RAG app, once with LlamaIndex and once with LangChain,
instrumented with the OpenInference instrumentations and exporting its traces with the OpenTelemetry
SDK's OTLP/HTTP exporter to ragmeter's collector, as a production app would.

The app runs offline: the embeddings are word (and, for Chinese, character) counts hashed into a
vector, and the "LLM" answers with the context sentence that shares most words with the question
(reporting its token counts as a real model does). The LangChain part also answers one chat turn
with a history, which the trace reader reads as a conversation. Then:

    ragmeter evaluate examples/traces.otlp.jsonl

Run it with the test extra installed (pip install -e ".[test]"):

    python examples/traces_app.py [OUT_DIR]        # default: examples/ (writes traces.otlp.jsonl)
"""

from __future__ import annotations

import re
import sys
import zlib
from operator import itemgetter
from pathlib import Path
from typing import Any

from openinference.instrumentation import TraceConfig
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from ragmeter.traces.collect import collecting

DOCS = [
    "The Eiffel Tower is in Paris. It was finished in 1889 for the World's Fair.",
    "The Eiffel Tower is 330 metres tall, including its antennas.",
    "Mount Fuji is the highest mountain in Japan, at 3,776 metres.",
    "Leonardo da Vinci painted the Mona Lisa in the early sixteenth century.",
    "The Great Wall of China is more than 20,000 kilometres long.",
    "长城是中国古代的军事防御工程，总长度超过两万公里。",
]
QUESTIONS = [
    "When was the Eiffel Tower finished?",
    "How tall is the Eiffel Tower?",
    "What is the highest mountain in Japan?",
    "Who painted the Mona Lisa?",
    "长城有多长？",
]
DIM = 256


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]", text.lower())


def embed(text: str) -> list[float]:
    vec = [0.0] * DIM
    for tok in tokens(text):
        vec[zlib.crc32(tok.encode()) % DIM] += 1.0
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


def extract(prompt: str, question: str) -> str:
    """The sentence of the prompt's context that shares most words with the question."""
    q = set(tokens(question))
    context = prompt.split("Question:")[0]
    sentences = [s.strip() for s in re.split(r"(?<=[.!?。！？])\s*|\n+", context) if len(s.strip()) > 8]
    sentences = [s for s in sentences if not s.lower().startswith(("context", "answer", "given"))]
    return max(sentences, key=lambda s: len(q & set(tokens(s))), default="I do not know.")


def llamaindex_app(provider: TracerProvider) -> None:
    from llama_index.core import Document, PromptTemplate, Settings, VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.llms.callbacks import llm_completion_callback
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    class HashEmbedding(BaseEmbedding):
        def _get_text_embedding(self, text: str) -> list[float]:
            return embed(text)

        def _get_query_embedding(self, query: str) -> list[float]:
            return embed(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return embed(query)

    class ExtractiveLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="extractive-demo")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            question = prompt.rsplit("Question:", 1)[-1]
            text = extract(prompt, question)
            usage = {"prompt_tokens": len(tokens(prompt)), "completion_tokens": len(tokens(text))}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            return CompletionResponse(text=text, raw={"usage": usage})

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            yield self.complete(prompt)

    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider, config=TraceConfig(hide_embedding_vectors=True))
    try:
        Settings.llm = ExtractiveLLM()
        Settings.embed_model = HashEmbedding()
        index = VectorStoreIndex.from_documents(
            [Document(text=d, id_=f"doc-{i}") for i, d in enumerate(DOCS)]
        )
        qa = PromptTemplate("Context:\n{context_str}\nQuestion: {query_str}\nAnswer:")
        engine = index.as_query_engine(similarity_top_k=2, text_qa_template=qa)
        for q in QUESTIONS[:3]:
            print("llama-index:", q, "->", engine.query(q))
    finally:
        instrumentor.uninstrument()


def langchain_app(provider: TracerProvider) -> None:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.runnables import RunnablePassthrough
    from langchain_core.vectorstores import InMemoryVectorStore
    from openinference.instrumentation.langchain import LangChainInstrumentor

    class HashEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [embed(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return embed(text)

    class ExtractiveChat(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "extractive-demo"

        def _generate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> ChatResult:
            prompt = "\n".join(str(m.content) for m in messages[:-1])
            question = str(messages[-1].content)
            text = extract(prompt + "\nQuestion:", question)
            n_in, n_out = len(tokens(prompt + question)), len(tokens(text))
            usage = {"input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out}
            message = AIMessage(content=text, usage_metadata=usage)  # type: ignore[arg-type]
            return ChatResult(
                generations=[ChatGeneration(message=message)],
                llm_output={
                    "token_usage": {
                        "prompt_tokens": n_in,
                        "completion_tokens": n_out,
                        "total_tokens": n_in + n_out,
                    }
                },
            )

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        store = InMemoryVectorStore(HashEmbeddings())
        store.add_documents([Document(page_content=d, id=f"doc-{i}") for i, d in enumerate(DOCS)])
        prompt = ChatPromptTemplate.from_messages(
            [("system", "Answer from the context.\n\n{context}"), ("human", "{question}")]
        )
        chain = (
            {
                "context": store.as_retriever(search_kwargs={"k": 2})
                | (lambda docs: "\n".join(d.page_content for d in docs)),
                "question": RunnablePassthrough(),
            }
            | prompt
            | ExtractiveChat()
            | StrOutputParser()
        )
        for q in QUESTIONS[3:]:
            print("langchain:", q, "->", chain.invoke(q))
        # a chat turn: the history goes into the prompt, so the trace is read as a conversation
        chat_prompt = ChatPromptTemplate.from_messages(
            [
                ("system", "Answer from the context.\n\n{context}"),
                MessagesPlaceholder("history"),
                ("human", "{question}"),
            ]
        )
        chat = (
            {
                "context": itemgetter("question")
                | store.as_retriever(search_kwargs={"k": 2})
                | (lambda docs: "\n".join(d.page_content for d in docs)),
                "question": itemgetter("question"),
                "history": itemgetter("history"),
            }
            | chat_prompt
            | ExtractiveChat()
            | StrOutputParser()
        )
        history = [HumanMessage("Tell me about Mount Fuji."), AIMessage("It is a volcano in Japan.")]
        question = "How high is the mountain?"
        print("langchain chat:", question, "->", chat.invoke({"question": question, "history": history}))
    finally:
        instrumentor.uninstrument()


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    target = out / "traces.otlp.jsonl"
    if target.exists():
        target.unlink()  # the collector appends; start the example afresh
    with collecting(out) as collector:
        provider = TracerProvider(resource=Resource.create({"service.name": "ragmeter-example-app"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=collector.endpoint)))
        try:
            llamaindex_app(provider)
            langchain_app(provider)
        finally:
            provider.shutdown()  # exports what is left
    print(f"{collector.counts.spans} spans in {collector.counts.exports} exports -> {collector.path}")


if __name__ == "__main__":
    main()
