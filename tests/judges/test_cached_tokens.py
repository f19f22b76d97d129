"""Prompt tokens the server served from its prompt cache (``usage.prompt_tokens_details.cached_tokens``)
are recorded per call, summed in the run's usage, shown by the CLI and priced at the cached price."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers.server import FakeOpenAIServer
from ragmeter.judges.config import JudgeConfig, price
from ragmeter.judges.factory import make_judge
from ragmeter.judges.types import Usage
from ragmeter.run.runner import aevaluate

ROWS = [
    {
        "question": f"When was tower {i} built?",
        "contexts": [f"Tower {i} was built in 18{i:02d}. It is tall."],
        "answer": f"Tower {i} was built in 18{i:02d}.",
        "reference": f"Tower {i} was built in 18{i:02d}.",
    }
    for i in range(4)
]


async def test_cached_tokens_are_recorded_and_priced() -> None:
    config = JudgeConfig(
        prompt_price_per_1k=1.0, cached_prompt_price_per_1k=0.25, completion_price_per_1k=2.0
    )
    with FakeOpenAIServer(prefix_cache=True) as srv:
        judge = make_judge("openai-compatible:m", base_url=srv.url, embeddings="none", config=config)
        result = await aevaluate(ROWS, ["faithfulness", "context_recall"], judge)
        await judge.aclose()
    u = result.usage
    assert 0 < u.cached_tokens < u.prompt_tokens  # the steps' fixed text is a shared prefix
    calls = [c for row in result.rows for c in row.calls if not c["cached"]]
    assert sum(c["usage"]["cached_tokens"] for c in calls) == u.cached_tokens
    expected = (u.prompt_tokens - u.cached_tokens) / 1000 + u.cached_tokens / 1000 * 0.25
    expected += u.completion_tokens / 1000 * 2.0
    assert result.cost == pytest.approx(expected)
    assert judge.client.cost() == pytest.approx(expected)  # type: ignore[attr-defined]


def test_price_without_a_cached_price_bills_cached_tokens_as_prompt_tokens() -> None:
    cfg = {"prompt_price_per_1k": 2.0, "completion_price_per_1k": None}
    assert price(cfg, 1000, 0, 600) == pytest.approx(2.0)
    assert price({"prompt_price_per_1k": None, "completion_price_per_1k": None}, 10, 10, 5) is None
    assert Usage.from_dict(Usage(1, 10, 2, 0, 8).to_dict()) == Usage(1, 10, 2, 0, 8)
    with pytest.raises(Exception, match="cached_prompt_price_per_1k"):
        JudgeConfig(cached_prompt_price_per_1k=-1)


def test_cli_shows_cached_tokens(tmp_path: Path) -> None:
    from ragmeter.cli.main import cli

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    with FakeOpenAIServer(prefix_cache=True) as srv:
        args = ["evaluate", str(data), "-m", "faithfulness", "--judge", "openai-compatible:m"]
        args += ["--base-url", srv.url, "--no-cache", "--out", str(tmp_path / "runs")]
        args += ["--price-prompt", "1", "--price-cached-prompt", "0.1"]
        res = CliRunner().invoke(cli, [*args, "--json"])
        assert res.exit_code == 0, res.output
        d = json.loads(res.stdout)
        assert d["usage"]["cached_tokens"] > 0
        res = CliRunner().invoke(cli, args)
        assert "prompt tokens from the server's prompt cache" in res.stdout
