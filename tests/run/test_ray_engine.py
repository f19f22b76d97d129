"""The Ray engine on a local Ray (2 CPUs, no dashboard, loopback only): the same scores as the
local engine, the endpoint's limit respected in total, and a killed Ray run resumed by the local
engine (runs move between engines through the run store).

Marked slow (a local Ray cluster takes several seconds to start); skipped when Ray is absent.
CI runs them with ``pytest -m slow -k ray`` after ``pip install -e ".[ray]"``.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from helpers.server import FakeOpenAIServer
from ragmeter.log.store import RunStore

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow

LEXICAL = ["token_f1", "rouge_l", "bleu", "exact_match"]
LLM = ["faithfulness", "context_precision", "context_recall"]


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"s{i}",
            "question": f"What does item {i} say?",
            "contexts": [f"Item {i} says the topic is important. It was written in {1900 + i}."],
            "answer": f"Item {i} says the topic is important. It was written in {1900 + i % 3}.",
            "reference": f"Item {i} calls the topic important; it dates from {1900 + i}.",
        }
        for i in range(n)
    ]


def _recipe(server: FakeOpenAIServer) -> dict[str, Any]:
    return {"spec": "openai-compatible:fake-model", "base_url": server.url, "embeddings": "none"}


async def test_ray_scores_equal_local_scores_and_the_limit_holds_in_total(
    ray_cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    rows = _rows(40)
    with FakeOpenAIServer(latency_s=0.01) as server:
        local = await ragmeter.aevaluate(rows, LEXICAL + LLM, _recipe(server), concurrency=4)
        server.reset_counters()
        remote = await ragmeter.aevaluate(
            rows, LEXICAL + LLM, _recipe(server), concurrency=4, engine="ray", out=tmp_path
        )
        assert 0 < server.peak_in_flight <= 4  # two workers, two requests each
    for name in LEXICAL + LLM:
        assert remote.summary()[name].n_scored == 40, name
        assert remote.scores(name) == local.scores(name), name
    # the local judge's embeddings depend on how texts are batched and cached (float32), and a Ray
    # worker batches and caches its own shards, so local-judge scores agree to rounding: 1e-6
    local_judge = ["semantic_similarity", "faithfulness"]
    local_sim = await ragmeter.aevaluate(rows, local_judge, None)
    remote_sim = await ragmeter.aevaluate(rows, local_judge, None, engine="ray")
    for name in local_judge:
        pairs = zip(local_sim.scores(name), remote_sim.scores(name), strict=True)
        for a, b in pairs:
            assert a is not None and b is not None and a.value is not None and b.value is not None
            assert math.isclose(a.value, b.value, abs_tol=1e-6), name


_KILLED_DRIVER = """
import asyncio, sys, ray, ragmeter
ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)
recipe = {"spec": "openai-compatible:fake-model", "base_url": sys.argv[2], "embeddings": "none"}
asyncio.run(ragmeter.aevaluate(sys.argv[3], sys.argv[4].split(","), recipe, concurrency=2, engine="ray",
                               out=sys.argv[5], run_id="killed", progress=False))
"""


def test_a_killed_ray_run_resumes_on_the_local_engine(
    ray_cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    n, metrics = 60, ["faithfulness", "token_f1"]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(n)), encoding="utf-8")
    out = tmp_path / "runs"
    with FakeOpenAIServer(latency_s=0.05) as server:
        args = [ray_cluster, server.url, str(data), ",".join(metrics), str(out)]
        proc = subprocess.Popen([sys.executable, "-c", _KILLED_DRIVER, *args])
        try:
            done: set[tuple[int, str]] = set()
            deadline = time.monotonic() + 120
            while len(done) < 10 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
                if (out / "runs.sqlite").exists():
                    with RunStore(out) as store:
                        done = store.completed_jobs("killed") if store.list_runs() else set()
            assert proc.poll() is None, "the run finished before it could be killed"
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        with RunStore(out) as store:
            recorded = store.completed_jobs("killed")
        assert 10 <= len(recorded) < n * len(metrics)

        recipe = _recipe(server)
        resumed = ragmeter.evaluate(data, metrics, recipe, out=out, resume="killed", engine="local")
        fresh = ragmeter.evaluate(data, metrics, recipe)
    for name in metrics:
        assert resumed.summary()[name].n_scored == n, name
        assert resumed.scores(name) == fresh.scores(name), name


def test_a_judge_object_is_refused_with_a_clear_message(ray_cluster: str) -> None:
    from ragmeter.errors import ConfigError
    from ragmeter.judges.factory import make_judge

    judge = make_judge(None)
    with pytest.raises(ConfigError, match="cannot be sent to the workers"):
        ragmeter.evaluate(_rows(2), ["token_f1"], judge, engine="ray")


def test_cli_engine_ray_records_the_same_scores(ray_cluster: str, tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from ragmeter.cli.main import cli

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(30)), encoding="utf-8")
    out = {}
    for engine in ("local", "ray"):
        args = ["evaluate", str(data), "-m", ",".join(LEXICAL), "--json", "--out", str(tmp_path / engine)]
        res = CliRunner().invoke(cli, [*args, "--engine", engine], catch_exceptions=False)
        assert res.exit_code == 0, res.stderr
        out[engine] = json.loads(res.stdout)
        with RunStore(tmp_path / engine) as store:
            assert store.get_run(out[engine]["run_id"]).meta["config"]["engine"] == engine
    for name in LEXICAL:
        assert out["ray"]["metrics"][name] == out["local"]["metrics"][name], name
