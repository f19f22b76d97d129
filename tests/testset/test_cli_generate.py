"""`ragmeter generate` against the loopback OpenAI-compatible server, and offline."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ragmeter import load_dataset
from ragmeter.cli.main import cli

from .conftest import DOCS


def _run(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def _judge(server) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        "--judge",
        "openai-compatible:scripted",
        "--base-url",
        server.url,
        "--embeddings",
        "openai-compatible:emb",
        "--no-progress",
    ]


def test_generate_over_http_then_resume(tmp_path: Path, fake_openai_server) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "ts.jsonl"
    args = [
        "generate",
        str(DOCS / "en"),
        str(DOCS / "zh"),
        "--out",
        str(out),
        "--chunk-size",
        "300",
        "--kinds",
        "single_hop,multi_hop",
        *_judge(fake_openai_server),
    ]
    code, stdout, err = _run([*args, "--n", "4", "--json"])
    assert code == 0, err
    d = json.loads(stdout)
    assert d["n_rows"] == 4 and d["generator"] == "llm:openai-compatible:scripted"
    assert d["usage"]["requests"] > 0
    first_requests = fake_openai_server.total_requests
    code, stdout, err = _run([*args, "--n", "8", "--resume"])
    assert code == 0, err
    assert "wrote 8 row(s)" in stdout and "4 from before" in stdout
    assert fake_openai_server.total_requests > first_requests
    ds = load_dataset(out)
    assert len(ds) == 8 and all(s.reference and s.reference_context_ids for s in ds)
    assert {s.metadata["lang"] for s in ds} >= {"en"}


def test_dry_run_calls_nothing(tmp_path: Path, fake_openai_server) -> None:  # type: ignore[no-untyped-def]
    code, stdout, err = _run(
        [
            "generate",
            str(DOCS),
            "--n",
            "10",
            "--out",
            str(tmp_path / "x.jsonl"),
            "--dry-run",
            "--price-prompt",
            "0.001",
            "--price-completion",
            "0.002",
            *_judge(fake_openai_server),
        ]
    )
    assert code == 0, err
    assert "judge calls: ~" in stdout and "cost: ~" in stdout
    assert fake_openai_server.total_requests == 0
    assert not (tmp_path / "x.jsonl").exists()


def test_no_judge_offers_offline_and_offline_works(tmp_path: Path) -> None:
    code, _, err = _run(["generate", str(DOCS), "--out", str(tmp_path / "x.jsonl")])
    assert code == 2 and "--offline" in err and "needs an LLM judge" in err
    code, stdout, err = _run(
        [
            "generate",
            str(DOCS / "en" / "eiffel_tower.md"),
            "--offline",
            "--n",
            "3",
            "--out",
            str(tmp_path / "c.jsonl"),
            "--no-progress",
        ]
    )
    assert code == 0, err
    assert "(offline-cloze)" in stdout
    rows = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all(r["metadata"]["generator"] == "offline-cloze" for r in rows)
    code, _, err = _run(
        [
            "generate",
            str(DOCS / "en" / "eiffel_tower.md"),
            "--offline",
            "--n",
            "3",
            "--out",
            str(tmp_path / "c.jsonl"),
        ]
    )
    assert code == 2 and "--resume" in err and "--overwrite" in err


def test_generate_stops_at_once_on_an_unusable_endpoint(tmp_path: Path, fake_openai_server) -> None:  # type: ignore[no-untyped-def]
    from helpers.server import load_fixture

    fake_openai_server.replay = load_fixture("vllm_404_model")
    code, _, err = _run(["generate", str(DOCS / "en"), "--out", str(tmp_path / "ts.jsonl"), "--n", "6",
                         *_judge(fake_openai_server)])  # fmt: skip
    assert code == 2 and "EndpointError" in err and "does not exist" in err and "Traceback" not in err
    assert fake_openai_server.total_requests <= 4  # the tasks in flight, not every task
