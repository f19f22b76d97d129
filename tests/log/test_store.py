from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ragmeter.dataset.sample import Sample
from ragmeter.errors import DatasetError, RunError
from ragmeter.judges.types import CallRecord, Usage
from ragmeter.log import RunInfo, RunStore, ScoreRow, default_store_dir, new_run_id
from ragmeter.log.store import SCHEMA_VERSION
from ragmeter.metrics.base import Score


def _call(reply: str = "{}", prompt: int = 10, completion: int = 5, cached: bool = False) -> CallRecord:
    return CallRecord(
        step="extract_claims",
        model="m",
        reply=reply,
        usage=Usage(1, prompt, completion, int(cached)),
        cached=cached,
        latency_s=0.25,
        prompt_version="3",
        attempts=2,
        error=None,
    )


def _sample(i: int) -> Sample:
    return Sample(
        question=f"q{i} 中文?",
        contexts=[f"c{i}a", f"c{i}b"],
        answer=f"a{i}",
        reference=None,
        context_ids=["x", "y"],
        metadata={"topic": "t", "n": i},
        id=str(i),
    )


def test_new_run_id_format() -> None:
    rid = new_run_id()
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", rid)
    assert new_run_id() != rid


def test_default_store_dir_is_relative() -> None:
    assert default_store_dir() == Path("ragmeter-runs")


def test_round_trip(tmp_path: Path) -> None:
    with RunStore(tmp_path / "out" / "nested") as store:
        assert (tmp_path / "out" / "nested" / "runs.sqlite").exists()
        meta = {
            "dataset_hash": "abc",
            "metrics": [{"name": "faithfulness", "version": "1"}],
            "x": float("nan"),
        }
        store.create_run("r1", meta)
        samples = [(0, _sample(0)), (2, _sample(2))]
        store.add_samples("r1", samples)
        store.add_problems("r1", [DatasetError("empty text", file="d.jsonl", row=2, field="answer")])
        store.add_problems("r1", [DatasetError("broken JSON line", file="d.jsonl", row=7)])

        good = Score(0.75, reason="3 of 4 supported", details={"claims": ("a", "b"), "np": 1.5})
        bad = Score.invalid("JudgeOutputError", "not JSON", raw="<<garbage>>", details={"attempt": 2})
        store.record_score("r1", 0, "faithfulness", good, [_call(), _call(cached=True)], duration_s=1.5)
        store.record_score("r1", 2, "faithfulness", bad, [_call("<<garbage>>")], duration_s=0.5)
        store.record_score("r1", 0, "exact_match", Score(0.0), [], duration_s=0.001)

        info = store.get_run("r1")
        assert isinstance(info, RunInfo)
        assert info.status == "running" and info.finished_at is None
        assert info.meta["dataset_hash"] == "abc"
        assert info.meta["x"] == "nan"  # never NaN in the record

        assert store.load_samples("r1") == samples
        problems = store.load_problems("r1")
        assert [(p.file, p.row, p.field, p.message) for p in problems] == [
            ("d.jsonl", 2, "answer", "empty text"),
            ("d.jsonl", 7, None, "broken JSON line"),
        ]

        rows = store.load_scores("r1")
        assert [(r.idx, r.metric) for r in rows] == [
            (0, "exact_match"),
            (0, "faithfulness"),
            (2, "faithfulness"),
        ]
        r0 = rows[1]
        assert isinstance(r0, ScoreRow)
        assert r0.score.value == 0.75 and r0.score.reason == "3 of 4 supported"
        assert r0.score.details == {"claims": ["a", "b"], "np": 1.5}
        assert r0.usage == Usage(2, 20, 10, 1)
        assert r0.duration_s == 1.5
        assert r0.calls[0] == {
            "step": "extract_claims",
            "model": "m",
            "reply": "{}",
            "usage": {
                "requests": 1,
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "cached_requests": 0,
                "cached_tokens": 0,
            },
            "cached": False,
            "latency_s": 0.25,
            "prompt_version": "3",
            "attempts": 2,
            "error": None,
        }
        r2 = rows[2]
        assert not r2.score.valid and r2.score.value is None
        assert r2.score.error is not None
        assert (r2.score.error.kind, r2.score.error.message, r2.score.error.raw) == (
            "JudgeOutputError",
            "not JSON",
            "<<garbage>>",
        )
        assert r2.calls[0]["reply"] == "<<garbage>>"
        assert rows[0].usage == Usage() and rows[0].calls == []

        # upsert: a resumed job replaces its row
        store.record_score("r1", 2, "faithfulness", Score(1.0), [], duration_s=0.1)
        assert [r.score.value for r in store.load_scores("r1") if r.idx == 2] == [1.0]

        store.set_status("r1", "finished", {"n_scored": 3})
        store.set_status("r1", "finished", {"usage": {"requests": 4}})
        info = store.get_run("r1")
        assert info.status == "finished" and info.finished_at is not None
        assert info.meta["summary"] == {"n_scored": 3, "usage": {"requests": 4}}
        store.set_status("r1", "running")
        assert store.get_run("r1").finished_at is None

    # Re-opening reads the same data (everything was committed as it went).
    with RunStore(tmp_path / "out" / "nested") as again:
        assert len(again.load_scores("r1")) == 3


