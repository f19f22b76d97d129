"""Rows stream: a run reads, checks and records its data a chunk at a time, then makes its jobs from
the recorded samples a page at a time, so it holds a window of the data, not the data."""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter import DatasetError, Metric, RunError, Sample, Score
from ragmeter.cli.evaluate import default_metrics
from ragmeter.dataset import DatasetErrors, load_dataset
from ragmeter.dataset.sample import Dataset
from ragmeter.dataset.sources import SampleStream
from ragmeter.log.store import SAMPLE_PAGE, RunStore
from ragmeter.run.intake import INTAKE_CHUNK


class _Alive:
    """Counts the Sample objects alive (each registers a finalizer when it is made)."""

    def __init__(self) -> None:
        self.now = 0
        self.made = 0

    def track(self, sample: Sample) -> None:
        self.now += 1
        self.made += 1
        weakref.finalize(sample, self._gone)

    def _gone(self) -> None:
        self.now -= 1


@pytest.fixture
def alive(monkeypatch: pytest.MonkeyPatch) -> _Alive:
    counter = _Alive()
    original = Sample.__post_init__

    def post_init(self: Sample) -> None:
        original(self)
        counter.track(self)

    monkeypatch.setattr(Sample, "__post_init__", post_init)
    return counter


class Probe(Metric):
    """A judge-free metric that notes, at each score, how many samples are alive and what the run
    record says about the data."""

    name = "probe"
    requires = ("answer",)

    def __init__(self, alive: _Alive | None = None, store: Path | None = None) -> None:
        self.alive = alive
        self.store = store
        self.peak = 0
        self.meta_at_first_score: dict[str, Any] | None = None

    async def score(self, sample: Sample, judge: Any) -> Score:
        if self.alive is not None:
            self.peak = max(self.peak, self.alive.now)
        if self.store is not None and self.meta_at_first_score is None:
            with RunStore(self.store) as s:
                self.meta_at_first_score = s.get_run("latest").meta
        return Score(value=float(len(sample.answer or "")), reason="length")


def _write_jsonl(path: Path, n: int, *, bad_rows: tuple[int, ...] = ()) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            if i in bad_rows:
                f.write('{"question": 7, "answer": "x"}\n')  # a question must be text
                continue
            row = {"id": f"q{i}", "question": f"question {i}?", "answer": f"answer {i % 10}"}
            f.write(json.dumps(row) + "\n")
    return path


async def test_a_run_holds_a_window_of_its_samples_not_all(tmp_path: Path, alive: _Alive) -> None:
    n = 6 * SAMPLE_PAGE
    data = _write_jsonl(tmp_path / "d.jsonl", n)
    probe = Probe(alive, tmp_path / "runs")
    result = await ragmeter.aevaluate(data, [probe], None, out=tmp_path / "runs", concurrency=2, progress=False)
    assert result.summary()["probe"].n_scored == n
    window = INTAKE_CHUNK + 2 * SAMPLE_PAGE + 2 * 8  # a chunk read ahead, two pages, the jobs in flight
    assert alive.made >= 2 * n  # each sample was made when read, and again when read back to score
    assert 0 < probe.peak <= window < n, probe.peak
    # the data were read, checked and recorded before the first score
    meta = probe.meta_at_first_score
    assert meta is not None and meta["n_samples"] == n and meta["dataset_hash"] == load_dataset(data).content_hash()


async def test_problems_are_recorded_in_input_order_and_counted(tmp_path: Path) -> None:
    data = _write_jsonl(tmp_path / "d.jsonl", 2 * INTAKE_CHUNK + 10, bad_rows=(3, INTAKE_CHUNK + 7))
    rows = [json.loads(x) for x in data.read_text().splitlines()]
    rows[700]["answer"] = None  # lacks what the metric needs
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = await ragmeter.aevaluate(data, [Probe()], None, out=tmp_path / "runs", progress=False)
    found = [(p.row, p.field) for p in result.problems]
    assert found == [(4, "question"), (INTAKE_CHUNK + 8, "question"), (701, "answer")]  # input order
    assert result.meta["n_problems"] == 3 and result.n_skipped == 3  # the sample without answer has no job
    assert result.n_samples == 2 * INTAKE_CHUNK + 10 - 2


