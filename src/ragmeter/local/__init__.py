"""The offline judge and its local models (no network, no key).

:class:`LocalJudge` answers the metric steps with sentence embeddings and text analysis
and, for English claims, a small packaged entailment verifier (:class:`OnnxVerifier`; docs/local-judge.md
says how far to trust it). Users can plug in their own local models: a sentence-transformers folder
(:class:`SentenceTransformerEmbedder`) and an NLI / cross-encoder folder in place of the packaged
verifier (:class:`CrossEncoderSupport`)::

    from ragmeter.local import CrossEncoderSupport, LocalJudge, SentenceTransformerEmbedder

    judge = LocalJudge(
        embedder=SentenceTransformerEmbedder("~/models/all-MiniLM-L6-v2"),
        verifier=CrossEncoderSupport("~/models/nli-deberta-v3-small"),
    )
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_exports

if TYPE_CHECKING:
    from ragmeter.local.calibration import Combiner, load_combiner
    from ragmeter.local.calibration_file import Calibration, load_calibration
    from ragmeter.local.cross_encoder import CrossEncoderSupport
    from ragmeter.local.embedders import (
        Embedder,
        SentenceTransformerEmbedder,
        USEEmbedder,
        default_embedder,
        normalize_rows,
    )
    from ragmeter.local.judge import SUPPORTED_STEPS, LocalJudge
    from ragmeter.local.verifier import ByLanguage, OnnxVerifier, Verifier, default_verifier

# imported on first use: an LLM judge that embeds locally needs the embedder, not the local judge
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Combiner": "ragmeter.local.calibration",
        "load_combiner": "ragmeter.local.calibration",
        "Calibration": "ragmeter.local.calibration_file",
        "load_calibration": "ragmeter.local.calibration_file",
        "CrossEncoderSupport": "ragmeter.local.cross_encoder",
        "Embedder": "ragmeter.local.embedders",
        "SentenceTransformerEmbedder": "ragmeter.local.embedders",
        "USEEmbedder": "ragmeter.local.embedders",
        "default_embedder": "ragmeter.local.embedders",
        "normalize_rows": "ragmeter.local.embedders",
        "SUPPORTED_STEPS": "ragmeter.local.judge",
        "LocalJudge": "ragmeter.local.judge",
        "ByLanguage": "ragmeter.local.verifier",
        "OnnxVerifier": "ragmeter.local.verifier",
        "Verifier": "ragmeter.local.verifier",
        "default_verifier": "ragmeter.local.verifier",
    },
)

__all__ = [
    "SUPPORTED_STEPS",
    "ByLanguage",
    "Calibration",
    "Combiner",
    "CrossEncoderSupport",
    "Embedder",
    "LocalJudge",
    "OnnxVerifier",
    "SentenceTransformerEmbedder",
    "USEEmbedder",
    "Verifier",
    "default_embedder",
    "default_verifier",
    "load_calibration",
    "load_combiner",
    "normalize_rows",
]
