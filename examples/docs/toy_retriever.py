"""A toy retriever over the chunks of examples/docs, for the worked examples in docs/retrieval.md
and docs/testsets.md: ranks chunks by the number of distinct tokens they share with the question.

    PYTHONPATH=examples/docs ragmeter evaluate testset.jsonl --retriever toy_retriever:retrieve
    PYTHONPATH=examples/docs ragmeter evaluate testset.jsonl --pipeline toy_retriever:answer -m token_f1,hit_rate
"""

from __future__ import annotations

from pathlib import Path

from ragmeter.testset import chunk_documents, load_documents
from ragmeter.text import split_sentences, tokenize

HERE = Path(__file__).resolve().parent
# the same chunking as `ragmeter generate examples/docs` with its defaults, so the chunk ids match
CHUNKS = chunk_documents(load_documents(HERE))


def retrieve(question: str, k: int = 3) -> list[dict[str, str]]:
    q = set(tokenize(question))
    ranked = sorted(CHUNKS, key=lambda c: (-len(q & set(tokenize(c.text))), c.id))
    return [{"text": c.text, "id": c.id} for c in ranked[:k]]


def answer(question: str) -> dict[str, object]:
    """Retrieve, then 'answer' with the best-matching sentence of the top chunk (no model)."""
    contexts = retrieve(question)
    q = set(tokenize(question))
    sentences = split_sentences(contexts[0]["text"]) if contexts else []
    best = max(sentences, key=lambda s: len(q & set(tokenize(s))), default="")
    return {"answer": best, "contexts": contexts}
