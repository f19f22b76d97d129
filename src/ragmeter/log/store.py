"""The run store: every run recorded as it goes, in one SQLite file.

Layout: ``<directory>/runs.sqlite`` (the directory is created when missing). The file is in WAL
mode with ``synchronous=NORMAL``, so other processes (``ragmeter runs list`` while a run writes)
can read at the same time; a ``busy_timeout`` makes a writer or reader wait for a lock instead of
failing.

Scores may be committed in groups: with ``RunStore(dir, group_rows=N)``, :meth:`record_score`
buffers a row and the store commits the buffer, in one transaction, once it holds N rows, on
:meth:`flush`, before any read or other write, and on :meth:`close`. The default ``group_rows=1``
commits each score at once. The runner opens its store with ``group_rows=1000`` and calls
:meth:`flush` every 100 ms, so a crash of the process (``kill -9``, power loss) loses at most the
scores finished in the last 100 ms (at most the last group); Ctrl-C and any error lose nothing
(the runner flushes on the way out), and ``--resume`` scores what was lost again. Everything
else (runs, samples, problems, status) commits at once.

The tables, their versions and the migrations between them: :mod:`ragmeter.log.schema`.

Methods that read a run accept a run id, a unique prefix of one, or ``"latest"`` / ``"last"``;
methods that write take the exact run id.
"""

from __future__ import annotations

import secrets
import shutil
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragmeter.dataset.keys import sample_keys
from ragmeter.dataset.sample import Sample
from ragmeter.errors import DatasetError, RunError
from ragmeter.judges.types import CallRecord, Usage
from ragmeter.log.labels import LabelsMixin
from ragmeter.log.reading import SAMPLE_PAGE as SAMPLE_PAGE  # re-exported
from ragmeter.log.reading import ReadingMixin
from ragmeter.log.reading import ScoreRow as ScoreRow  # re-exported (its old home)
from ragmeter.log.schema import BUSY_TIMEOUT_MS, INSERT_SCORE, prepare, utc_now
from ragmeter.log.schema import SCHEMA_VERSION as SCHEMA_VERSION  # re-exported (its old home)
from ragmeter.log.serialize import call_to_dict, dumps, loads
from ragmeter.log.texts import delete_orphan_texts, referred_texts, split_texts, store_texts, text_refs
from ragmeter.metrics.base import Score

DB_NAME = "runs.sqlite"
STATUSES: tuple[str, ...] = ("running", "finished", "interrupted", "failed")
#: a run is not started (or resumed) with less free space than this on the store's disk
MIN_FREE_BYTES = 16 * 1024 * 1024


_now = utc_now


def new_run_id() -> str:
    """A fresh run id: ``YYYYMMDD-HHMMSS-<6 hex>`` (UTC time, random suffix)."""
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def require_store(directory: str | Path) -> Path:
    """``directory`` as a Path; RunError unless it holds a run store (for readers, which must not
    create an empty store where there was none, as opening :class:`RunStore` would)."""
    path = Path(directory)
    if not (path / DB_NAME).is_file():
        raise RunError(f"no run store in {path} (no {DB_NAME}); name the --out directory of your runs")
    return path


@dataclass(frozen=True)
class RunInfo:
    """One run's header. ``created_at``/``finished_at`` are ISO 8601 UTC strings; ``meta`` is the
    run record's configuration (dataset hash, metric specs, judge, versions...) and, once the run
    ends, its ``summary``."""

    run_id: str
    created_at: str
    finished_at: str | None
    status: str
    meta: dict[str, Any] = field(default_factory=dict)


