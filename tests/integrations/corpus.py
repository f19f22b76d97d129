"""The examples/docs chunks and a deterministic embedding for building real framework objects offline.

The embedding is a hashing bag of words (each token adds 1 to one of ``DIM`` buckets, then the
vector is L2-normalised): a question shares buckets with the chunks that share its words, so the
ranking is meaningful and the same on every run, with no model to download.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

from ragmeter.testset import chunk_documents, load_documents
from ragmeter.text import tokenize

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "examples" / "docs"
DIM = 256


def chunks() -> list[tuple[str, str]]:
    """(chunk id, text) of every chunk of examples/docs, chunked as `ragmeter generate` does."""
    return [(c.id, c.text) for c in chunk_documents(load_documents(DOCS))]


def embed(text: str) -> list[float]:
    vec = [0.0] * DIM
    for token in tokenize(text):
        vec[int(hashlib.blake2b(token.encode(), digest_size=4).hexdigest(), 16) % DIM] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]
