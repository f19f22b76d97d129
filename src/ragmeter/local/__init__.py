"""The offline judge and its local models (no network, no key).

:class:`LocalJudge` answers the metric steps with sentence embeddings and text analysis
(docs/local-judge.md says how far to trust it). Users can plug in their own local models:
a sentence-transformers folder (:class:`SentenceTransformerEmbedder`) and an NLI /
cross-encoder folder (:class:`CrossEncoderSupport`)::

    from ragmeter.local import CrossEncoderSupport, LocalJudge, SentenceTransformerEmbedder

    judge = LocalJudge(
        embedder=SentenceTransformerEmbedder("~/models/all-MiniLM-L6-v2"),
        nli=CrossEncoderSupport("~/models/nli-deberta-v3-small"),
    )
"""

from __future__ import annotations

from ragmeter.local.calibration import Combiner, load_combiner
from ragmeter.local.cross_encoder import CrossEncoderSupport
from ragmeter.local.embedders import (
    Embedder,
    SentenceTransformerEmbedder,
    USEEmbedder,
    default_embedder,
    normalize_rows,
)
from ragmeter.local.judge import SUPPORTED_STEPS, LocalJudge

__all__ = [
    "SUPPORTED_STEPS",
    "Combiner",
    "CrossEncoderSupport",
    "Embedder",
    "LocalJudge",
    "SentenceTransformerEmbedder",
    "USEEmbedder",
    "default_embedder",
    "load_combiner",
    "normalize_rows",
]
