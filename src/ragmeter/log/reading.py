"""Reading a run back from the run store: a page at a time, and aggregates computed in the store.

This is the store's side of a :class:`~ragmeter.run.result.Result` read on demand
(:class:`ReadingMixin`, mixed into :class:`~ragmeter.log.store.RunStore`): samples and scores come
back in pages of :data:`SAMPLE_PAGE` samples (by index), one (sample, metric) row on its own, and
what a summary needs (each metric's valid values in sample order, its invalid kinds, its usage,
the samples of each level) without reading the rows into objects. Nothing here holds a whole run.

Reads take a run id, a unique prefix or ``latest``; scores a writer has buffered for a group
commit are committed before a score is read (samples and problems are never buffered).
"""

from __future__ import annotations

import sqlite3
import threading
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragmeter.dataset.keys import sample_keys
from ragmeter.dataset.sample import Sample
from ragmeter.errors import DatasetError
from ragmeter.judges.types import NO_USAGE, Usage
from ragmeter.log.serialize import loads
from ragmeter.log.texts import read_samples
from ragmeter.metrics.base import Score

if TYPE_CHECKING:
    from ragmeter.log.store import RunInfo

#: samples (and their scores) read back per query
SAMPLE_PAGE = 512
#: the columns a :class:`ScoreRow` is read from, in :func:`score_row`'s order
SCORE_COLUMNS = (
    "idx, metric, value, reason, details, error_kind, error_message, error_raw, usage, calls, duration_s"
)


@dataclass(frozen=True)
class ScoreRow:
    """One stored (sample, metric) result. ``calls`` are the model calls as dicts (step, model,
    reply, usage, cached, latency_s, prompt_version, attempts, error); ``usage`` is their sum."""

    idx: int
    metric: str
    score: Score
    usage: Usage
    calls: list[dict[str, Any]]
    duration_s: float


def score_row(row: Sequence[Any]) -> ScoreRow:
    """A :class:`ScoreRow` from the :data:`SCORE_COLUMNS` of one stored score."""
    idx, metric, value, reason, details, ekind, emsg, eraw, usage, calls, duration = row
    score = Score.from_dict(
        {
            "value": value,
            "reason": reason,
            "details": loads(details, {}),
            "error": None if ekind is None else {"kind": ekind, "message": emsg or "", "raw": eraw},
        }
    )
    return ScoreRow(
        idx=int(idx),
        metric=metric,
        score=score,
        usage=NO_USAGE if usage == "{}" else Usage.from_dict(loads(usage, {})),
        calls=list(loads(calls, [])),
        duration_s=float(duration),
    )


#: where a sample of the conversation level is (a conversation sample: it has its messages)
_CONVERSATION = "conversation_id IS NOT NULL AND turn IS NULL"