class RunStore(ReadingMixin, LabelsMixin):
    """Run records in ``<directory>/runs.sqlite``. Synchronous; use from one thread at a time
    (an internal lock makes accidental use from several threads safe). Each write commits at once.
    People's labels of a run and its draw of samples to label: :class:`~ragmeter.log.labels.LabelsMixin`;
    reading a run back a page at a time, and its aggregates: :class:`~ragmeter.log.reading.ReadingMixin`.

    Use as a context manager or call :meth:`close`.
    """

    def __init__(self, directory: str | Path, *, group_rows: int = 1) -> None:
        self.directory = Path(directory)
        self.group_rows = max(1, int(group_rows))
        self._pending: list[tuple[Any, ...]] = []
        self._known_runs: set[str] = set()  # runs checked to exist (record_score checks once)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunError(f"cannot create the run directory {self.directory}: {exc}") from exc
        self.path = self.directory / DB_NAME
        self._lock = threading.RLock()
        try:
            self._conn: sqlite3.Connection | None = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise RunError(f"cannot open the run store {self.path}: {exc}") from exc
        try:
            self._setup()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise RunError(f"{self.path} is not a usable ragmeter run store: {exc}") from exc
        except RunError:
            self.close()
            raise

    # ------------------------------------------------------------------ set-up

    def _setup(self) -> None:
        prepare(self._connection(), self.path, self._tx)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RunError(f"the run store {self.path} is closed")
        return self._conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed on exit (rolled back on error). Pending scores are
        committed first, so writes land in the order they were made."""
        with self._lock:
            self._flush_locked()
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise RunError(f"cannot write to the run store {self.path}: {exc}") from exc
            try:
                yield conn
            except sqlite3.IntegrityError:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            except sqlite3.Error as exc:  # disk full, read-only file, I/O error: say so, no traceback
                if conn.in_transaction:
                    with suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise RunError(f"cannot write to the run store {self.path}: {exc}") from exc
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise RunError(f"cannot write to the run store {self.path}: {exc}") from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            self._flush_locked()
            return self._connection().execute(sql, tuple(params)).fetchall()

    def flush(self) -> None:
        """Commit the scores buffered by :meth:`record_score` (one transaction)."""
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if not self._pending or self._conn is None:
            return
        rows, self._pending = self._pending, []
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(INSERT_SCORE, rows)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise RunError(f"cannot write to the run store {self.path}: {exc}") from exc

    def close(self) -> None:
        """Commit what is pending and close the store (idempotent)."""
        with self._lock:
            if self._conn is not None:
                try:
                    self._flush_locked()
                finally:
                    self._conn.close()
                    self._conn = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({str(self.directory)!r})"

    # ------------------------------------------------------------------ runs

    def check_writable(self) -> None:
        """RunError unless the store can take a run: enough free space on its disk (at least
        :data:`MIN_FREE_BYTES`) and a write transaction that commits. Called before a run starts or
        resumes, so a read-only or full disk is reported before any judge call."""
        try:
            free = shutil.disk_usage(self.directory).free
        except OSError as exc:
            raise RunError(f"cannot check the free space for the run store {self.path}: {exc}") from exc
        if free < MIN_FREE_BYTES:
            raise RunError(
                f"the disk of the run store {self.directory} has only {free // 1024} KiB free (a run needs "
                f"at least {MIN_FREE_BYTES // (1024 * 1024)} MiB); free some space or use another --out"
            )
        with self._tx() as c:
            c.execute("UPDATE schema_version SET version = version")

    def create_run(self, run_id: str, meta: Mapping[str, Any]) -> None:
        """Start a run record with status ``running``. RunError if ``run_id`` exists."""
        if not run_id or not isinstance(run_id, str):
            raise RunError(f"invalid run id {run_id!r}")
        meta_json = dumps(dict(meta))
        try:
            with self._tx() as c:
                c.execute(
                    "INSERT INTO runs (run_id, created_at, finished_at, status, meta) "
                    "VALUES (?, ?, NULL, ?, ?)",
                    (run_id, _now(), "running", meta_json),
                )
        except sqlite3.IntegrityError:
            raise RunError(f"run {run_id!r} already exists in {self.path}") from None

    def set_status(self, run_id: str, status: str, summary: Mapping[str, Any] | None = None) -> None:
        """Set a run's status. ``finished``/``failed``/``interrupted`` set ``finished_at``;
        ``running`` (a resumed run) clears it. ``summary`` is merged into ``meta["summary"]``."""
        if status not in STATUSES:
            raise ValueError(f"unknown run status {status!r}; one of {', '.join(STATUSES)}")
        with self._tx() as c:
            row = c.execute("SELECT meta FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise self._unknown(run_id)
            finished_at = None if status == "running" else _now()
            if summary is not None:
                meta = loads(row[0], {})
                merged = dict(meta.get("summary") or {})
                merged.update(summary)
                meta["summary"] = merged
                c.execute(
                    "UPDATE runs SET status = ?, finished_at = ?, meta = ? WHERE run_id = ?",
                    (status, finished_at, dumps(meta), run_id),
                )
            else:
                c.execute(
                    "UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?",
                    (status, finished_at, run_id),
                )

    def update_meta(self, run_id: str, changes: Mapping[str, Any]) -> None:
        """Merge ``changes`` into a run's top-level ``meta`` (e.g. what a resume changed)."""
        with self._tx() as c:
            row = c.execute("SELECT meta FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise self._unknown(run_id)
            meta = loads(row[0], {})
            meta.update(changes)
            c.execute("UPDATE runs SET meta = ? WHERE run_id = ?", (dumps(meta), run_id))

    def get_run(self, run_id: str) -> RunInfo:
        """The run named by ``run_id``: an exact id, a unique prefix of one, or ``latest``/``last``."""
        ref = (run_id or "").strip()
        if not ref:
            raise RunError("no run id given; " + self._hint())
        cols = "run_id, created_at, finished_at, status, meta"
        rows = self._query(f"SELECT {cols} FROM runs WHERE run_id = ?", (ref,))
        if not rows and ref.lower() in ("latest", "last"):
            rows = self._query(f"SELECT {cols} FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1")
            if not rows:
                raise RunError(f"there are no runs in {self.directory} yet")
        if not rows:
            rows = self._query(
                f"SELECT {cols} FROM runs WHERE substr(run_id, 1, ?) = ? ORDER BY created_at DESC LIMIT 6",
                (len(ref), ref),
            )
            if len(rows) > 1:
                ids = ", ".join(r[0] for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
                raise RunError(f"run id prefix {ref!r} is ambiguous in {self.directory}: it matches {ids}")
        if not rows:
            raise self._unknown(ref)
        return self._info(rows[0])

    def list_runs(self, limit: int | None = None) -> list[RunInfo]:
        """Runs, newest first (at most ``limit``)."""
        sql = (
            "SELECT run_id, created_at, finished_at, status, meta FROM runs "
            "ORDER BY created_at DESC, rowid DESC"
        )
        params: tuple[Any, ...] = ()
        if limit is not None:
            if limit < 0:
                raise ValueError("limit must be >= 0")
            sql += " LIMIT ?"
            params = (int(limit),)
        return [self._info(r) for r in self._query(sql, params)]

    def delete_run(self, run_id: str) -> None:
        """Delete a run and everything recorded for it (exact id, prefix or ``latest``)."""
        rid = self.get_run(run_id).run_id
        self._known_runs.discard(rid)
        with self._tx() as c:
            referred = referred_texts(c, rid)
            for table in ("labels", "label_draws", "scores", "problems", "samples", "runs"):
                c.execute(f"DELETE FROM {table} WHERE run_id = ?", (rid,))
            delete_orphan_texts(c, referred)

    # ------------------------------------------------------------------ samples and problems

    def add_samples(
        self,
        run_id: str,
        samples: Sequence[tuple[int, Sample]],
        keys: Sequence[str] | None = None,
        records: Sequence[dict[str, Any]] | None = None,
    ) -> None:
        """Record the samples of a run by dataset position (re-adding an index replaces it), each
        with its stable key (default: :func:`~ragmeter.dataset.keys.sample_keys` of ``samples``,
        taking every sample's id as the data's). Each distinct context text is stored once in the
        store (:mod:`ragmeter.log.texts`), the sample referring to it. ``records``: the samples'
        ``to_dict()`` when the caller has made them (they are taken over, not made again)."""
        if keys is None:
            keys = sample_keys([s for _, s in samples])
        if len(keys) != len(samples) or (records is not None and len(records) != len(samples)):
            raise ValueError(f"{len(keys)} keys for {len(samples)} samples")
        split = [
            split_texts(sample, None if records is None else records[i]) for i, (_, sample) in enumerate(samples)
        ]
        with self._tx() as c:
            self._require(c, run_id)
            ids = store_texts(c, [t for _, _, found in split for t in found])
            c.executemany(
                "INSERT OR REPLACE INTO samples (run_id, idx, sample, key, conversation_id, turn, refs) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (run_id, int(idx), dumps(record), key, sample.conversation_id, sample.turn, text_refs(refs, ids))
                    for ((idx, sample), key, (record, refs, _)) in zip(samples, keys, split, strict=True)
                ],
            )

    def add_problems(self, run_id: str, problems: Sequence[DatasetError]) -> None:
        """Record the input problems (skipped rows) of a run, after any already recorded."""
        with self._tx() as c:
            self._require(c, run_id)
            row = c.execute(
                "SELECT COALESCE(MAX(seq), -1) FROM problems WHERE run_id = ?", (run_id,)
            ).fetchone()
            start = int(row[0]) + 1
            c.executemany(
                "INSERT INTO problems (run_id, seq, file, row, field, message) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        run_id,
                        start + i,
                        None if p.file is None else str(p.file),
                        p.row,
                        p.field,
                        p.message,
                    )
                    for i, p in enumerate(problems)
                ],
            )

    # ------------------------------------------------------------------ scores

    def record_score(
        self,
        run_id: str,
        idx: int,
        metric: str,
        score: Score,
        calls: Sequence[CallRecord | Mapping[str, Any]] = (),
        duration_s: float = 0.0,
    ) -> None:
        """Store (or replace) the score of one (sample, metric) job with its model calls. The row
        is committed with its group (see the module docstring); reads see it at once."""
        call_dicts = [call_to_dict(c) for c in calls] if calls else []
        usage_json = "{}"  # a judge-free score: no usage, no calls
        if call_dicts:
            usage = Usage()
            for call in call_dicts:
                usage = usage + Usage.from_dict(call.get("usage") or {})
            usage_json = dumps(usage.to_dict())
        err = score.error
        row = (
            run_id,
            int(idx),
            metric,
            score.value,
            score.reason,
            dumps(score.details),
            None if err is None else err.kind,
            None if err is None else err.message,
            None if err is None else err.raw,
            usage_json,
            dumps(call_dicts) if call_dicts else "[]",
            float(duration_s),
            _now(),
        )
        with self._lock:
            if run_id not in self._known_runs:
                with self._tx() as c:
                    self._require(c, run_id)
                self._known_runs.add(run_id)
            self._pending.append(row)
            if len(self._pending) >= self.group_rows:
                self._flush_locked()

    def completed_jobs(self, run_id: str, *, between: tuple[int, int] | None = None) -> set[tuple[int, str]]:
        """(idx, metric) jobs that have a stored score, valid or invalid (``between``: of the samples
        with an index in this closed range only)."""
        rid = self.get_run(run_id).run_id
        if between is None:
            rows = self._query("SELECT idx, metric FROM scores WHERE run_id = ?", (rid,))
        else:
            rows = self._query(
                "SELECT idx, metric FROM scores WHERE run_id = ? AND idx BETWEEN ? AND ?", (rid, *between)
            )
        return {(int(i), m) for i, m in rows}

    def valid_jobs(self, run_id: str) -> set[tuple[int, str]]:
        """(idx, metric) jobs whose stored score is valid (a resume may retry the others)."""
        rid = self.get_run(run_id).run_id
        rows = self._query("SELECT idx, metric FROM scores WHERE run_id = ? AND error_kind IS NULL", (rid,))
        return {(int(i), m) for i, m in rows}

    # ------------------------------------------------------------------ helpers

    def _info(self, row: tuple[Any, ...]) -> RunInfo:
        run_id, created_at, finished_at, status, meta = row
        return RunInfo(run_id, created_at, finished_at, status, loads(meta, {}))

    def _require(self, conn: sqlite3.Connection, run_id: str) -> None:
        if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
            raise self._unknown(run_id)

    def _hint(self) -> str:
        return f"see the runs with `ragmeter runs list --out {self.directory}`"

    def _unknown(self, run_id: str) -> RunError:
        return RunError(f"no run {run_id!r} in {self.directory}; {self._hint()}")
