"""API keys never leave the process except in the Authorization header of the judge's requests.

Real processes (`python -m ragmeter`) run evaluate, runs show / export, a failing evaluate and
generate with a known fake key against the loopback server; then every byte they wrote is searched:
the run store (and its -wal / -shm files, copied while a run is open too), the LLM cache, exports,
the test set, stdout and stderr (where warnings and errors go).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.server import FakeOpenAIServer, load_fixture

KEY = "sk-ragmeter-test-KEY-5f3a9c1e77d24b0c"
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
DOCS = ROOT / "examples" / "docs" / "en"


def ragmeter(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args], env=env, capture_output=True, timeout=300
    )


def judge_args(url: str) -> list[str]:
    return [
        "--judge",
        "openai-compatible:fake-model",
        "--base-url",
        url,
        "--api-key-env",
        "MY_JUDGE_KEY",
        "--embeddings",
        "openai-compatible:fake-emb",
        "--no-progress",
    ]


def forms(key: str) -> list[bytes]:
    raw = key.encode()
    return [raw, base64.b64encode(raw), key.encode("utf-16-le"), key[8:].encode()]


def leaks(blob: bytes) -> list[bytes]:
    return [f for f in forms(KEY) if f in blob]


def test_the_key_is_written_nowhere(tmp_path: Path) -> None:
    env = {**os.environ, "MY_JUDGE_KEY": KEY, "OPENAI_API_KEY": "sk-not-this-one-either-0000"}
    out = tmp_path / "runs"
    outputs: list[bytes] = []
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()

    def check(proc: subprocess.CompletedProcess[bytes], code: int = 0) -> None:
        assert proc.returncode == code, proc.stderr.decode()
        outputs.extend([proc.stdout, proc.stderr])

    with FakeOpenAIServer(reject_json_schema=True) as server:  # a fallback warning is logged too
        args = judge_args(server.url)
        check(
            ragmeter(
                [
                    "evaluate",
                    str(EXAMPLE),
                    *args,
                    "-m",
                    "faithfulness,answer_relevance,context_precision",
                    "--out",
                    str(out),
                    "--run-id",
                    "secret-run",
                    "--json",
                    "--output",
                    str(tmp_path / "rows.csv"),
                ],
                env,
            )
        )
        for name in os.listdir(out):  # -wal and -shm too, as they are right after the run
            shutil.copy(out / name, snapshots / name)
        check(ragmeter(["evaluate", str(EXAMPLE), *args, "--dry-run", "--json", "--out", str(out)], env))
        shown = ragmeter(["runs", "show", "secret-run", "--out", str(out)], env)
        check(shown)
        assert "key from $MY_JUDGE_KEY" in shown.stdout.decode()
        check(ragmeter(["runs", "show", "secret-run", "--out", str(out), "--json", "--samples"], env))
        for fmt in ("jsonl", "csv", "parquet"):
            check(
                ragmeter(
                    [
                        "runs",
                        "export",
                        "secret-run",
                        "--out",
                        str(out),
                        "--format",
                        fmt,
                        "-O",
                        str(tmp_path / f"x.{fmt}"),
                    ],
                    env,
                )
            )
        check(
            ragmeter(
                [
                    "generate",
                    str(DOCS),
                    *args,
                    "--n",
                    "3",
                    "--out",
                    str(tmp_path / "testset.jsonl"),
                    "--json",
                ],
                env,
            )
        )
        sent = set(server.authorizations)

        # a server that refuses the key and echoes it back in its message
        echo = load_fixture("openai_401_bad_key")
        echo = {
            **echo,
            "body": {"error": {**echo["body"]["error"], "message": f"Incorrect API key provided: {KEY}"}},
        }
        server.replay = echo
        check(
            ragmeter(
                ["evaluate", str(EXAMPLE), *args, "-m", "faithfulness", "--out", str(out), "--no-cache"], env
            ),
            code=2,
        )
        assert "HTTP 401" in outputs[-1].decode() and "[API key]" in outputs[-1].decode()

    assert sent == {f"Bearer {KEY}"}  # the named variable, and only in the header
    found: dict[str, list[bytes]] = {}
    for path in [*tmp_path.rglob("*")]:
        if path.is_file():
            hit = leaks(path.read_bytes())
            if hit:
                found[str(path)] = hit
    for i, blob in enumerate(outputs):
        hit = leaks(blob)
        if hit:
            found[f"output {i}"] = hit
    assert not found, found
    assert (snapshots / "runs.sqlite").exists() and (tmp_path / "testset.jsonl").exists()
    with (tmp_path / "x.jsonl").open() as fh:
        assert sum(1 for _ in fh) > 0


def test_the_key_comes_only_from_the_named_variable(
    fake_openai_server: FakeOpenAIServer, monkeypatch: Any
) -> None:
    """A local server gets no key unless one is named: OPENAI_API_KEY is not sent to it."""
    import asyncio

    from ragmeter.errors import ConfigError
    from ragmeter.judges.factory import make_judge

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    judge = make_judge("openai-compatible:fake-model", base_url=fake_openai_server.url, embeddings="none")

    async def ask() -> None:
        from ragmeter.judges.types import ChatRequest, Message

        await judge.client.generate(ChatRequest(messages=(Message("user", "hi"),)))  # type: ignore[attr-defined]
        await judge.aclose()

    asyncio.run(ask())
    assert fake_openai_server.authorizations == ["Bearer not-needed"]
    desc = json.dumps(judge.describe())
    assert KEY not in desc and '"api_key_from": "none"' in desc
    monkeypatch.delenv("MISSING_KEY_VAR", raising=False)
    try:
        make_judge("openai-compatible:m", base_url=fake_openai_server.url, api_key_env="MISSING_KEY_VAR")
    except ConfigError as e:
        assert "MISSING_KEY_VAR" in str(e)
    else:  # pragma: no cover
        raise AssertionError("a named but unset variable must be an error")
    named = make_judge("openai:gpt-4o-mini", embeddings="none")
    assert KEY not in repr(named.client.provider) and KEY not in json.dumps(named.describe())  # type: ignore[attr-defined]
    assert named.describe()["provider"]["api_key_from"] == "env:OPENAI_API_KEY"
