"""Each distinct context text stored once: the run store's ``texts`` table.

Retrieval logs repeat their passages: the same chunk comes back for many questions, and the same
data set is run again and again. A sample's ``contexts`` and ``reference_contexts`` are therefore
not kept in its JSON: each text is stored once in ``texts`` (for the whole store, all runs), keyed
by its :func:`digest` (the first 16 bytes of the SHA-256 of its UTF-8), and the sample's ``refs``
column lists the ids of its texts in order (``{"contexts": [12, 7, 12]}``). Reading a page of
samples reads their texts with one query per :data:`IDS_PER_QUERY` ids.

A text is written in the same transaction as the samples that refer to it, and deleting a run
removes the texts no other sample refers to in the same transaction, so two processes sharing a
store never see a reference without its text.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragmeter.dataset.sample import Sample
from ragmeter.log.serialize import loads

#: the sample fields whose texts are stored once
TEXT_FIELDS: tuple[str, ...] = ("contexts", "reference_contexts")
#: ids (or digests) per ``IN (...)`` query (SQLite's oldest limit on parameters is 999)
IDS_PER_QUERY = 500


def digest(text: str) -> bytes:
    """The key of a text in ``texts``: the first 16 bytes of the SHA-256 of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


def split_texts(
    sample: Sample, record: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, list[bytes]], list[tuple[bytes, str]]]:
    """(the sample's record without its texts, the digests of each text field, the texts by
    digest). ``record``: the sample's ``to_dict()`` when the caller has it (its texts are taken out)."""
    record = sample.to_dict() if record is None else record
    refs: dict[str, list[bytes]] = {}
    found: list[tuple[bytes, str]] = []
    for name in TEXT_FIELDS:
        texts = record.get(name)
        if not texts:
            continue
        keys = [digest(t) for t in texts]
        found.extend(zip(keys, texts, strict=True))
        refs[name] = keys
        del record[name]
    return record, refs, found


def _chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), IDS_PER_QUERY):
        yield items[start : start + IDS_PER_QUERY]


def store_texts(conn: sqlite3.Connection, found: Iterable[tuple[bytes, str]]) -> dict[bytes, int]:
    """``{digest: id}`` of ``found``, inserting the texts the store does not hold yet (inside the
    caller's transaction)."""
    texts = dict(found)
    ids: dict[bytes, int] = {}
    for chunk in _chunks(list(texts)):
        marks = ",".join("?" * len(chunk))
        for key, i in conn.execute(f"SELECT digest, id FROM texts WHERE digest IN ({marks})", chunk):
            ids[bytes(key)] = int(i)
    for key, text in texts.items():
        if key not in ids:
            cursor = conn.execute("INSERT INTO texts (digest, text) VALUES (?, ?)", (key, text))
            assert cursor.lastrowid is not None
            ids[key] = int(cursor.lastrowid)
    return ids


def text_refs(refs: Mapping[str, Sequence[bytes]], ids: Mapping[bytes, int]) -> str | None:
    """The ``refs`` column of a sample: its text ids by field, or NULL when it has no texts."""
    if not refs:
        return None
    # JSON written by hand: field names are identifiers, ids are integers
    parts = ('"' + name + '":[' + ",".join(str(ids[k]) for k in keys) + "]" for name, keys in refs.items())
    return "{" + ",".join(parts) + "}"


def read_samples(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> list[tuple[int, Sample]]:
    """``(idx, sample)`` from ``(idx, sample JSON, refs)`` rows, their texts read back."""
    parsed = [(int(idx), loads(text), None if refs is None else json.loads(refs)) for idx, text, refs in rows]
    wanted = sorted({i for _, _, refs in parsed if refs for ids in refs.values() for i in ids})
    texts: dict[int, str] = {}
    for chunk in _chunks(wanted):
        marks = ",".join("?" * len(chunk))
        texts.update((int(i), t) for i, t in conn.execute(f"SELECT id, text FROM texts WHERE id IN ({marks})", chunk))
    out = []
    for idx, record, refs in parsed:
        for name, ids in (refs or {}).items():
            record[name] = [texts[i] for i in ids]
        out.append((idx, Sample.from_dict(record)))
    return out


def referred_texts(conn: sqlite3.Connection, run_id: str) -> set[int]:
    """The ids of the texts the samples of ``run_id`` refer to."""
    out: set[int] = set()
    for (refs,) in conn.execute("SELECT refs FROM samples WHERE run_id = ? AND refs IS NOT NULL", (run_id,)):
        for ids in json.loads(refs).values():
            out.update(ids)
    return out


def delete_orphan_texts(conn: sqlite3.Connection, candidates: set[int]) -> int:
    """Delete the texts among ``candidates`` that no sample refers to any more; how many."""
    if not candidates:
        return 0
    still: set[int] = set()
    for (refs,) in conn.execute("SELECT refs FROM samples WHERE refs IS NOT NULL"):
        for ids in json.loads(refs).values():
            still.update(i for i in ids if i in candidates)
    gone = sorted(candidates - still)
    for chunk in _chunks(gone):
        conn.execute(f"DELETE FROM texts WHERE id IN ({','.join('?' * len(chunk))})", chunk)
    return len(gone)


__all__ = [
    "IDS_PER_QUERY",
    "TEXT_FIELDS",
    "delete_orphan_texts",
    "digest",
    "read_samples",
    "referred_texts",
    "split_texts",
    "store_texts",
    "text_refs",
]
