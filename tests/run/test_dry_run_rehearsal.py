"""--dry-run rehearses the run with the judge's own prompts: it counts the requests the run sends
(shared calls once) and their prompt tokens, and sends nothing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import ragmeter.examples
from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.factory import make_judge
from ragmeter.run.estimate import estimate_run
from ragmeter.run.runner import aevaluate

CORE = ["faithfulness", "answer_relevance", "context_precision", "context_recall", "context_relevance"]
EXAMPLES = Path(ragmeter.examples.__file__).with_name("rag_samples.jsonl")


@pytest.mark.parametrize("combine", [True, False])
async def test_the_dry_run_counts_the_requests_the_run_sends(fake_openai_server, combine: bool) -> None:
    rows = [json.loads(x) for x in EXAMPLES.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = [r for r in rows if r["id"].startswith("en-")]  # the server counts 4 characters a token
    judge = make_judge("openai-compatible:m", base_url=fake_openai_server.url, config=JudgeConfig())
    judge.combine_steps = combine  # type: ignore[attr-defined]
    est = await asyncio.to_thread(estimate_run, rows, CORE, judge)
    assert fake_openai_server.total_requests == 0  # a dry run sends nothing
    result = await aevaluate(rows, CORE, judge)
    await judge.aclose()
    assert result.n_invalid == 0
    total = est.totals()
    assert total.calls == fake_openai_server.total_requests == (3 if combine else 7) * len(rows)
    assert total.prompt_tokens == pytest.approx(result.usage.prompt_tokens, rel=0.05)
    d = est.to_dict()
    assert d["estimate"]["requests"] == total.calls
    if combine:  # context precision, recall and relevance get their answers from shared calls
        assert set(d["shared"]) >= {"context_precision", "context_recall", "context_relevance"}


async def test_the_dry_run_counts_the_prompts_of_the_structured_mode(fake_openai_server) -> None:
    """Where the server enforces the schema the prompts go without their worked example; where it
    does not (``json_object``) they carry it: the estimate counts what the run's mode sends."""
    rows = [json.loads(x) for x in EXAMPLES.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = [r for r in rows if r["id"].startswith("en-")]
    estimated = {}
    for mode in ("json_object", "json_schema"):
        judge = make_judge(
            "openai-compatible:m", base_url=fake_openai_server.url, config=JudgeConfig(structured=mode)
        )
        estimated[mode] = (await asyncio.to_thread(estimate_run, rows, CORE, judge)).totals().prompt_tokens
        if mode == "json_schema":  # the loopback server reads its data from schema-named requests
            result = await aevaluate(rows, CORE, judge)
            assert result.n_invalid == 0
            assert estimated[mode] == pytest.approx(result.usage.prompt_tokens, rel=0.05)
        await judge.aclose()
    assert estimated["json_schema"] < 0.9 * estimated["json_object"]
