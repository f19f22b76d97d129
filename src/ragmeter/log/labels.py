"""People's labels of a run's samples, and the run's seeded draw of samples to label.

A label is a person's value for one (sample, metric) of a run: ``value`` in [0, 1],
``label_kind`` ``binary`` (0 or 1) or ``graded``, who gave it (``labeller``), when
(``created_at``, ISO 8601 UTC) and how the sample came to be labelled (``drawn``):

* ``random``: it was the next sample of the run's **draw** when it was labelled;
* ``picked``: someone chose it (while debugging, from the report, from a file of their own).

**The draw** is one order over the run's samples: ascending SHA-256 of ``"<seed>\\x1f<key>"``
(the decimal seed, a unit separator, the sample's stable key; ties, which do not happen, by
index). Any seed gives a uniformly random order that no label can influence, and the same seed
orders the same questions the same way in every run, so two runs over the same questions are
labelled on the same samples and their labels pair up in ``compare``. The seed is
:data:`DEFAULT_SEED` unless :meth:`LabelsMixin.set_draw_seed` chose another before the first random
label; it is stored with the first random label (``label_draws``).

**Skipping.** A labeller may pass over a sample of the draw (unsure, no time). Labels of the
samples after it stay random but are *held back*: only the **labelled prefix** of the draw, the
samples before the first one without a random label, feeds estimates. Skips are usually not
independent of the label (the hard cases are skipped), so letting a skip drop a sample would bias
the estimate; holding back the labels after it does not, since which samples are in the prefix
depends on the draw alone. Labelling the skipped sample later releases the labels behind it. For a
metric, the draw runs over the samples that have a score for it (a sample the metric skipped for a
missing field is not part of what it measures).

This module is the store's side (:class:`LabelsMixin`, mixed into
:class:`~ragmeter.log.store.RunStore`); matching a label file to a run is
:mod:`ragmeter.run.labels`.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragmeter.dataset.judgements import DRAWN, LABEL_KINDS
from ragmeter.errors import ConfigError, RunError
from ragmeter.log.schema import utc_now
from ragmeter.log.serialize import loads

if TYPE_CHECKING:
    from ragmeter.log.store import RunInfo

#: the draw's seed unless another is chosen (the same in every run: see the module docstring)
DEFAULT_SEED = 0

_COLUMNS = "idx, metric, value, label_kind, drawn, labeller, created_at"


@dataclass(frozen=True)
class Label:
    """One stored label: sample ``idx`` (its position in the run), ``metric``, ``value`` in [0, 1],
    ``label_kind`` (binary/graded), ``drawn`` (random/picked), ``labeller``, ``created_at``."""

    idx: int
    metric: str
    value: float
    label_kind: str = "binary"
    drawn: str = "picked"
    labeller: str | None = None
    created_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "idx": self.idx,
            "metric": self.metric,
            "value": self.value,
            "label_kind": self.label_kind,
            "drawn": self.drawn,
            "labeller": self.labeller,
            "created_at": self.created_at,
        }


def check_label(label: Label) -> Label:
    """``label`` if it is well formed (ConfigError saying what is wrong otherwise), with a
    ``created_at`` of now when it has none."""
    value = label.value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"a label is a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"a label lies in [0, 1], got {value!r}")
    if label.label_kind not in LABEL_KINDS:
        raise ConfigError(f"label_kind must be one of {', '.join(LABEL_KINDS)}, got {label.label_kind!r}")
    if label.label_kind == "binary" and value not in (0, 1):
        raise ConfigError(f"a binary label is 0 or 1, got {value!r} (a graded label may lie between)")
    if label.drawn not in DRAWN:
        raise ConfigError(f"drawn must be one of {', '.join(DRAWN)}, got {label.drawn!r}")
    if label.labeller is not None and not isinstance(label.labeller, str):
        raise ConfigError(f"labeller must be text, got {label.labeller!r}")
    return Label(
        idx=int(label.idx),
        metric=str(label.metric),
        value=float(value),
        label_kind=label.label_kind,
        drawn=label.drawn,
        labeller=label.labeller or None,
        created_at=label.created_at or utc_now(),
    )


def draw_order(keys: Mapping[int, str], seed: int) -> list[int]:
    """Sample indices in the order of the draw with ``seed`` (see the module docstring)."""
    prefix = f"{int(seed)}\x1f"

    def rank(idx: int) -> tuple[bytes, int]:
        return hashlib.sha256((prefix + keys[idx]).encode("utf-8")).digest(), idx

    return sorted(keys, key=rank)


@dataclass(frozen=True)
class LabelDraw:
    """A run's draw: its ``seed``, whether that seed is stored yet, and every sample index in draw
    order."""

    seed: int
    stored: bool
    order: tuple[int, ...]


@dataclass(frozen=True)
class DrawProgress:
    """Where the labelling of one metric stands along the draw.

    ``order``: the samples of the draw for this metric (those with a score for it), in draw order.
    ``prefix``: the labelled prefix, the samples before the first one without a random label:
    their labels feed estimates. ``next_idx``: that first sample (None when every sample of the
    draw has a random label). ``skipped``: samples without a random label that come before a
    random label (each holds the labels behind it back). ``n_random``: random labels of the metric;
    ``n_held_back``: those not on the prefix. ``n_picked``: picked labels.
    """

    metric: str
    seed: int
    order: tuple[int, ...]
    prefix: tuple[int, ...]
    next_idx: int | None
    skipped: tuple[int, ...]
    n_random: int
    n_held_back: int
    n_picked: int
    random_idx: frozenset[int] = field(default_factory=frozenset, repr=False)

    def next_after(self, idx: int | None) -> int | None:
        """The first sample after ``idx`` in the draw (from the start when None) that has no random
        label: where a labeller who skips ``idx`` goes next. None at the end of the draw."""
        start = 0
        if idx is not None:
            try:
                start = self.order.index(idx) + 1
            except ValueError:
                start = 0
        for i in self.order[start:]:
            if i not in self.random_idx:
                return i
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "seed": self.seed,
            "n_draw": len(self.order),
            "n_prefix": len(self.prefix),
            "next_idx": self.next_idx,
            "skipped": list(self.skipped),
            "n_random": self.n_random,
            "n_held_back": self.n_held_back,
            "n_picked": self.n_picked,
        }


def draw_progress(
    metric: str,
    seed: int,
    order: Sequence[int],
    labels: Iterable[Label],
    eligible: Iterable[int] | None = None,
) -> DrawProgress:
    """:class:`DrawProgress` of ``metric`` from the draw ``order``, the run's ``labels`` and the
    samples ``eligible`` for the metric (default: all of ``order``)."""
    allowed = None if eligible is None else set(eligible)
    walk = tuple(i for i in order if allowed is None or i in allowed)
    random_idx = set()
    n_picked = 0
    for lab in labels:
        if lab.metric != metric:
            continue
        if lab.drawn == "random":
            random_idx.add(lab.idx)
        else:
            n_picked += 1
    k = 0
    while k < len(walk) and walk[k] in random_idx:
        k += 1
    last = max((pos for pos, i in enumerate(walk) if i in random_idx), default=-1)
    skipped = tuple(i for i in walk[k : last + 1] if i not in random_idx)
    return DrawProgress(
        metric=metric,
        seed=int(seed),
        order=walk,
        prefix=walk[:k],
        next_idx=walk[k] if k < len(walk) else None,
        skipped=skipped,
        n_random=len(random_idx),
        n_held_back=len(random_idx) - k,
        n_picked=n_picked,
        random_idx=frozenset(random_idx),
    )


def _label_row(row: tuple[Any, ...]) -> Label:
    idx, metric, value, kind, drawn, labeller, created_at = row
    return Label(int(idx), metric, float(value), kind, drawn, labeller, created_at)


class LabelsMixin:
    """The label methods of :class:`~ragmeter.log.store.RunStore` (see the module docstring).

    Reads take a run id, a unique prefix or ``latest``; writes take the exact run id. Each write
    commits at once, so a labelling page that saves a label per key press loses none."""

    if TYPE_CHECKING:

        def _tx(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
        def get_run(self, run_id: str) -> RunInfo: ...
        def load_keys(self, run_id: str) -> dict[int, str]: ...

    # -- reading ---------------------------------------------------------------------------------
    def list_labels(self, run_id: str, metric: str | None = None) -> list[Label]:
        """The run's labels (of ``metric`` only, when given), by sample index then metric."""
        rid = self.get_run(run_id).run_id
        sql = f"SELECT {_COLUMNS} FROM labels WHERE run_id = ?"
        params: list[Any] = [rid]
        if metric is not None:
            sql += " AND metric = ?"
            params.append(metric)
        return [_label_row(r) for r in self._query(sql + " ORDER BY idx, metric", params)]

    def get_label(self, run_id: str, idx: int, metric: str) -> Label | None:
        """The label of one (sample, metric), or None."""
        rid = self.get_run(run_id).run_id
        rows = self._query(
            f"SELECT {_COLUMNS} FROM labels WHERE run_id = ? AND idx = ? AND metric = ?",
            (rid, int(idx), metric),
        )
        return _label_row(rows[0]) if rows else None

    def label_draw(self, run_id: str) -> LabelDraw:
        """The run's draw: its seed (stored, or :data:`DEFAULT_SEED` until a random label stores
        it) and every sample index in draw order."""
        rid = self.get_run(run_id).run_id
        rows = self._query("SELECT seed FROM label_draws WHERE run_id = ?", (rid,))
        seed = int(rows[0][0]) if rows else DEFAULT_SEED
        return LabelDraw(seed=seed, stored=bool(rows), order=tuple(draw_order(self.load_keys(rid), seed)))

    def draw_progress(self, run_id: str, metric: str) -> DrawProgress:
        """Where labelling ``metric`` stands along the run's draw (:class:`DrawProgress`): the
        labelled prefix that feeds estimates, the next sample to label, the skipped ones."""
        rid = self.get_run(run_id).run_id
        draw = self.label_draw(rid)
        eligible = [int(i) for (i,) in self._query(
            "SELECT idx FROM scores WHERE run_id = ? AND metric = ?", (rid, metric)
        )]  # fmt: skip
        return draw_progress(metric, draw.seed, draw.order, self.list_labels(rid, metric), eligible)

    # -- writing ---------------------------------------------------------------------------------
    def put_label(
        self,
        run_id: str,
        idx: int,
        metric: str,
        value: float,
        *,
        label_kind: str | None = None,
        drawn: str = "picked",
        labeller: str | None = None,
        created_at: str | None = None,
    ) -> Label:
        """Store (or replace) the label of sample ``idx`` for ``metric`` and return it as stored.
        ``label_kind`` defaults to binary for 0 and 1, graded otherwise. RunError for a sample or
        metric the run does not have; ConfigError for a malformed label."""
        if label_kind is None:
            label_kind = "binary" if value in (0, 1) and not isinstance(value, bool) else "graded"
        label = Label(int(idx), metric, value, label_kind, drawn, labeller, created_at or "")
        self.put_labels(run_id, [label])
        stored = self.get_label(run_id, idx, metric)
        assert stored is not None
        return stored

    def put_labels(self, run_id: str, labels: Sequence[Label]) -> int:
        """Store (or replace) many labels in one transaction; returns how many replaced a label
        already stored. The first random label stores the draw's seed."""
        checked = [check_label(lab) for lab in labels]
        with self._tx() as c:
            row = c.execute("SELECT meta FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise RunError(f"no run {run_id!r} in this store (writes take the exact run id)")
            metrics = {m.get("name") for m in loads(row[0], {}).get("metrics", [])}
            samples = {int(i) for (i,) in c.execute("SELECT idx FROM samples WHERE run_id = ?", (run_id,))}
            for lab in checked:
                if lab.metric not in metrics:
                    raise RunError(
                        f"run {run_id} has no metric {lab.metric!r}; its metrics: {', '.join(sorted(metrics))}"
                    )
                if lab.idx not in samples:
                    raise RunError(f"run {run_id} has no sample {lab.idx}")
            existing = {
                (int(i), m)
                for i, m in c.execute("SELECT idx, metric FROM labels WHERE run_id = ?", (run_id,))
            }
            c.executemany(
                "INSERT OR REPLACE INTO labels (run_id, idx, metric, value, label_kind, drawn, labeller, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run_id,
                        lab.idx,
                        lab.metric,
                        lab.value,
                        lab.label_kind,
                        lab.drawn,
                        lab.labeller,
                        lab.created_at,
                    )
                    for lab in checked
                ],
            )
            if any(lab.drawn == "random" for lab in checked):
                c.execute(
                    "INSERT OR IGNORE INTO label_draws (run_id, seed, created_at) VALUES (?, ?, ?)",
                    (run_id, DEFAULT_SEED, utc_now()),
                )
        return sum(1 for lab in checked if (lab.idx, lab.metric) in existing)

    def delete_label(self, run_id: str, idx: int, metric: str) -> Label | None:
        """Remove the label of one (sample, metric) (undo); returns what was removed, or None."""
        with self._tx() as c:
            row = c.execute(
                f"SELECT {_COLUMNS} FROM labels WHERE run_id = ? AND idx = ? AND metric = ?",
                (run_id, int(idx), metric),
            ).fetchone()
            if row is None:
                return None
            c.execute(
                "DELETE FROM labels WHERE run_id = ? AND idx = ? AND metric = ?", (run_id, int(idx), metric)
            )
        return _label_row(row)

    def set_draw_seed(self, run_id: str, seed: int) -> None:
        """Choose the seed of the run's draw. Refused (RunError) once the run has a random label
        under another seed: changing the draw then would make those labels no longer the draw's."""
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise ConfigError(f"a draw seed is a whole number from 0 to 2**63 - 1, got {seed!r}")
        with self._tx() as c:
            if c.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                raise RunError(f"no run {run_id!r} in this store (writes take the exact run id)")
            row = c.execute("SELECT seed FROM label_draws WHERE run_id = ?", (run_id,)).fetchone()
            n_random = c.execute(
                "SELECT COUNT(*) FROM labels WHERE run_id = ? AND drawn = 'random'", (run_id,)
            ).fetchone()[0]
            current = DEFAULT_SEED if row is None else int(row[0])
            if n_random and current != seed:
                raise RunError(
                    f"run {run_id} already has {n_random} random label(s) drawn with seed {current}; "
                    "its draw cannot change now"
                )
            c.execute(
                "INSERT OR REPLACE INTO label_draws (run_id, seed, created_at) VALUES (?, ?, ?)",
                (run_id, int(seed), utc_now()),
            )


__all__ = [
    "DEFAULT_SEED",
    "DRAWN",
    "LABEL_KINDS",
    "DrawProgress",
    "Label",
    "LabelDraw",
    "LabelsMixin",
    "check_label",
    "draw_order",
    "draw_progress",
]
