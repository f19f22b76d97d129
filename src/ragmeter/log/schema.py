"""The run store's SQLite schema: its tables, its version, and the migrations between versions.

Tables::

    schema_version(version)
    runs(run_id PK, created_at, finished_at, status, meta JSON)
    samples(run_id, idx, sample JSON, key, conversation_id, turn, refs JSON)   PK (run_id, idx)
    texts(id PK, digest UNIQUE, text)
    problems(run_id, seq, file, row, field, message)       PK (run_id, seq)
    scores(run_id, idx, metric, value, reason, details JSON, error_kind, error_message, error_raw,
           usage JSON, calls JSON, duration_s, created_at) PK (run_id, idx, metric)
    labels(run_id, idx, metric, value, label_kind, drawn, labeller, created_at)
                                                           PK (run_id, idx, metric)
    label_draws(run_id PK, seed, created_at)

Timestamps are ISO 8601 strings in UTC (``2024-05-01T12:00:00.123456+00:00``).
``idx`` is the sample's position in the dataset that was run (0-based). ``key`` is the sample's
stable key (:mod:`ragmeter.dataset.keys`), what ``compare`` matches two runs by.
``conversation_id`` and ``turn`` are a conversation's samples' place in it (NULL for other samples;
``turn`` NULL on the conversation sample itself): the same values the sample JSON holds, in columns
so that a query can select a conversation or a turn.

``texts`` holds each distinct context text once for the whole store (``digest``: the first 16 bytes
of the SHA-256 of its UTF-8): a sample's ``contexts`` and ``reference_contexts`` are left out of its
JSON and ``refs`` lists their text ids (``{"contexts": [id, ...]}``), so a passage a retriever
returns for many questions, or a data set run again, is stored once. ``refs`` NULL: the JSON holds
the sample whole (runs recorded before version 5). Texts no sample refers to are removed with the
run that last referred to them.

``labels`` holds people's labels of a run's samples (value in [0, 1], ``label_kind`` binary or
graded, ``drawn`` random or picked); ``label_draws`` the seed of a run's draw of samples to label
(:mod:`ragmeter.log.labels`).

Schema versions: 1 had no ``samples.key``; opening a version-1 file adds the column (NULL for the
runs already recorded: :meth:`~ragmeter.log.store.RunStore.load_keys` derives their keys from the
stored samples) and marks the file version 2. Version 2 had no labels; opening a version-2 (or 1)
file adds the two tables and marks it version 3. Version 3 had no ``samples.conversation_id`` and
``samples.turn``; opening it (or an older file) adds them (NULL for the runs recorded before, which
had no conversations) and marks it version 4. Version 4 had no ``texts`` and no ``samples.refs``;
opening it (or an older file) adds them and marks it version 5. A file of a newer version than this
code reads is refused.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from pathlib import Path

from ragmeter.errors import RunError

SCHEMA_VERSION = 5
#: how long a writer or reader waits for another process's lock before failing
BUSY_TIMEOUT_MS = 30_000

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    created_at  TEXT NOT NULL,
    finished_at TEXT,
    status      TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
    meta        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_created ON runs (created_at);
CREATE TABLE IF NOT EXISTS samples (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    idx    INTEGER NOT NULL,
    sample TEXT NOT NULL,
    key    TEXT,
    conversation_id TEXT,
    turn   INTEGER,
    refs   TEXT,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS problems (
    run_id  TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    file    TEXT,
    row     INTEGER,
    field   TEXT,
    message TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS scores (
    run_id        TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    idx           INTEGER NOT NULL,
    metric        TEXT NOT NULL,
    value         REAL,
    reason        TEXT NOT NULL,
    details       TEXT NOT NULL,
    error_kind    TEXT,
    error_message TEXT,
    error_raw     TEXT,
    usage         TEXT NOT NULL,
    calls         TEXT NOT NULL,
    duration_s    REAL NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (run_id, idx, metric)
);
"""

#: the tables of version 3 (people's labels and the draw); also the migration from version 2
LABEL_TABLES = """
CREATE TABLE IF NOT EXISTS labels (
    run_id     TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,
    metric     TEXT NOT NULL,
    value      REAL NOT NULL CHECK (value >= 0 AND value <= 1),
    label_kind TEXT NOT NULL CHECK (label_kind IN ('binary', 'graded')),
    drawn      TEXT NOT NULL CHECK (drawn IN ('random', 'picked')),
    labeller   TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, idx, metric)
);
CREATE TABLE IF NOT EXISTS label_draws (
    run_id     TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    seed       INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
"""


#: the table of version 5 (each distinct context text once); also the migration from version 4
TEXT_TABLES = """
CREATE TABLE IF NOT EXISTS texts (
    id     INTEGER PRIMARY KEY,
    digest BLOB NOT NULL UNIQUE,
    text   TEXT NOT NULL
);
"""


