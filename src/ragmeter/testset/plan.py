"""Plan a test-set generation: which chunk (or chunk pair) each task works on, with which kind.

Tasks are deterministic for a given seed, so ``--resume`` finds the same task ids and skips the
ones already done. Kinds: ``single_hop`` (one fact of one chunk), ``multi_hop`` (two related
chunks; related = most similar by embeddings, not the same or a neighbouring chunk of one
document), ``reasoning`` (compare / combine facts of one chunk), ``user_style`` (short,
misspelled or conversational wording) and, offline, ``cloze``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter.errors import ConfigError
from ragmeter.retrieval.relevance import text_overlap
from ragmeter.testset.chunking import Chunk

__all__ = ["KINDS", "USER_STYLES", "Task", "pair_chunks", "parse_kinds", "plan_tasks"]

KINDS: tuple[str, ...] = ("single_hop", "multi_hop", "reasoning", "user_style")
#: user-style variants, used in turn
USER_STYLES: tuple[str, ...] = ("short", "misspelled", "conversational")
#: chunks more similar than this are near copies (overlap), not a multi-hop pair
PAIR_MAX_SIMILARITY = 0.97


@dataclass(frozen=True)
class Task:
    id: str
    kind: str
    chunks: tuple[Chunk, ...]
    style: str | None = None


def parse_kinds(kinds: str | Sequence[str] | None) -> tuple[str, ...]:
    if kinds is None:
        return ("single_hop",)
    items = (
        [k.strip() for k in kinds.split(",")] if isinstance(kinds, str) else [str(k).strip() for k in kinds]
    )
    items = [k.replace("-", "_") for k in items if k]
    unknown = [k for k in items if k not in KINDS]
    if unknown or not items:
        raise ConfigError(
            f"unknown question kind(s) {', '.join(unknown) or '(none)'}; known: {', '.join(KINDS)}"
        )
    return tuple(dict.fromkeys(items))


def _neighbours(a: Chunk, b: Chunk) -> bool:
    return a.doc_id == b.doc_id and abs(a.index - b.index) <= 1


def pair_chunks(chunks: Sequence[Chunk], embeddings: np.ndarray | None) -> dict[int, int]:
    """For each chunk, its most related other chunk (index), when there is one.

    Related: highest cosine similarity of the embeddings (token overlap without embeddings),
    excluding the chunk itself, its neighbours in the same document and near copies.
    """
    n = len(chunks)
    if n < 2:
        return {}
    if embeddings is not None:
        sims = np.asarray(embeddings, dtype=np.float64) @ np.asarray(embeddings, dtype=np.float64).T
    else:
        sims = np.array([[text_overlap(a.text, b.text) for b in chunks] for a in chunks])
    out: dict[int, int] = {}
    for i in range(n):
        best, best_j = -2.0, -1
        for j in range(n):
            if j == i or _neighbours(chunks[i], chunks[j]) or sims[i, j] >= PAIR_MAX_SIMILARITY:
                continue
            if sims[i, j] > best:
                best, best_j = float(sims[i, j]), j
        if best_j >= 0:
            out[i] = best_j
    return out


def plan_tasks(
    chunks: Sequence[Chunk], kinds: Sequence[str], *, pairs: dict[int, int] | None = None, seed: int = 0
) -> list[Task]:
    """All tasks in the order they are run: chunks in a seeded shuffle, kinds taken in turn.

    Every (chunk, kind) appears once; ``multi_hop`` is left out for a chunk without a partner.
    """
    order = list(range(len(chunks)))
    random.Random(seed).shuffle(order)
    tasks: list[Task] = []
    style_i = 0
    for round_ in range(len(kinds)):
        for pos, ci in enumerate(order):
            kind = kinds[(pos + round_) % len(kinds)]
            chunk = chunks[ci]
            if kind == "multi_hop":
                partner = (pairs or {}).get(ci)
                if partner is None:
                    continue
                other = chunks[partner]
                tasks.append(Task(f"multi_hop:{chunk.id}+{other.id}", kind, (chunk, other)))
            elif kind == "user_style":
                style = USER_STYLES[style_i % len(USER_STYLES)]
                style_i += 1
                tasks.append(Task(f"user_style:{chunk.id}", kind, (chunk,), style))
            else:
                tasks.append(Task(f"{kind}:{chunk.id}", kind, (chunk,)))
    return tasks