class ReadingMixin:
    """The read methods of :class:`~ragmeter.log.store.RunStore` (see the module docstring)."""

    if TYPE_CHECKING:
        _lock: threading.RLock

        def _connection(self) -> sqlite3.Connection: ...
        def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
        def get_run(self, run_id: str) -> RunInfo: ...

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A query that needs no pending score committed first (samples, problems)."""
        with self._lock:
            return self._connection().execute(sql, tuple(params)).fetchall()

    def _samples(self, sql: str, params: Sequence[Any]) -> list[tuple[int, Sample]]:
        """The ``(idx, sample)`` that ``sql`` selects as ``idx, sample, refs``, with their texts."""
        with self._lock:
            conn = self._connection()
            return read_samples(conn, conn.execute(sql, tuple(params)).fetchall())

    # -- samples ---------------------------------------------------------------------------------
    def load_samples(self, run_id: str) -> list[tuple[int, Sample]]:
        """Every sample of a run, by index (all in memory: :meth:`iter_samples` reads a page at a time)."""
        return [item for page in self.iter_samples(run_id) for item in page]

    def iter_samples(self, run_id: str, *, page: int = SAMPLE_PAGE) -> Iterator[list[tuple[int, Sample]]]:
        """A run's samples by index, ``page`` at a time (a list of ``(idx, sample)`` per page)."""
        rid = self.get_run(run_id).run_id
        after = -1
        while True:
            got = self._samples(
                "SELECT idx, sample, refs FROM samples WHERE run_id = ? AND idx > ? ORDER BY idx LIMIT ?",
                (rid, after, page),
            )
            if not got:
                return
            yield got
            after = got[-1][0]

    def load_sample(self, run_id: str, idx: int) -> Sample | None:
        """One sample of a run (by its index), or None when the run has no sample ``idx``."""
        rid = self.get_run(run_id).run_id
        got = self._samples("SELECT idx, sample, refs FROM samples WHERE run_id = ? AND idx = ?", (rid, int(idx)))
        return got[0][1] if got else None

    def samples_between(self, run_id: str, lo: int, hi: int) -> list[tuple[int, Sample]]:
        """The samples with an index in ``[lo, hi]``, by index."""
        rid = self.get_run(run_id).run_id
        return self._samples(
            "SELECT idx, sample, refs FROM samples WHERE run_id = ? AND idx BETWEEN ? AND ? ORDER BY idx",
            (rid, lo, hi),
        )

    def sample_indices(self, run_id: str) -> array[int]:
        """The indices of a run's samples, in order (8 bytes each)."""
        rid = self.get_run(run_id).run_id
        with self._lock:
            cursor = self._connection().execute("SELECT idx FROM samples WHERE run_id = ? ORDER BY idx", (rid,))
            return array("q", (int(r[0]) for r in cursor))

    def count_samples(self, run_id: str) -> dict[str, int]:
        """Samples of a run per level (``"sample"``, ``"conversation"``)."""
        rid = self.get_run(run_id).run_id
        ((n, conversations),) = self._read(
            f"SELECT COUNT(*), COALESCE(SUM({_CONVERSATION}), 0) FROM samples WHERE run_id = ?", (rid,)
        )
        return {"sample": int(n) - int(conversations), "conversation": int(conversations)}

    def load_keys(self, run_id: str) -> dict[int, str]:
        """``{idx: key}`` of a run's samples. Runs recorded before keys were stored (schema 1) get
        :func:`~ragmeter.dataset.keys.sample_keys` of their samples with every id taken as a row
        number, i.e. they are keyed by question and reference."""
        rid = self.get_run(run_id).run_id
        with self._lock:
            keys = self._connection().execute(
                "SELECT idx, key FROM samples WHERE run_id = ? ORDER BY idx", (rid,)
            ).fetchall()
        if all(key is not None for _, key in keys):
            return {int(idx): str(key) for idx, key in keys}
        samples = self.load_samples(rid)
        derived = sample_keys([s for _, s in samples], generated_ids={str(s.id) for _, s in samples})
        return {int(idx): str(key) if key is not None else derived[i] for i, (idx, key) in enumerate(keys)}

    # -- problems --------------------------------------------------------------------------------
    def load_problems(self, run_id: str, *, offset: int = 0, limit: int | None = None) -> list[DatasetError]:
        """A run's input problems in input order (``offset`` and ``limit``: a slice of them)."""
        rid = self.get_run(run_id).run_id
        rows = self._read(
            "SELECT file, row, field, message FROM problems WHERE run_id = ? ORDER BY seq LIMIT ? OFFSET ?",
            (rid, -1 if limit is None else int(limit), int(offset)),
        )
        return [DatasetError(message, file=file, row=row, field=fld) for file, row, fld, message in rows]

    def count_problems(self, run_id: str) -> int:
        rid = self.get_run(run_id).run_id
        return int(self._read("SELECT COUNT(*) FROM problems WHERE run_id = ?", (rid,))[0][0])

    # -- scores ----------------------------------------------------------------------------------
    def load_scores(self, run_id: str) -> list[ScoreRow]:
        """Every stored score of a run, ordered by sample index then metric name."""
        rid = self.get_run(run_id).run_id
        rows = self._query(f"SELECT {SCORE_COLUMNS} FROM scores WHERE run_id = ? ORDER BY idx, metric", (rid,))
        return [score_row(r) for r in rows]

    def scores_between(self, run_id: str, lo: int, hi: int, metric: str | None = None) -> list[ScoreRow]:
        """The scores of the samples with an index in ``[lo, hi]`` (of ``metric`` only, when
        given), by index then metric."""
        rid = self.get_run(run_id).run_id
        sql = f"SELECT {SCORE_COLUMNS} FROM scores WHERE run_id = ? AND idx BETWEEN ? AND ?"
        params: list[Any] = [rid, lo, hi]
        if metric is not None:
            sql += " AND metric = ?"
            params.append(metric)
        return [score_row(r) for r in self._query(sql + " ORDER BY idx, metric", params)]

    def load_score(self, run_id: str, idx: int, metric: str) -> ScoreRow | None:
        """The stored score of one (sample, metric), or None when it has none."""
        rid = self.get_run(run_id).run_id
        rows = self._query(
            f"SELECT {SCORE_COLUMNS} FROM scores WHERE run_id = ? AND idx = ? AND metric = ?",
            (rid, int(idx), metric),
        )
        return score_row(rows[0]) if rows else None

    def score_values(self, run_id: str, metric: str) -> dict[int, float | None]:
        """``{idx: value}`` of every sample ``metric`` has a score for, None where the score is
        invalid (one light query: no details, no calls)."""
        rid = self.get_run(run_id).run_id
        rows = self._query(
            "SELECT idx, value, error_kind FROM scores WHERE run_id = ? AND metric = ? ORDER BY idx",
            (rid, metric),
        )
        return {int(i): (None if ekind is not None or v is None else float(v)) for i, v, ekind in rows}

    def metric_values(self, run_id: str, metric: str) -> array[float]:
        """The valid values of ``metric`` in sample order (what its mean and interval are over),
        8 bytes each."""
        rid = self.get_run(run_id).run_id
        self._query("SELECT 1")  # commits what a writer buffered
        with self._lock:
            cursor = self._connection().execute(
                "SELECT value FROM scores WHERE run_id = ? AND metric = ? AND error_kind IS NULL ORDER BY idx",
                (rid, metric),
            )
            return array("d", (float(v) for (v,) in cursor))

    def invalid_kinds(self, run_id: str, metric: str) -> dict[str, int]:
        """``{kind: count}`` of the invalid scores of ``metric``, in the order the kinds first occur."""
        rid = self.get_run(run_id).run_id
        rows = self._query(
            "SELECT error_kind, COUNT(*) FROM scores WHERE run_id = ? AND metric = ? "
            "AND error_kind IS NOT NULL GROUP BY error_kind ORDER BY MIN(idx)",
            (rid, metric),
        )
        return {str(k): int(n) for k, n in rows}

    def usage_of(self, run_id: str, metric: str | None = None) -> Usage:
        """The summed usage of a run's scores (of ``metric`` only, when given); judge-free scores,
        which store ``{}``, are not read."""
        rid = self.get_run(run_id).run_id
        sql = "SELECT usage FROM scores WHERE run_id = ? AND usage != '{}'"
        params: list[Any] = [rid]
        if metric is not None:
            sql += " AND metric = ?"
            params.append(metric)
        total = Usage()
        for (text,) in self._query(sql, params):
            total = total + Usage.from_dict(loads(text, {}))
        return total

    def spreads(self, run_id: str, metric: str) -> list[float]:
        """The ``std`` of each valid score of ``metric`` whose details have one (repeated judging)."""
        rid = self.get_run(run_id).run_id
        rows = self._query(
            "SELECT details FROM scores WHERE run_id = ? AND metric = ? AND error_kind IS NULL "
            "AND details LIKE '%\"std\"%' ORDER BY idx",
            (rid, metric),
        )
        out = []
        for (text,) in rows:
            std = loads(text, {}).get("std")
            if isinstance(std, (int, float)) and not isinstance(std, bool):
                out.append(float(std))
        return out

    def count_scores(self, run_id: str) -> dict[str, int]:
        """``{metric: stored scores}`` of a run."""
        rid = self.get_run(run_id).run_id
        rows = self._query("SELECT metric, COUNT(*) FROM scores WHERE run_id = ? GROUP BY metric", (rid,))
        return {str(m): int(n) for m, n in rows}

    def has_conversations(self, run_id: str) -> bool:
        """Whether any sample of the run belongs to a conversation."""
        rid = self.get_run(run_id).run_id
        return bool(
            self._read("SELECT 1 FROM samples WHERE run_id = ? AND conversation_id IS NOT NULL LIMIT 1", (rid,))
        )

    def count_invalid(self, run_id: str) -> int:
        rid = self.get_run(run_id).run_id
        return int(self._query("SELECT COUNT(*) FROM scores WHERE run_id = ? AND error_kind IS NOT NULL", (rid,))[0][0])

    def metric_summary(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Per metric of a run, from its stored scores: ``mean`` of the valid values (None when
        there is none), ``n_scored`` (valid) and ``n_invalid``. Cheap (one query, no bootstrap):
        for run lists; :class:`~ragmeter.run.result.Result` has the full summary."""
        rid = self.get_run(run_id).run_id
        rows = self._query(
            "SELECT metric, AVG(value), COUNT(value), SUM(error_kind IS NOT NULL) FROM scores "
            "WHERE run_id = ? GROUP BY metric ORDER BY metric",
            (rid,),
        )
        return {
            m: {"mean": None if mean is None else float(mean), "n_scored": int(n), "n_invalid": int(bad or 0)}
            for m, mean, n, bad in rows
        }


__all__ = ["NO_USAGE", "SAMPLE_PAGE", "SCORE_COLUMNS", "ReadingMixin", "ScoreRow", "score_row"]