async def test_a_strict_run_with_a_store_stops_before_any_score_and_leaves_no_run(tmp_path: Path) -> None:
    data = _write_jsonl(tmp_path / "d.jsonl", 3 * INTAKE_CHUNK, bad_rows=(3 * INTAKE_CHUNK - 1,))
    probe = Probe(store=tmp_path / "runs")
    with pytest.raises(DatasetErrors) as e:
        await ragmeter.aevaluate(data, [probe], None, out=tmp_path / "runs", strict=True, progress=False)
    assert probe.meta_at_first_score is None  # nothing was scored
    assert [p.row for p in e.value.problems] == [3 * INTAKE_CHUNK]
    with RunStore(tmp_path / "runs") as store:
        assert store.list_runs() == []


async def test_a_source_without_a_usable_row_leaves_no_run(tmp_path: Path) -> None:
    data = _write_jsonl(tmp_path / "d.jsonl", 3, bad_rows=(0, 1, 2))
    with pytest.raises(DatasetErrors, match="no usable row"):
        await ragmeter.aevaluate(data, [Probe()], None, out=tmp_path / "runs", progress=False)
    with RunStore(tmp_path / "runs") as store:
        assert store.list_runs() == []


async def test_resume_of_a_run_stopped_while_reading_its_data_is_refused(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.create_run("r1", {"metrics": [{"name": "probe"}]})  # as a run killed during intake leaves it
    with pytest.raises(RunError, match="stopped while its data were being read"):
        await ragmeter.aevaluate(None, [Probe()], None, out=tmp_path, resume="r1", progress=False)


async def test_resume_with_the_data_checks_the_hash_of_the_stream(tmp_path: Path) -> None:
    data = _write_jsonl(tmp_path / "d.jsonl", 20)
    first = await ragmeter.aevaluate(data, [Probe()], None, out=tmp_path / "runs", limit=10, progress=False)
    again = await ragmeter.aevaluate(data, [Probe()], None, out=tmp_path / "runs", resume=first.run_id)
    assert again.n_samples == 10  # the run's own limit applies when its data are read again
    other = _write_jsonl(tmp_path / "other.jsonl", 9)
    with pytest.raises(RunError, match="differs"):
        await ragmeter.aevaluate(other, [Probe()], None, out=tmp_path / "runs", resume=first.run_id)


def test_the_hash_of_a_stream_is_the_datasets(tmp_path: Path) -> None:
    data = _write_jsonl(tmp_path / "d.jsonl", 50, bad_rows=(7,))
    stream = SampleStream(data)
    with pytest.raises(RuntimeError, match="read to its end"):
        stream.content_hash()
    items = list(stream)
    ds = load_dataset(data)
    assert stream.content_hash() == ds.content_hash() == Dataset(tuple(i.sample for i in items)).content_hash()
    assert [i.row for i in items] == list(ds.rows)  # type: ignore[attr-defined]
    assert stream.n_samples == 49 and stream.n_problems == 1
    with pytest.raises(RuntimeError, match="read once"):
        list(stream)


def test_default_metrics_read_the_stream_only_until_each_has_a_sample() -> None:
    def samples() -> Iterator[Sample]:
        yield Sample(question="q?", contexts=("c.",), answer="a.", reference="r.")
        raise AssertionError("read past the first sample")

    from ragmeter.judges.factory import make_judge

    judge = make_judge(None)
    chosen, notes = default_metrics(judge, samples())
    assert "token_f1" in chosen and "faithfulness" in chosen
    assert not any("no rows" in n for n in notes)
    chosen, notes = default_metrics(judge, iter([Sample(question="q?", contexts=("c.",), answer="a.")]))
    assert "token_f1" not in chosen and any(n.startswith("token_f1: the data has no rows") for n in notes)


def test_a_problem_names_file_row_and_field_while_streaming(tmp_path: Path) -> None:
    data = _write_jsonl(tmp_path / "d.jsonl", 5, bad_rows=(2,))
    stream = SampleStream(data)
    seen = []
    for item in stream:
        seen.extend(stream.take_problems())
        assert item.key.startswith("id:q")
    assert [(p.file, p.row, p.field) for p in seen] == [(str(data), 3, "question")]
    assert isinstance(seen[0], DatasetError)


# --------------------------------------------------------------------------- a Result read on demand


async def _stored_run(tmp_path: Path, n: int) -> tuple[Path, str, Any]:
    """A recorded run of ``n`` rows (token_f1 and the probe; two bad rows), and its in-memory twin."""
    rows = [
        {"id": f"q{i}", "question": f"q{i}?", "answer": f"answer {i % 7} x", "reference": f"answer {i % 5} x"}
        for i in range(n)
    ]
    rows[3]["reference"] = None  # token_f1 skips it
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"question": 1}\n')
    store = tmp_path / "runs"
    stored = await ragmeter.aevaluate(data, ["token_f1", Probe()], None, out=store, progress=False)
    memory = await ragmeter.aevaluate(data, ["token_f1", Probe()], None, progress=False)
    return store, stored.run_id, memory


