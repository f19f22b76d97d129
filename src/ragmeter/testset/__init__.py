"""Test sets from documents: loading, chunking, question synthesis (LLM or offline cloze), filters.
See docs/testsets.md."""

from __future__ import annotations

from ragmeter.testset.chunking import Chunk, chunk_documents, chunk_text
from ragmeter.testset.documents import Document, html_to_text, load_documents
from ragmeter.testset.estimate import GenerationEstimate, estimate_generation
from ragmeter.testset.generate import GenerationStats, TestsetResult, agenerate_testset, generate_testset
from ragmeter.testset.offline import cloze_questions, find_spans
from ragmeter.testset.plan import KINDS

__all__ = [
    "KINDS",
    "Chunk",
    "Document",
    "GenerationEstimate",
    "GenerationStats",
    "TestsetResult",
    "agenerate_testset",
    "chunk_documents",
    "chunk_text",
    "cloze_questions",
    "estimate_generation",
    "find_spans",
    "generate_testset",
    "html_to_text",
    "load_documents",
]