def test_writes_commit_immediately_and_survive_a_crash(tmp_path: Path) -> None:
    script = f"""
import os
from ragmeter.log import RunStore
from ragmeter.metrics.base import Score
s = RunStore({str(tmp_path)!r})
s.create_run("crash", {{}})
s.record_score("crash", 0, "m", Score(0.5), [], 0.1)
os._exit(1)  # no close, no cleanup
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    with RunStore(tmp_path) as store:
        assert store.completed_jobs("crash") == {(0, "m")}


def test_resume_helpers(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.create_run("r", {})
        assert store.completed_jobs("r") == set()
        store.record_score("r", 0, "a", Score(1.0), [], 0.0)
        store.record_score("r", 1, "a", Score.invalid("TransportError", "timeout"), [], 0.0)
        store.record_score("r", 1, "b", Score(0.0), [], 0.0)
        assert store.completed_jobs("r") == {(0, "a"), (1, "a"), (1, "b")}
        assert store.valid_jobs("r") == {(0, "a"), (1, "b")}


def test_create_run_twice_and_unknown_runs(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.create_run("r", {})
        with pytest.raises(RunError, match="already exists"):
            store.create_run("r", {})
        with pytest.raises(RunError, match=r"no run 'nope'.*ragmeter runs list"):
            store.get_run("nope")
        with pytest.raises(RunError, match="no run"):
            store.record_score("nope", 0, "m", Score(1.0), [], 0.0)
        with pytest.raises(RunError, match="no run"):
            store.add_samples("nope", [(0, _sample(0))])
        with pytest.raises(RunError, match="no run"):
            store.set_status("nope", "finished")
        with pytest.raises(ValueError, match="unknown run status"):
            store.set_status("r", "done")


def test_prefix_latest_and_listing(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        with pytest.raises(RunError, match="no runs"):
            store.get_run("latest")
        ids = ["20240101-000000-aaaaaa", "20240101-000000-aabbbb", "20240102-000000-cccccc"]
        for rid in ids:
            store.create_run(rid, {"name": rid})
            time.sleep(0.002)
        assert store.get_run("20240102").run_id == ids[2]
        assert store.get_run("20240101-000000-aab").run_id == ids[1]
        with pytest.raises(RunError, match="ambiguous"):
            store.get_run("20240101-000000-aa")
        assert store.get_run("latest").run_id == ids[2]
        assert store.get_run("last").run_id == ids[2]
        assert [r.run_id for r in store.list_runs()] == ids[::-1]
        assert [r.run_id for r in store.list_runs(limit=2)] == [ids[2], ids[1]]
        # read methods accept a prefix too
        store.record_score(ids[2], 0, "m", Score(1.0), [], 0.0)
        assert store.completed_jobs("20240102") == {(0, "m")}

        store.delete_run(ids[2])
        assert [r.run_id for r in store.list_runs()] == ids[1::-1]
        with pytest.raises(RunError):
            store.get_run(ids[2])
        # nothing of the deleted run is left behind
        conn = sqlite3.connect(store.path)
        assert conn.execute("SELECT COUNT(*) FROM scores").fetchone() == (0,)
        conn.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    RunStore(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "runs.sqlite")
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(RunError, match="newer ragmeter"):
        RunStore(tmp_path)


def test_not_a_database_is_a_run_error(tmp_path: Path) -> None:
    (tmp_path / "runs.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(RunError, match="not a usable ragmeter run store"):
        RunStore(tmp_path)


def test_closed_store_raises(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.close()
    store.close()
    with pytest.raises(RunError, match="closed"):
        store.list_runs()


def test_wal_mode(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        conn = sqlite3.connect(store.path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()


def test_concurrent_reader_in_another_process(tmp_path: Path) -> None:
    """`ragmeter runs list` in another process while a run writes: both work, and the reader sees
    the run grow."""
    n_writes = 200
    reader = f"""
