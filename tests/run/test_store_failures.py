"""A store that cannot be written, and a judge that cannot be used: a clear error and exit 2 before
any judge call (or, mid-run, a clean stop that says what was saved); never a traceback.

Tests run as root, where ``chmod`` does not stop writes, so an unwritable store is made in ways that
bind root too: a file where the store's directory should be; the SQLite file opened read-only
(``mode=ro``, through a patched ``sqlite3.connect``); a full disk (``shutil.disk_usage`` patched to
report 1 KiB free); a write that fails in the middle of a run (``RunStore.record_score`` patched to
fail as SQLite does on a full disk, after 10 scores).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers.server import FakeOpenAIServer, load_fixture
from ragmeter.cli.main import cli
from ragmeter.errors import RunError
from ragmeter.log.store import RunStore


def data_file(tmp_path: Path, n: int = 30) -> Path:
    path = tmp_path / "data.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(
                json.dumps(
                    {
                        "question": f"What is item {i}?",
                        "contexts": [f"Item {i} is a red box."],
                        "answer": f"Item {i} is a red box.",
                    }
                )
                + "\n"
            )
    return path


def run(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def evaluate(data: Path, out: Path, url: str, *extra: str) -> tuple[int, str, str]:
    return run(
        [
            "evaluate",
            str(data),
            "--judge",
            "openai-compatible:fake-model",
            "--base-url",
            url,
            "-m",
            "faithfulness",
            "--out",
            str(out),
            "--no-progress",
            "--no-cache",
            *extra,
        ]
    )


def test_a_file_where_the_store_directory_should_be(
    tmp_path: Path, fake_openai_server: FakeOpenAIServer
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    code, _, err = evaluate(data_file(tmp_path), blocker / "runs", fake_openai_server.url)
    assert code == 2 and "cannot create the run directory" in err and "Traceback" not in err
    assert fake_openai_server.total_requests == 0


def test_read_only_store(
    tmp_path: Path, fake_openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "runs"
    RunStore(out).close()  # an existing store
    real_connect = sqlite3.connect

    def read_only(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if str(database).endswith("runs.sqlite"):
            return real_connect(f"file:{database}?mode=ro", *args, uri=True, **kwargs)
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    code, _, err = evaluate(data_file(tmp_path), out, fake_openai_server.url)
    assert code == 2 and "cannot write to the run store" in err and "readonly" in err
    assert fake_openai_server.total_requests == 0


def test_full_disk(
    tmp_path: Path, fake_openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda p: real(p)._replace(free=1024))
    code, _, err = evaluate(data_file(tmp_path), tmp_path / "runs", fake_openai_server.url)
    assert code == 2 and "has only 1 KiB free" in err and "Traceback" not in err
    assert fake_openai_server.total_requests == 0


def test_write_failure_mid_run_stops_cleanly_and_resumes(
    tmp_path: Path, fake_openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "runs"
    real = RunStore.record_score
    written = {"n": 0}

    def failing(self: RunStore, *args: Any, **kwargs: Any) -> None:
        if written["n"] >= 10:
            raise RunError(f"cannot write to the run store {self.path}: database or disk is full")
        written["n"] += 1
        real(self, *args, **kwargs)

    monkeypatch.setattr(RunStore, "record_score", failing)
    code, _, err = evaluate(data_file(tmp_path), out, fake_openai_server.url, "--run-id", "r1", "-c", "1")
    assert code == 2 and "database or disk is full" in err and "Traceback" not in err
    assert "10 finished job(s) are saved" in err and "--resume r1" in err
    monkeypatch.setattr(RunStore, "record_score", real)
    with RunStore(out) as store:
        assert store.get_run("r1").status == "failed"
    code, stdout, err = run(["evaluate", "--resume", "r1", "--out", str(out), "--no-progress", "--json"])
    assert code == 0, err
    assert json.loads(stdout)["metrics"]["faithfulness"]["n_scored"] == 30


@pytest.mark.parametrize(
    "name", ["openai_401_bad_key", "vllm_404_model", "fastapi_404_route", "nginx_html_200"]
)
def test_unusable_endpoint_stops_the_run_at_once(
    tmp_path: Path, fake_openai_server: FakeOpenAIServer, name: str
) -> None:
    fixture = load_fixture(name)
    fake_openai_server.replay = fixture
    code, _, err = evaluate(data_file(tmp_path), tmp_path / "runs", fake_openai_server.url, "--run-id", "r")
    assert code == 2 and "Traceback" not in err
    assert "EndpointError" in err and fake_openai_server.url in err
    assert fake_openai_server.total_requests <= 16  # the requests already in flight, not 30 x retries
    assert "--resume r" in err
    with RunStore(tmp_path / "runs") as store:
        info = store.get_run("r")
    assert info.status == "failed" and "EndpointError" in info.meta["summary"]["error"]


def test_context_too_long_marks_the_sample_and_the_run_goes_on(
    tmp_path: Path, fake_openai_server: FakeOpenAIServer
) -> None:
    data = data_file(tmp_path, 6)
    lines = data.read_text().splitlines()
    long = json.loads(lines[2])
    long["contexts"] = ["A very long passage. " * 400]
    lines[2] = json.dumps(long)
    data.write_text("\n".join(lines) + "\n")
    fixture = load_fixture("vllm_context_length")
    original = fake_openai_server.handle

    def handle(path: str, body: dict[str, Any], gone: Any = None) -> Any:
        if "A very long passage." in json.dumps(body):
            fake_openai_server.replay = fixture
            try:
                return original(path, body, gone)
            finally:
                fake_openai_server.replay = None
        return original(path, body, gone)

    fake_openai_server.handle = handle  # type: ignore[method-assign]
    code, stdout, err = evaluate(data, tmp_path / "runs", fake_openai_server.url, "--json", "-c", "1")
    assert code == 0, err
    summary = json.loads(stdout)["metrics"]["faithfulness"]
    assert summary["n_scored"] == 5 and summary["n_invalid"] == 1
    code, stdout, _ = run(["runs", "show", "latest", "--out", str(tmp_path / "runs"), "--json", "--samples"])
    bad = [s for s in json.loads(stdout)["samples"] if s["faithfulness_error"]]
    assert len(bad) == 1 and bad[0]["faithfulness_error"] == "ContextTooLong"
    assert "3072 tokens" in bad[0]["faithfulness_reason"] or "3072" in json.dumps(bad[0])
