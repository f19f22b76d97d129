"""LLM calls and tokens per sample for the LLM metrics, on the WikiEval dev rows, over HTTP.

Runs against the loopback OpenAI-compatible server of the tests (``tests/helpers/server.py``,
whose default responder answers every ragmeter step by reading the prompt) and counts, per
sample: chat requests the server received, and the prompt / completion tokens the run recorded
(the server counts a token per 4 characters). The WikiEval dev file has 10 questions, each in
three rows (faithfulness, answer relevance, context relevance pairs); one sample per question:
contexts = the faithfulness row's context + both context-relevance contexts (3 contexts), answer =
the faithfulness row's ungrounded answer, reference = its grounded (preferred) answer.

Usage: python bench/llm_calls.py [--data PATH] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.server import FakeOpenAIServer  # noqa: E402
from ragmeter.judges.config import JudgeConfig  # noqa: E402
from ragmeter.judges.factory import make_judge  # noqa: E402
from ragmeter.run.runner import aevaluate  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "dev" / "wikieval_dev.jsonl"
CORE = ["faithfulness", "answer_relevance", "context_precision", "context_recall", "context_relevance"]


def wikieval_samples(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_q: dict[str, dict[str, Any]] = {}
    for r in rows:
        by_q.setdefault(r["question"], {})[r["aspect"]] = r
    out = []
    for q, asp in by_q.items():
        ff, cr = asp["faithfulness"], asp["context_relevance"]
        pref = lambda r: r[r["preferred"]]  # noqa: E731
        other = lambda r: r["b" if r["preferred"] == "a" else "a"]  # noqa: E731
        contexts = [*ff["contexts"], *pref(cr)["contexts"], *other(cr)["contexts"]]
        out.append(
            {
                "question": q,
                "contexts": contexts,
                "answer": other(ff)["answer"],
                "reference": pref(ff)["answer"],
            }
        )
    return out


async def measure(
    samples: list[dict[str, Any]], metrics: list[str], *, combine: bool = True
) -> dict[str, Any]:
    with FakeOpenAIServer() as srv:
        judge = make_judge(
            "openai-compatible:bench",
            base_url=srv.url,
            embeddings="local",
            config=JudgeConfig(backoff_base_s=0, backoff_max_s=0),
        )
        judge.combine_steps = combine  # type: ignore[attr-defined]
        try:
            result = await aevaluate(samples, metrics, judge, concurrency=32)
        finally:
            await judge.aclose()
        n = len(samples)
        usage = result.usage
        invalid = result.n_invalid
        return {
            "metrics": metrics,
            "combine": combine,
            "n_samples": n,
            "calls_per_sample": srv.total_requests / n,
            "prompt_tokens_per_sample": usage.prompt_tokens / n,
            "completion_tokens_per_sample": usage.completion_tokens / n,
            "n_invalid": invalid,
            "memo_hits": getattr(getattr(judge, "memo", None), "hits", None),
        }


async def main_async(path: Path) -> list[dict[str, Any]]:
    samples = wikieval_samples(path)
    out = [await measure(samples, CORE), await measure(samples, CORE, combine=False)]
    for m in CORE:
        out.append(await measure(samples, [m]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = asyncio.run(main_async(args.data))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"{'metrics':<60} {'combine':>7} {'calls/s':>8} {'prompt tok/s':>13} {'compl tok/s':>12} {'invalid':>7}"
    )
    for r in rows:
        print(
            f"{'+'.join(r['metrics']):<60} {r['combine']!s:>7} {r['calls_per_sample']:>8.2f} "
            f"{r['prompt_tokens_per_sample']:>13.0f} {r['completion_tokens_per_sample']:>12.0f} {r['n_invalid']:>7}"
        )


if __name__ == "__main__":
    main()
