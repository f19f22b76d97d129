"""A run's record as a :class:`~ragmeter.run.result.Result` reads it: in memory, or in the store.

:class:`RunRecord` is what a Result asks of its run: the samples (a page at a time, or one by
index), each sample's key, the input problems, the scores (a page of samples' scores at a time, or
one (sample, metric) row), and per metric the :class:`~ragmeter.run.summary.MetricStats` its
summary is computed from. Two records implement it:

- :class:`MemoryRecord`: a run held in memory (a run without a store, a Result built in code);
- :class:`StoredRecord`: a run in the run store, read on demand. It holds no sample and no score
  beyond the last pages asked for (:data:`CACHED_PAGES` pages of :data:`SAMPLE_PAGE` samples, so a
  report or a comparison that walks the samples in order reads each page once), and its summary
  comes from queries (:class:`~ragmeter.log.reading.ReadingMixin`), so a Result of a million-row
  run costs its summary's values (8 bytes a score) until the per-sample table is asked for.

More per-run data (labels, say) is added the same way: a method here, in both records, and a
Result accessor over it.
"""

from __future__ import annotations

import weakref
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ragmeter.dataset.keys import sample_keys
from ragmeter.dataset.sample import Sample
from ragmeter.errors import DatasetError
from ragmeter.judges.types import Usage
from ragmeter.log.reading import SAMPLE_PAGE, ScoreRow
from ragmeter.run.summary import MetricStats

if TYPE_CHECKING:
    from ragmeter.log.store import RunStore

#: pages of samples (and of their scores) a stored record keeps
CACHED_PAGES = 4


class RunRecord(Protocol):
    """What a Result reads of its run (see the module docstring)."""

    def n_samples(self) -> int: ...
    def iter_pages(self) -> Iterator[list[tuple[int, Sample, dict[str, ScoreRow]]]]:
        """The samples by index with their scores by metric, a page at a time."""
        ...

    def sample_at(self, position: int) -> tuple[int, Sample]: ...
    def row(self, idx: int, metric: str) -> ScoreRow | None: ...
    def keys(self) -> dict[int, str]: ...
    def n_problems(self) -> int: ...
    def problems(self, start: int = 0, stop: int | None = None) -> list[DatasetError]: ...
    def n_rows(self) -> int: ...
    def iter_rows(self) -> Iterator[ScoreRow]: ...
    def metric_stats(self, metric: str, level: str) -> MetricStats: ...
    def usage(self, metric: str | None = None) -> Usage: ...
    def n_invalid(self) -> int: ...
    def has_conversations(self) -> bool: ...


class MemoryRecord:
    """A run held in memory: its samples, problems, keys and score rows."""

    def __init__(
        self,
        samples: Sequence[tuple[int, Sample]],
        problems: Sequence[DatasetError],
        keys: Mapping[int, str] | None,
        rows: Iterable[ScoreRow],
    ) -> None:
        self.samples = list(samples)
        self._problems = list(problems)
        if keys is None:
            keys = dict(zip((i for i, _ in self.samples), sample_keys([s for _, s in self.samples]), strict=True))
        self._keys = dict(keys)
        self._rows: dict[tuple[int, str], ScoreRow] = {(r.idx, r.metric): r for r in rows}
        by_sample: dict[int, dict[str, ScoreRow]] = {}
        for r in self._rows.values():
            by_sample.setdefault(r.idx, {})[r.metric] = r
        self._by_sample = by_sample

    def n_samples(self) -> int:
        return len(self.samples)

    def iter_pages(self) -> Iterator[list[tuple[int, Sample, dict[str, ScoreRow]]]]:
        for start in range(0, len(self.samples), SAMPLE_PAGE):
            yield [(i, s, self._by_sample.get(i, {})) for i, s in self.samples[start : start + SAMPLE_PAGE]]

    def sample_at(self, position: int) -> tuple[int, Sample]:
        return self.samples[position]

    def row(self, idx: int, metric: str) -> ScoreRow | None:
        return self._rows.get((idx, metric))

    def keys(self) -> dict[int, str]:
        return self._keys

    def n_problems(self) -> int:
        return len(self._problems)

    def problems(self, start: int = 0, stop: int | None = None) -> list[DatasetError]:
        return self._problems[start:stop]

    def n_rows(self) -> int:
        return len(self._rows)

    def iter_rows(self) -> Iterator[ScoreRow]:
        return iter(self._rows.values())

    def metric_stats(self, metric: str, level: str) -> MetricStats:
        stats = MetricStats()
        for idx, sample in self.samples:
            if sample.level != level:
                continue
            stats.n_level += 1
            row = self._rows.get((idx, metric))
            if row is None:
                continue
            stats.usage = stats.usage + row.usage
            if row.score.valid:
                assert row.score.value is not None
                stats.values.append(row.score.value)
                std = row.score.details.get("std")
                if isinstance(std, (int, float)) and not isinstance(std, bool):
                    stats.spreads.append(float(std))
            else:
                kind = row.score.error.kind if row.score.error else "unknown"
                stats.invalid_kinds[kind] = stats.invalid_kinds.get(kind, 0) + 1
        return stats

    def usage(self, metric: str | None = None) -> Usage:
        total = Usage()
        for r in self._rows.values():
            if metric is None or r.metric == metric:
                total = total + r.usage
        return total

    def n_invalid(self) -> int:
        return sum(1 for r in self._rows.values() if not r.score.valid)

    def has_conversations(self) -> bool:
        return any(s.conversation_id is not None for _, s in self.samples)


