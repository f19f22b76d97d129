"""`ragmeter evaluate --samples N --lang L` against the loopback server."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ragmeter.cli.main import cli
from ragmeter.run.result import Result

ROWS = [
    {
        "question": "塔是哪一年建成的？",
        "contexts": ["这座塔建于1889年。它很高。"],
        "answer": "这座塔建于1889年。",
        "reference": "1889年。",
    }
]


def test_samples_repeats_the_judge_and_lang_forces_the_prompt(tmp_path: Path, fake_openai_server) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS), encoding="utf-8")
    args = ["evaluate", str(data), "--judge", "openai-compatible:m", "--base-url", fake_openai_server.url]
    args += ["--metrics", "correctness", "--samples", "3", "--lang", "en", "--out", str(tmp_path / "runs")]
    result = CliRunner().invoke(cli, [*args, "--json", "--no-progress"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    run_id = out["run_id"]
    assert fake_openai_server.total_requests == 3
    bodies = fake_openai_server.requests
    assert all(b["temperature"] == 0.7 for b in bodies)
    assert all("Question:" in b["messages"][1]["content"] for b in bodies)  # English prompt for Chinese text
    stored = Result.from_store(tmp_path / "runs", run_id)
    score = stored.scores("correctness")[0]
    assert score is not None and len(score.details["samples"]) == 3 and "std" in score.details
    # the summary reports the judge's spread: the mean of the per-sample standard deviations
    assert out["metrics"]["correctness"]["judge_spread"] == score.details["std"]
    spec = stored.meta["metrics"][0]
    assert spec["params"]["samples"] == 3 and spec["params"]["lang"] == "en"
