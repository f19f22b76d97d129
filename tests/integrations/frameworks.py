"""Real LlamaIndex and LangChain objects over examples/docs, built offline.

Each builder imports its framework, so call them only after ``pytest.importorskip``. The LLMs are
the frameworks' own fakes (LlamaIndex ``MockLLM``, which echoes its prompt; LangChain
``FakeListChatModel``), the embedding is :func:`integrations.corpus.embed`. A question containing
``boom`` makes the retriever raise, to exercise per-question errors.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from integrations.corpus import chunks, embed

BOOM = "boom"


def llamaindex_index() -> Any:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.schema import TextNode

    class HashEmbedding(BaseEmbedding):
        def _get_text_embedding(self, text: str) -> list[float]:
            return embed(text)

        def _get_query_embedding(self, query: str) -> list[float]:
            return embed(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return embed(query)

    nodes = [TextNode(text=text, id_=cid) for cid, text in chunks()]
    return VectorStoreIndex(nodes, embed_model=HashEmbedding())


def llamaindex_failing_retriever(index: Any, k: int = 3) -> Any:
    """A LlamaIndex retriever (a real ``BaseRetriever`` subclass) that raises on ``boom``."""
    from llama_index.core.retrievers import BaseRetriever

    inner = index.as_retriever(similarity_top_k=k)

    class Guarded(BaseRetriever):
        def _retrieve(self, query_bundle: Any) -> Any:
            if BOOM in query_bundle.query_str:
                raise RuntimeError("the vector store is down")
            return inner.retrieve(query_bundle)

    return Guarded()


def llamaindex_query_engine(index: Any, k: int = 3) -> Any:
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    return RetrieverQueryEngine.from_args(llamaindex_failing_retriever(index, k), llm=MockLLM())


def langchain_store() -> Any:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    class HashEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [embed(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return embed(text)

    store = InMemoryVectorStore(HashEmbeddings())
    store.add_documents(
        [Document(page_content=text, id=cid, metadata={"source": cid}) for cid, text in chunks()]
    )
    return store


def langchain_chain(store: Any, k: int = 3, answer: str = "It is about 330 metres tall.") -> Any:
    """``{"input": question} -> {"input", "context", "answer"}``, the shape of ``create_retrieval_chain``,
    built with LCEL from a retriever, a prompt and a fake chat model."""
    from langchain_core.language_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    retriever = store.as_retriever(search_kwargs={"k": k})

    def guard(question: str) -> str:
        if BOOM in question:
            raise RuntimeError("the vector store is down")
        return question

    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from these passages only:\n{context}"), ("human", "{input}")]
    )

    def render(x: dict[str, Any]) -> dict[str, Any]:
        return {"input": x["input"], "context": "\n\n".join(d.page_content for d in x["context"])}

    llm = FakeListChatModel(responses=[answer])
    return RunnablePassthrough.assign(context=itemgetter("input") | RunnableLambda(guard) | retriever).assign(
        answer=RunnableLambda(render) | prompt | llm | StrOutputParser()
    )
