"""Example data shipped with ragmeter.

``rag_samples.jsonl`` holds 12 RAG samples (8 English, 4 Chinese) with question, contexts, answer,
reference, context_ids and reference_context_ids. Some answers are faithful and complete; others
are unfaithful, incomplete or evasive, and some contexts are padded, so the scores vary. The same
file is in the repository's ``examples/`` folder (see examples/README.md).
"""

from __future__ import annotations

from pathlib import Path

from ragmeter.errors import ConfigError

_HERE = Path(__file__).resolve().parent

#: Names of the data files in this package.
EXAMPLES: tuple[str, ...] = ("rag_samples.jsonl",)


def example_path(name: str = "rag_samples.jsonl") -> Path:
    """Path of an example data file shipped in the package (default: ``rag_samples.jsonl``)."""
    if name not in EXAMPLES:
        raise ConfigError(f"unknown example {name!r}; examples: {', '.join(EXAMPLES)}")
    return _HERE / name


__all__ = ["EXAMPLES", "example_path"]