INSERT_SCORE = (
    "INSERT OR REPLACE INTO scores (run_id, idx, metric, value, reason, details, error_kind, "
    "error_message, error_raw, usage, calls, duration_s, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def utc_now() -> str:
    """The time now as the store writes it: ISO 8601 in UTC, with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


#: a function that opens one write transaction (``RunStore._tx``)
Transaction = Callable[[], AbstractContextManager[sqlite3.Connection]]


def enable_wal(conn: sqlite3.Connection, timeout_s: float = BUSY_TIMEOUT_MS / 1000) -> str:
    """``PRAGMA journal_mode = WAL``, tried again for up to ``timeout_s`` while another process holds
    the file: switching a new database to WAL can answer "database is locked" at once, without
    SQLite's busy wait (two runs starting together on one ``--out``, or one cache). Returns the
    journal mode the file is in after it."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            row = conn.execute("PRAGMA journal_mode = WAL").fetchone()
            return "" if row is None else str(row[0]).lower()
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def prepare(conn: sqlite3.Connection, path: Path, tx: Transaction) -> None:
    """Make the file at ``path`` (open as ``conn``) a run store of :data:`SCHEMA_VERSION`: WAL mode,
    the tables when it is new, the migrations when it is older; refuse one that is newer."""
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    mode = enable_wal(conn)
    if mode != "wal":
        raise RunError(f"cannot switch {path} to WAL mode (got {mode!r})")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    version = read_version(conn)
    if version is None:
        with tx() as c:
            c.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = c.execute("SELECT MAX(version) FROM schema_version").fetchone()
            if row is None or row[0] is None:
                for stmt in (SCHEMA + LABEL_TABLES + TEXT_TABLES).split(";"):
                    if stmt.strip():
                        c.execute(stmt)
                c.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
                version = SCHEMA_VERSION
            else:
                version = int(row[0])
    if version == 1:
        migrate_1_to_2(tx)
        version = 2
    if version == 2:
        migrate_2_to_3(tx)
        version = 3
    if version == 3:
        migrate_3_to_4(tx)
        version = 4
    if version == 4:
        migrate_4_to_5(tx)
    elif version > SCHEMA_VERSION:
        raise RunError(
            f"{path} was written by a newer ragmeter (run store schema {version}; this version "
            f"reads up to {SCHEMA_VERSION}); upgrade ragmeter or use another --out directory"
        )


def migrate_1_to_2(tx: Transaction) -> None:
    """Version 1 -> 2: the samples get a ``key`` column (NULL for runs recorded before)."""
    with tx() as c:
        row = c.execute("SELECT MAX(version) FROM schema_version").fetchone()
        if row is not None and row[0] == 1:  # another process may have migrated meanwhile
            c.execute("ALTER TABLE samples ADD COLUMN key TEXT")
            c.execute("UPDATE schema_version SET version = 2")


def migrate_2_to_3(tx: Transaction) -> None:
    """Version 2 -> 3: the ``labels`` and ``label_draws`` tables (empty)."""
    with tx() as c:
        row = c.execute("SELECT MAX(version) FROM schema_version").fetchone()
        if row is not None and row[0] == 2:  # another process may have migrated meanwhile
            for stmt in LABEL_TABLES.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            c.execute("UPDATE schema_version SET version = 3")


def migrate_3_to_4(tx: Transaction) -> None:
    """Version 3 -> 4: the samples get ``conversation_id`` and ``turn`` columns (NULL before)."""
    with tx() as c:
        row = c.execute("SELECT MAX(version) FROM schema_version").fetchone()
        if row is not None and row[0] == 3:  # another process may have migrated meanwhile
            have = {str(r[1]) for r in c.execute("PRAGMA table_info(samples)").fetchall()}
            for column, kind in (("conversation_id", "TEXT"), ("turn", "INTEGER")):
                if column not in have:
                    c.execute(f"ALTER TABLE samples ADD COLUMN {column} {kind}")
            c.execute("UPDATE schema_version SET version = 4")


def migrate_4_to_5(tx: Transaction) -> None:
    """Version 4 -> 5: the ``texts`` table (empty) and the samples' ``refs`` column (NULL for the
    runs recorded before, whose sample JSON holds its contexts)."""
    with tx() as c:
        row = c.execute("SELECT MAX(version) FROM schema_version").fetchone()
        if row is not None and row[0] == 4:  # another process may have migrated meanwhile
            for stmt in TEXT_TABLES.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            have = {str(r[1]) for r in c.execute("PRAGMA table_info(samples)").fetchall()}
            if "refs" not in have:
                c.execute("ALTER TABLE samples ADD COLUMN refs TEXT")
            c.execute("UPDATE schema_version SET version = 5")


def read_version(conn: sqlite3.Connection) -> int | None:
    """The file's schema version; None for a file without one (new)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not exists:
        return None
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return None if row is None or row[0] is None else int(row[0])


__all__ = [
    "BUSY_TIMEOUT_MS",
    "INSERT_SCORE",
    "LABEL_TABLES",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TEXT_TABLES",
    "enable_wal",
    "migrate_1_to_2",
    "migrate_2_to_3",
    "migrate_3_to_4",
    "migrate_4_to_5",
    "prepare",
    "read_version",
    "utc_now",
]