async def test_a_stored_result_summarises_from_the_store_without_reading_samples(
    tmp_path: Path, alive: _Alive
) -> None:
    store, run_id, memory = await _stored_run(tmp_path, 3 * SAMPLE_PAGE)
    made = alive.made
    result = ragmeter.Result.from_store(store, run_id)
    summary = result.summary()
    d = result.to_dict()
    assert alive.made == made  # neither the summary nor the JSON summary read a sample
    assert {m: s.to_dict() for m, s in summary.items()} == {m: s.to_dict() for m, s in memory.summary().items()}
    assert d["metrics"] == memory.to_dict()["metrics"] and d["skipped"] == memory.to_dict()["skipped"]
    assert result.n_samples == memory.n_samples == 3 * SAMPLE_PAGE and result.n_invalid == memory.n_invalid
    assert result.usage == memory.usage and result.usage_by_metric() == memory.usage_by_metric()
    assert summary["token_f1"].n_skipped == 1 and summary["token_f1"].n_scored == 3 * SAMPLE_PAGE - 1


async def test_a_stored_result_reads_its_samples_a_page_at_a_time(tmp_path: Path, alive: _Alive) -> None:
    n = 4 * SAMPLE_PAGE
    store, run_id, memory = await _stored_run(tmp_path, n)
    result = ragmeter.Result.from_store(store, run_id)
    held = alive.now  # the in-memory twin's samples
    peak = 0
    records = []
    for rec in result:  # iterating a Result gives its per-sample records
        peak = max(peak, alive.now - held)
        records.append(rec)
    assert records == memory.to_records() == result.to_records()
    assert 0 < peak <= SAMPLE_PAGE
    # the sequences over the record behave as the in-memory lists
    assert len(result.samples) == n and result.samples[0] == memory.samples[0] and result.samples[-1] == memory.samples[-1]
    assert result.samples[SAMPLE_PAGE - 2 : SAMPLE_PAGE + 2] == memory.samples[SAMPLE_PAGE - 2 : SAMPLE_PAGE + 2]
    assert list(result.samples) == list(memory.samples)
    with pytest.raises(IndexError):
        result.samples[n]
    def said(problems: Any) -> list[str]:
        return [str(p) for p in problems]

    assert said(result.problems) == said(memory.problems) and str(result.problems[-1]) == str(memory.problems[-1])
    assert said(result.problems[:5]) == said(memory.problems) and len(result.problems) == len(memory.problems) == 2
    assert sorted((r.idx, r.metric) for r in result.rows) == sorted((r.idx, r.metric) for r in memory.rows)
    assert len(result.rows) == len(memory.rows)
    assert result.keys == memory.keys
    assert result.scores("token_f1") == memory.scores("token_f1")
    got, want = result.details(5, "token_f1"), memory.details(5, "token_f1")
    assert got is not None and want is not None and result.details(3, "token_f1") is None
    assert got["score"] == want["score"] and got["usage"] == want["usage"] and got["calls"] == want["calls"]
    last, twin = result.row(n - 1, "probe"), memory.row(n - 1, "probe")
    assert last is not None and twin is not None and last.score == twin.score
    assert result.to_pandas().equals(memory.to_pandas())
    for fmt in ("csv", "jsonl"):
        a, b = result.export(tmp_path / f"a.{fmt}"), memory.export(tmp_path / f"b.{fmt}")
        assert a.read_text() == b.read_text()
    result.close()
    assert result.summary()["probe"].n_scored == n  # a closed Result opens its store again when asked


def test_the_report_reads_a_run_through_its_view_not_the_result_class() -> None:
    """report/html.py and html_data.py type against ragmeter.run.view.RunView (which Result
    implements), so run/result.py imports the report at module level with no cycle."""
    import ast

    import ragmeter.report.html as html
    import ragmeter.report.html_data as html_data
    import ragmeter.run.result as result

    for module in (html, html_data):
        tree = ast.parse(Path(module.__file__ or "").read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "ragmeter.run.result" not in imported and "ragmeter.run.view" in imported
    tree = ast.parse(Path(result.__file__ or "").read_text())
    assert any(isinstance(n, ast.ImportFrom) and n.module == "ragmeter.report.html" for n in tree.body)