import json, sys, time
from ragmeter.log import RunStore
counts = []
deadline = time.monotonic() + 60
with RunStore({str(tmp_path)!r}) as s:
    print("ready", flush=True)
    while time.monotonic() < deadline:
        run = s.list_runs()[0]
        counts.append(len(s.load_scores(run.run_id)))
        if run.status == "finished":
            counts.append(len(s.load_scores(run.run_id)))
            break
print(json.dumps(counts))
"""
    with RunStore(tmp_path) as store:
        store.create_run("live", {})
        proc = subprocess.Popen(
            [sys.executable, "-c", reader], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
            for i in range(n_writes):
                store.record_score("live", i, "m", Score(i / n_writes), [_call()], 0.01)
                time.sleep(0.001)
            store.set_status("live", "finished")
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, err
    counts = json.loads(out)
    assert counts[-1] == n_writes
    assert counts == sorted(counts)
    assert any(0 < c < n_writes for c in counts), "the reader never saw the run in progress"


def test_concurrent_reader_thread_sees_progress(tmp_path: Path) -> None:
    with RunStore(tmp_path) as writer:
        writer.create_run("live", {})
        counts: list[int] = []
        errors: list[BaseException] = []
        stop = threading.Event()

        def read() -> None:
            try:
                with RunStore(tmp_path) as reader:
                    while not stop.is_set():
                        counts.append(len(reader.completed_jobs("live")))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        t = threading.Thread(target=read)
        t.start()
        for i in range(200):
            writer.record_score("live", i, "m", Score(1.0), [], 0.0)
        time.sleep(0.05)
        stop.set()
        t.join(timeout=30)
    assert not errors
    assert counts == sorted(counts)  # never goes backwards
    assert counts[-1] == 200


def test_grouped_scores_commit_on_flush_and_a_crash_loses_at_most_the_last_group(tmp_path: Path) -> None:
    script = f"""
import os
from ragmeter.log import RunStore
from ragmeter.metrics.base import Score
s = RunStore({str(tmp_path)!r}, group_rows=1000)
s.create_run("g", {{}})
for i in range(3):
    s.record_score("g", i, "m", Score(0.5), [], 0.1)
s.flush()
for i in range(3, 5):
    s.record_score("g", i, "m", Score(0.5), [], 0.1)
os._exit(1)  # no close: the last two rows were never committed
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    with RunStore(tmp_path) as store:
        assert store.completed_jobs("g") == {(i, "m") for i in range(3)}


def test_grouped_scores_are_seen_by_reads_commit_when_full_and_on_close(tmp_path: Path) -> None:
    with RunStore(tmp_path, group_rows=4) as store, RunStore(tmp_path) as other:
        store.create_run("g", {})
        for i in range(3):
            store.record_score("g", i, "m", Score(0.25), [], 0.1)
        assert other.completed_jobs("g") == set()  # pending in the writer
        assert len(store.load_scores("g")) == 3  # a read by the writer commits first
        assert len(other.load_scores("g")) == 3
        for i in range(3, 7):
            store.record_score("g", i, "m", Score(0.25), [], 0.1)
        assert len(other.load_scores("g")) == 7  # the fourth pending row filled the group
        store.record_score("g", 7, "m", Score(0.25), [], 0.1)
    with RunStore(tmp_path) as again:
        assert len(again.load_scores("g")) == 8  # close committed the rest
        with pytest.raises(RunError, match="no run"):
            again.record_score("nope", 0, "m", Score(1.0))


def _open_store_at(path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        RunStore(path).close()
        results.put("ok")
    except Exception as e:  # reported to the test
        results.put(f"{type(e).__name__}: {e}")


def test_processes_opening_a_new_store_at_once_wait_for_each_other(tmp_path: Path) -> None:
    # Switching a new file to WAL can answer "database is locked" at once, without SQLite's busy
    # wait: two runs started together on one --out failed that way (about one round in six here).
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    for round_ in range(8):
        path = str(tmp_path / f"store{round_}")
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open_store_at, args=(path, barrier, results)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert [results.get(timeout=5) for _ in procs] == ["ok"] * 4
