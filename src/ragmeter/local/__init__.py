"""The offline judge and its local models (no network, no key)."""

from __future__ import annotations

from ragmeter.local.embedders import (
    Embedder,
    SentenceTransformerEmbedder,
    USEEmbedder,
    default_embedder,
    normalize_rows,
)
from ragmeter.local.judge import LocalJudge

__all__ = [
    "Embedder",
    "LocalJudge",
    "SentenceTransformerEmbedder",
    "USEEmbedder",
    "default_embedder",
    "normalize_rows",
]
