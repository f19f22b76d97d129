"""Crash safety of `ragmeter evaluate`, as real processes against the loopback judge.

- kill -9 in the middle of a run (200 samples, 16 jobs at once, a judge with latency), then
  ``--resume``: the run finishes; every (sample, metric) is scored once and the scores saved before
  the kill are kept as they were; the judge requests of both processes together are at most those
  of a clean run plus the ones in flight at the kill (answered by nobody); both SQLite files pass
  ``PRAGMA integrity_check``.
- two processes writing runs into one store (and one LLM cache) at once: both finish, both intact.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from helpers.server import FakeOpenAIServer

N = 200
METRIC = "faithfulness"


def write_data(path: Path, n: int, tag: str = "") -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            record = {
                "id": f"s{i}",
                "question": f"Where is landmark {tag}{i} found?",
                "contexts": [f"Landmark {tag}{i} stands in city {i}. It was built in year {1000 + i}."],
                "answer": f"Landmark {tag}{i} stands in city {i}. It opened in year {1000 + i}.",
            }
            fh.write(json.dumps(record) + "\n")
    return path


def evaluate_cmd(data: Path | None, out: Path, url: str, *extra: str) -> list[str]:
    cmd = [sys.executable, "-m", "ragmeter", "evaluate"]
    if data is not None:
        cmd.append(str(data))
    return [
        *cmd,
        "--judge",
        "openai-compatible:fake-model",
        "--base-url",
        url,
        "--metrics",
        METRIC,
        "--concurrency",
        "16",
        "--judge-concurrency",
        "16",
        "--out",
        str(out),
        "--no-progress",
        "--json",
        *extra,
    ]


def scores(out: Path) -> list[tuple[str, int, str, str, str | None]]:
    with sqlite3.connect(out / "runs.sqlite") as conn:
        return conn.execute("SELECT run_id, idx, metric, created_at, error_kind FROM scores").fetchall()


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def test_kill_9_then_resume(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data.jsonl", N)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with FakeOpenAIServer(latency_s=0.05) as server:
        clean = subprocess.run(
            evaluate_cmd(data, tmp_path / "clean", server.url), env=env, capture_output=True
        )
        assert clean.returncode == 0, clean.stderr.decode()
        clean_requests = server.total_requests
        assert len(scores(tmp_path / "clean")) == N

        server.reset_counters()
        out = tmp_path / "runs"
        proc = subprocess.Popen(
            evaluate_cmd(data, out, server.url, "--run-id", "crash"),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "runs.sqlite").exists() and len(_safe_scores(out)) >= N // 4:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.3)  # let the server see the hung-up connections
        killed_requests = server.total_requests
        abandoned = server.by_status[499]  # in flight at the kill: nobody took the reply
        before = {(r[1], r[2]): r[3] for r in scores(out)}
        assert N // 4 <= len(before) < N

        server.reset_counters()
        resumed = subprocess.run(
            evaluate_cmd(None, out, server.url, "--resume", "crash"), env=env, capture_output=True
        )
        assert resumed.returncode == 0, resumed.stderr.decode()
        resume_requests = server.total_requests

    after = scores(out)
    assert len(after) == N and {r[1] for r in after} == set(range(N))  # each sample scored once
    assert all(r[4] is None for r in after)  # all valid
    assert all(before[(r[1], r[2])] == r[3] for r in after if (r[1], r[2]) in before)  # kept, not redone
    # In flight at the kill: at most --judge-concurrency (16) requests, the ones the server saw
    # abandoned plus any whose reply arrived but was not yet cached. Only those are asked again.
    assert abandoned <= 16
    assert killed_requests + resume_requests <= clean_requests + 16
    assert killed_requests + resume_requests >= clean_requests
    assert json.loads(resumed.stdout)["run_id"] == "crash"
    assert integrity(out / "runs.sqlite") == "ok"
    assert integrity(out / "llm-cache.sqlite") == "ok"
    with sqlite3.connect(out / "runs.sqlite") as conn:
        assert conn.execute("SELECT status FROM runs WHERE run_id = 'crash'").fetchone()[0] == "finished"


def _safe_scores(out: Path) -> list[tuple[str, int, str, str, str | None]]:
    try:
        return scores(out)
    except sqlite3.Error:  # the schema may not be there yet
        return []


def test_two_processes_share_one_store(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with FakeOpenAIServer(latency_s=0.01) as server:
        procs = [
            subprocess.Popen(
                evaluate_cmd(write_data(tmp_path / f"d{k}.jsonl", 100, tag=f"p{k}-"), out, server.url),
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for k in range(2)
        ]
        results = [p.communicate(timeout=180) for p in procs]
    for p, (_, stderr) in zip(procs, results, strict=True):
        assert p.returncode == 0, stderr.decode()
    run_ids = {json.loads(stdout)["run_id"] for stdout, _ in results}
    assert len(run_ids) == 2
    rows = scores(out)
    for rid in run_ids:
        mine = [r for r in rows if r[0] == rid]
        assert len(mine) == 100 and all(r[4] is None for r in mine)
    with sqlite3.connect(out / "runs.sqlite") as conn:
        assert {s for (s,) in conn.execute("SELECT status FROM runs")} == {"finished"}
    assert integrity(out / "runs.sqlite") == "ok"
    assert integrity(out / "llm-cache.sqlite") == "ok"
