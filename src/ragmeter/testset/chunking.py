"""Sentence-aware chunking with overlap, for English and Chinese alike.

The text is split into sentences with :func:`ragmeter.text.split_sentences`; sentences are packed
into a chunk while its length stays within ``chunk_size`` characters (a CJK character counts as one
character, like a Latin letter). The next chunk starts with the previous chunk's last sentences
whose length adds up to at most ``overlap`` characters, so a fact cut at a boundary is whole in one
chunk. A single sentence longer than ``chunk_size`` is cut into pieces of ``chunk_size`` characters
(at a space when there is one nearby). Sentences are joined with a space, or with nothing between
two CJK characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ragmeter.errors import ConfigError
from ragmeter.testset.documents import Document
from ragmeter.text import detect_lang, is_cjk, split_sentences

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_OVERLAP",
    "Chunk",
    "chunk_documents",
    "chunk_text",
    "join_sentences",
]

DEFAULT_CHUNK_SIZE = 800
DEFAULT_OVERLAP = 150


@dataclass(frozen=True)
class Chunk:
    """A piece of a document. ``id`` is ``"<doc_id>#<index>"`` (index from 0)."""

    id: str
    doc_id: str
    title: str
    text: str
    index: int
    lang: str


_ENDS = frozenset(".!?;:。！？；：…)）」』”\"'")


def join_sentences(sentences: Iterable[str]) -> str:
    out = ""
    for s in sentences:
        if not out:
            out = s
        elif out[-1:] not in _ENDS or s[-1:] not in _ENDS:  # a heading or label: on its own line
            out += "\n" + s
        elif is_cjk(out[-1:]) or is_cjk(s[:1]) or out[-1:] in "。！？；）」』”":  # no space in Chinese
            out += s
        else:
            out += " " + s
    return out


def _hard_split(sentence: str, size: int) -> list[str]:
    pieces = []
    rest = sentence
    while len(rest) > size:
        cut = rest.rfind(" ", size // 2, size)
        cut = size if cut <= 0 else cut
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pieces.append(rest)
    return pieces


def chunk_text(
    text: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_OVERLAP
) -> list[str]:
    """Chunk texts of ``text`` (see the module docstring)."""
    if not isinstance(chunk_size, int) or chunk_size < 20:
        raise ConfigError(f"chunk_size must be an integer >= 20 characters, got {chunk_size!r}")
    if not isinstance(overlap, int) or overlap < 0 or overlap >= chunk_size:
        raise ConfigError(f"overlap must be an integer in [0, chunk_size), got {overlap!r}")
    sentences: list[str] = []
    for s in split_sentences(text):
        sentences.extend(_hard_split(s, chunk_size) if len(s) > chunk_size else [s])
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    fresh = 0  # sentences in `current` that are not overlap from the previous chunk
    for s in sentences:
        if current and length + len(s) + 1 > chunk_size and fresh > 0:
            chunks.append(join_sentences(current))
            carry: list[str] = []
            carried = 0
            for prev in reversed(current):
                if carried + len(prev) > overlap or len(carry) + 1 >= len(current):
                    break
                carry.insert(0, prev)
                carried += len(prev) + 1
            if carried + len(s) + 1 > chunk_size:
                carry, carried = [], 0
            current, length, fresh = carry, carried, 0
        current.append(s)
        length += len(s) + 1
        fresh += 1
    if current and fresh > 0:
        chunks.append(join_sentences(current))
    return chunks


def chunk_documents(
    documents: Iterable[Document], *, chunk_size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_OVERLAP
) -> list[Chunk]:
    """Every document's chunks, in document order."""
    out: list[Chunk] = []
    for doc in documents:
        for i, text in enumerate(chunk_text(doc.text, chunk_size=chunk_size, overlap=overlap)):
            out.append(Chunk(f"{doc.id}#{i}", doc.id, doc.title, text, i, detect_lang(text)))
    return out
