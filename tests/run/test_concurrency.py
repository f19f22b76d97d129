"""One concurrency knob: ``RunConfig.concurrency`` / ``--concurrency`` is judge requests in flight
per endpoint, and the runner keeps enough jobs going (memo waits included) to fill them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragmeter
from helpers.server import FakeOpenAIServer
from ragmeter import JudgeConfig, make_judge
from ragmeter.cli.main import cli
from ragmeter.log.store import RunStore

CORE = ["faithfulness", "answer_relevance", "context_precision", "context_recall"]


def _rows(n: int) -> list[dict[str, object]]:
    return [
        {
            "question": f"What does item {i} say?",
            "contexts": [f"Item {i} says the topic is important. It was written in {1900 + i}."],
            "answer": f"Item {i} says the topic is important. It was written in {1900 + i}.",
            "reference": f"Item {i} calls the topic important.",
        }
        for i in range(n)
    ]


async def _peak(server: FakeOpenAIServer, tmp_path: Path, config: JudgeConfig, concurrency: int) -> int:
    judge = make_judge("openai-compatible:fake-model", base_url=server.url, config=config)
    try:
        result = await ragmeter.aevaluate(_rows(30), CORE, judge, concurrency=concurrency, out=tmp_path)
    finally:
        await judge.aclose()
    for name in CORE:
        assert result.summary()[name].n_scored == 30, name
    # the run record names the limit the endpoint ran under
    assert result.meta["judge"]["config"]["concurrency"] == min(
        concurrency, config.concurrency or concurrency
    )
    return server.peak_in_flight


async def test_run_concurrency_is_requests_in_flight_and_they_are_filled(tmp_path: Path) -> None:
    # 30 samples x 4 metrics make 120 requests of 100 ms: with 6 slots and the shared steps of
    # each sample in flight, the endpoint sees exactly 6 at once at some point and never 7 (100 ms,
    # not less: on a loaded machine a slot freed by a fast reply may not be refilled before the
    # others return, and the peak would measure the machine, not the runner)
    with FakeOpenAIServer(latency_s=0.1) as server:
        assert await _peak(server, tmp_path, JudgeConfig(), 6) == 6


async def test_an_explicit_judge_concurrency_wins_over_the_run(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency_s=0.02) as server:
        assert await _peak(server, tmp_path, JudgeConfig(concurrency=3), 12) == 3


def _cli(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def _write(tmp_path: Path, n: int) -> Path:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(n)), encoding="utf-8")
    return data


def _judge_args(server: FakeOpenAIServer) -> list[str]:
    return ["--judge", "openai-compatible:fake-model", "--base-url", server.url, "--no-cache"]


def test_cli_concurrency_sets_the_endpoint_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    with FakeOpenAIServer(latency_s=0.1) as server:  # 100 ms: see above
        args = ["evaluate", str(_write(tmp_path, 20)), "-m", ",".join(CORE), "--json", "--out", str(tmp_path)]
        code, out, err = _cli([*args, *_judge_args(server), "--concurrency", "5"])
        assert code == 0, err
        assert server.peak_in_flight == 5
        with RunStore(tmp_path) as store:
            meta = store.get_run(json.loads(out)["run_id"]).meta
        assert meta["config"]["concurrency"] == 5
        assert meta["judge"]["config"]["concurrency"] == 5
        # the recipe stored for --resume does not pin a limit: a resume follows its own --concurrency
        assert "concurrency" not in meta["judge_recipe"]["config"]


def test_cli_old_judge_concurrency_is_an_alias(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    data = str(_write(tmp_path, 6))
    with FakeOpenAIServer(latency_s=0.02) as server:
        base = [
            "evaluate",
            data,
            "-m",
            "faithfulness",
            "--json",
            "--out",
            str(tmp_path),
            *_judge_args(server),
        ]
        code, _, err = _cli([*base, "--judge-concurrency", "2"])
        assert code == 0, err
        assert "--judge-concurrency is now --concurrency" in err
        assert server.peak_in_flight == 2
        code, _, err = _cli([*base, "--judge-concurrency", "2", "--concurrency", "4"])
        assert code == 2 and "give one of them" in err


def test_the_progress_bar_shows_requests_in_flight() -> None:
    from ragmeter.judges.types import Usage
    from ragmeter.run.progress import Progress

    in_flight = iter([3, 5])
    progress = Progress(2, enabled=True, in_flight=lambda: next(in_flight))
    try:
        assert progress._bar is not None
        columns = [getattr(c, "text_format", "") for c in progress._bar.columns]
        assert "in flight {task.fields[in_flight]}" in columns
        progress.advance(invalid=False, usage=Usage())
        assert progress._bar.tasks[0].fields["in_flight"] == 3
        progress.advance(invalid=True, usage=Usage())
        assert progress._bar.tasks[0].fields["in_flight"] == 5
    finally:
        progress.close()
    # a judge with no endpoint (the local judge) has no such column
    plain = Progress(1, enabled=True)
    try:
        assert not any("in flight" in getattr(c, "text_format", "") for c in plain._bar.columns)
    finally:
        plain.close()


async def test_the_summary_tools_load_while_the_first_wave_waits_on_the_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the run's summary needs is loaded once the judge's warm-up says the process only
    waits (first wave out, models loaded: no embedder here), before any reply, not when the first job is done
    (that is the first reply, whose wave it would slow); and only once."""
    import asyncio

    from ragmeter.run import executor

    loads: list[int] = []
    with FakeOpenAIServer(latency_s=0.3) as server:
        monkeypatch.setattr(executor, "load_summary_tools", lambda: loads.append(server.total_requests - server.in_flight))
        judge = make_judge("openai-compatible:fake-model", base_url=server.url)
        try:
            result = await asyncio.wait_for(
                ragmeter.aevaluate(_rows(3), ["faithfulness", "context_precision"], judge, concurrency=2, out=tmp_path),
                60,
            )
        finally:
            await judge.aclose()
    assert result.summary()["faithfulness"].n_scored == 3
    assert loads == [0]  # once, with no reply in yet (two requests out: the first wave)


async def test_the_runner_warms_the_judge_beside_the_jobs_and_never_waits_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's warm_up gets the steps of the run's metrics, starts with the jobs, and one that
    is still waiting when the last job is done is cancelled, not waited for."""
    import asyncio

    from ragmeter.judges.llm import LLMJudge

    seen: list[frozenset[str]] = []
    cancelled: list[bool] = []

    async def warm_up(self: LLMJudge, steps: frozenset[str]) -> None:
        seen.append(frozenset(steps))
        try:
            await asyncio.Event().wait()  # never done by itself
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    monkeypatch.setattr(LLMJudge, "warm_up", warm_up)
    with FakeOpenAIServer() as server:
        judge = make_judge("openai-compatible:fake-model", base_url=server.url)
        try:
            result = await asyncio.wait_for(
                ragmeter.aevaluate(_rows(3), CORE, judge, concurrency=4, out=tmp_path), 60
            )
        finally:
            await judge.aclose()
    assert result.summary()["faithfulness"].n_scored == 3
    assert seen == [frozenset({"extract_claims", "verify_claims", "generate_questions", "embed", "rate_chunks"})]
    assert cancelled == [True]
