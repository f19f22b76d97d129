"""Small in-process fakes of the LlamaIndex and LangChain interfaces ragmeter adapts."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

CORPUS = {
    "eiffel": "The Eiffel Tower was built between 1887 and 1889 and is about 330 metres tall.",
    "gil": "The global interpreter lock lets only one thread run Python bytecode at a time.",
    "photo": "Photosynthesis converts light energy into chemical energy in the chloroplasts.",
}


def search(question: str, k: int = 2) -> list[str]:
    """Rank the corpus ids by shared words with the question (a toy retriever)."""
    words = set(question.lower().replace("?", "").split())
    scored = sorted(CORPUS, key=lambda i: (-len(words & set(CORPUS[i].lower().split())), i))
    return scored[:k]


# -- LlamaIndex shapes -------------------------------------------------------------------------
@dataclass
class TextNode:
    text: str
    id_: str

    @property
    def node_id(self) -> str:
        return self.id_

    def get_content(self) -> str:
        return self.text


@dataclass
class NodeWithScore:
    node: TextNode
    score: float = 0.0


@dataclass
class Response:
    response: str
    source_nodes: list[NodeWithScore] = field(default_factory=list)


class FakeQueryEngine:
    def __init__(self) -> None:
        self.async_calls = 0
        self.sync_calls = 0

    def _answer(self, question: str) -> Response:
        ids = search(question)
        nodes = [NodeWithScore(TextNode(CORPUS[i], i), 1.0 / (r + 1)) for r, i in enumerate(ids)]
        return Response(CORPUS[ids[0]], nodes)

    def query(self, question: str) -> Response:
        self.sync_calls += 1
        return self._answer(question)

    async def aquery(self, question: str) -> Response:
        self.async_calls += 1
        await asyncio.sleep(0)
        return self._answer(question)


class FakeLlamaRetriever:
    def retrieve(self, question: str) -> list[NodeWithScore]:
        return [NodeWithScore(TextNode(CORPUS[i], i)) for i in search(question)]


# -- LangChain shapes --------------------------------------------------------------------------
@dataclass
class Document:
    page_content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


class FakeVectorStoreRetriever:  # the class name says Retriever, as LangChain's do
    def invoke(self, question: str) -> list[Document]:
        return [Document(CORPUS[i], {"id": i}) for i in search(question)]


class FakeRetrievalChain:
    """Like create_retrieval_chain: {"input": q} -> {"input", "context", "answer"}."""

    def __init__(self) -> None:
        self.retriever = FakeVectorStoreRetriever()
        self.inputs: list[Any] = []

    def invoke(self, inputs: dict[str, str]) -> dict[str, Any]:
        self.inputs.append(inputs)
        docs = self.retriever.invoke(inputs["input"])
        return {"input": inputs["input"], "context": docs, "answer": docs[0].page_content}
