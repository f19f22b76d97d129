"""What a stream of samples remembers of the samples before: the first row of each id, how often each
key was met.

A source is read once, a row at a time, and two checks need every row before: a later row with an
id seen before is a problem ("duplicate id ... first at row N"), and a repeated key is numbered
(:class:`~ragmeter.dataset.keys.KeyNumberer`). :class:`Seen` keeps these in dicts (about a hundred
bytes a row); :class:`SpilledSeen` keeps them in a private temporary SQLite file, whose pages
SQLite holds in a fixed cache (2 MB), so a stream of any length remembers them in flat memory, at
about 4 µs a lookup. A run with a store reads its data with a :class:`SpilledSeen`.
"""

from __future__ import annotations

import sqlite3
from typing import Protocol


class Remembers(Protocol):
    """What a sample stream remembers (see the module docstring)."""

    def first(self, name: str, row: int) -> int | None:
        """The row ``name`` was first met at, or None when this is the first time (then ``row`` is kept)."""
        ...

    def row_of(self, name: str) -> int | None:
        """The row ``name`` was first met at, or None (nothing is kept)."""
        ...

    def count(self, name: str) -> int:
        """How many times ``name`` has been met, this time included."""
        ...

    def close(self) -> None: ...


class Seen:
    """:class:`Remembers` in dicts."""

    def __init__(self) -> None:
        self._rows: dict[str, int] = {}
        self._counts: dict[str, int] = {}

    def first(self, name: str, row: int) -> int | None:
        seen = self._rows.get(name)
        if seen is None:
            self._rows[name] = row
        return seen

    def row_of(self, name: str) -> int | None:
        return self._rows.get(name)

    def count(self, name: str) -> int:
        n = self._counts.get(name, 0) + 1
        self._counts[name] = n
        return n

    def close(self) -> None:
        self._rows.clear()
        self._counts.clear()


class SpilledSeen:
    """:class:`Remembers` in a private temporary SQLite file (deleted when closed)."""

    def __init__(self) -> None:
        # "" opens a private, temporary on-disk database; nothing in it needs to survive a crash
        self._conn = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode = OFF")
        self._conn.execute("PRAGMA synchronous = OFF")
        self._conn.execute("CREATE TABLE rows (name TEXT PRIMARY KEY, row INTEGER NOT NULL) WITHOUT ROWID")
        self._conn.execute("CREATE TABLE counts (name TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID")

    def first(self, name: str, row: int) -> int | None:
        if self._conn.execute("INSERT OR IGNORE INTO rows (name, row) VALUES (?, ?)", (name, row)).rowcount:
            return None
        return int(self._conn.execute("SELECT row FROM rows WHERE name = ?", (name,)).fetchone()[0])

    def row_of(self, name: str) -> int | None:
        found = self._conn.execute("SELECT row FROM rows WHERE name = ?", (name,)).fetchone()
        return None if found is None else int(found[0])

    def count(self, name: str) -> int:
        if self._conn.execute("INSERT OR IGNORE INTO counts (name, n) VALUES (?, 1)", (name,)).rowcount:
            return 1
        self._conn.execute("UPDATE counts SET n = n + 1 WHERE name = ?", (name,))
        return int(self._conn.execute("SELECT n FROM counts WHERE name = ?", (name,)).fetchone()[0])

    def close(self) -> None:
        self._conn.close()


__all__ = ["Remembers", "Seen", "SpilledSeen"]