class StoredRecord:
    """A run in the run store, read on demand (see the module docstring). The store is opened at
    the first read and closed by :meth:`close` (or when the record is collected)."""

    def __init__(self, store_dir: Path, run_id: str, meta: Mapping[str, object]) -> None:
        self.store_dir = store_dir
        self.run_id = run_id
        self._meta = meta
        self._store: RunStore | None = None
        self._pages: OrderedDict[int, list[tuple[int, Sample, dict[str, ScoreRow]]]] = OrderedDict()
        self._indices: array[int] | None = None
        self._keys: dict[int, str] | None = None
        self._n_samples: int | None = None

    @property
    def store(self) -> RunStore:
        if self._store is None:
            from ragmeter.log.store import RunStore, require_store

            self._store = RunStore(require_store(self.store_dir))
            weakref.finalize(self, self._store.close)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        self._pages.clear()

    # -- samples and their scores ----------------------------------------------------------------
    def n_samples(self) -> int:
        if self._n_samples is None:
            self._n_samples = sum(self.store.count_samples(self.run_id).values())
        return self._n_samples

    def _page(self, number: int) -> list[tuple[int, Sample, dict[str, ScoreRow]]]:
        """Page ``number`` of the samples by *index* (indices ``number * SAMPLE_PAGE`` onwards)."""
        page = self._pages.get(number)
        if page is not None:
            self._pages.move_to_end(number)
            return page
        lo, hi = number * SAMPLE_PAGE, (number + 1) * SAMPLE_PAGE - 1
        page = self._join(self.store.samples_between(self.run_id, lo, hi), lo, hi)
        self._pages[number] = page
        while len(self._pages) > CACHED_PAGES:
            self._pages.popitem(last=False)
        return page

    def _join(
        self, samples: list[tuple[int, Sample]], lo: int, hi: int
    ) -> list[tuple[int, Sample, dict[str, ScoreRow]]]:
        rows: dict[int, dict[str, ScoreRow]] = {}
        for r in self.store.scores_between(self.run_id, lo, hi):
            rows.setdefault(r.idx, {})[r.metric] = r
        return [(i, s, rows.get(i, {})) for i, s in samples]

    def iter_pages(self) -> Iterator[list[tuple[int, Sample, dict[str, ScoreRow]]]]:
        for samples in self.store.iter_samples(self.run_id):
            yield self._join(samples, samples[0][0], samples[-1][0])

    def _index(self, position: int) -> int:
        if self._indices is None:
            self._indices = self.store.sample_indices(self.run_id)
        return self._indices[position]

    def sample_at(self, position: int) -> tuple[int, Sample]:
        idx = self._index(position)
        for i, s, _ in self._page(idx // SAMPLE_PAGE):
            if i == idx:
                return i, s
        raise IndexError(position)  # pragma: no cover - the index came from the store

    def row(self, idx: int, metric: str) -> ScoreRow | None:
        for i, _, rows in self._page(idx // SAMPLE_PAGE):
            if i == idx:
                return rows.get(metric)
        return None

    def keys(self) -> dict[int, str]:
        if self._keys is None:
            self._keys = self.store.load_keys(self.run_id)
        return self._keys

    # -- problems and scores ---------------------------------------------------------------------
    def n_problems(self) -> int:
        return self.store.count_problems(self.run_id)

    def problems(self, start: int = 0, stop: int | None = None) -> list[DatasetError]:
        limit = None if stop is None else max(0, stop - start)
        return self.store.load_problems(self.run_id, offset=start, limit=limit)

    def n_rows(self) -> int:
        return sum(self.store.count_scores(self.run_id).values())

    def iter_rows(self) -> Iterator[ScoreRow]:
        for page in self.iter_pages():
            for _, _, rows in page:
                yield from (rows[m] for m in sorted(rows))

    def metric_stats(self, metric: str, level: str) -> MetricStats:
        store = self.store
        by_level = self._meta.get("n_samples_by_level")
        if isinstance(by_level, Mapping) and level in by_level:
            n_level = int(by_level[level])  # type: ignore[call-overload]
        else:
            n_level = store.count_samples(self.run_id).get(level, 0)
        return MetricStats(
            values=store.metric_values(self.run_id, metric),
            invalid_kinds=store.invalid_kinds(self.run_id, metric),
            usage=store.usage_of(self.run_id, metric),
            spreads=store.spreads(self.run_id, metric),
            n_level=n_level,
        )

    def usage(self, metric: str | None = None) -> Usage:
        return self.store.usage_of(self.run_id, metric)

    def n_invalid(self) -> int:
        return self.store.count_invalid(self.run_id)

    def has_conversations(self) -> bool:
        return self.store.has_conversations(self.run_id)


__all__ = ["CACHED_PAGES", "MemoryRecord", "RunRecord", "StoredRecord"]
