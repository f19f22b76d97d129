"""LLM calls and tokens per sample for the LLM metrics, on the WikiEval dev rows, over HTTP.

Runs against the loopback OpenAI-compatible server of the tests (``tests/helpers/server.py``,
whose default responder answers every ragmeter step by reading the prompt, and which simulates a
prefix cache: ``cached_tokens`` is the longest prefix a prompt shares with an earlier one, in
16-token blocks) and counts, per sample: chat requests the server received, and the prompt /
cached prompt / completion tokens the run recorded (the server counts a token per 4 characters).

Two layouts of the WikiEval dev file (10 questions, each in three rows: faithfulness, answer
relevance, context relevance pairs):

- ``questions``: one sample per question: contexts = the faithfulness row's context + both
  context-relevance contexts (3 contexts), answer = the faithfulness row's ungrounded answer,
  reference = its grounded (preferred) answer. 10 samples.
- ``rows``: one sample per answer of each faithfulness pair (20 samples, ONE context each):
  the row's context, the answer, reference = the preferred answer.

Usage: python bench/llm_calls.py [--data PATH] [--layout questions|rows|both] [--core-only] [--json]
To measure another checkout's code with this script: PYTHONPATH=/path/to/checkout/src python ...

With ``--judge SPEC --base-url URL`` (e.g. a llama-cpp-python server on 127.0.0.1) the five core
metrics run against that endpoint instead (``--core-only`` implied): calls then come from the run's
usage, and the invalid scores are listed by kind -- to check the parse path on a real model.
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

DEFAULT_DATA = ROOT / "data" / "dev" / "wikieval_dev.jsonl"
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


def wikieval_rows(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for r in rows:
        if r["aspect"] != "faithfulness":
            continue
        for variant in ("a", "b"):
            out.append(
                {
                    "question": r["question"],
                    "contexts": list(r["contexts"]),
                    "answer": r[variant]["answer"],
                    "reference": r[r["preferred"]]["answer"],
                }
            )
    return out


LAYOUTS = {"questions": wikieval_samples, "rows": wikieval_rows}


async def measure(
    samples: list[dict[str, Any]], metrics: list[str], *, combine: bool = True, layout: str = ""
) -> dict[str, Any]:
    with FakeOpenAIServer(prefix_cache=True) as srv:
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
        return {
            **per_sample(layout, metrics, combine, len(samples), srv.total_requests, result),
            "memo_hits": getattr(getattr(judge, "memo", None), "hits", None),
        }


def per_sample(layout: str, metrics: list[str], combine: bool, n: int, calls: int, result: Any) -> dict[str, Any]:
    usage = result.usage
    return {
        "layout": layout,
        "metrics": metrics,
        "combine": combine,
        "n_samples": n,
        "calls_per_sample": calls / n,
        "prompt_tokens_per_sample": usage.prompt_tokens / n,
        "cached_tokens_per_sample": getattr(usage, "cached_tokens", 0) / n,
        "completion_tokens_per_sample": usage.completion_tokens / n,
        "n_invalid": result.n_invalid,
    }


async def measure_real(
    samples: list[dict[str, Any]], spec: str, base_url: str, structured: str, layout: str
) -> dict[str, Any]:
    """The five core metrics against a real endpoint; invalid scores by kind."""
    import time
    from collections import Counter

    judge = make_judge(
        spec,
        base_url=base_url,
        embeddings="local",
        config=JudgeConfig(structured=structured, max_tokens=2048, timeout_s=900, concurrency=2),
    )
    started = time.monotonic()
    try:
        result = await aevaluate(samples, CORE, judge, concurrency=4)
    finally:
        await judge.aclose()
    n = len(samples)
    kinds: Counter[str] = Counter()
    for m in CORE:
        for score in result.scores(m):
            if score is not None and not score.valid and score.error is not None:
                kinds[score.error.kind] += 1
    return {
        **per_sample(layout, CORE, True, n, result.usage.requests, result),
        "judge": spec,
        "n_scores": n * len(CORE),
        "invalid_kinds": dict(kinds),
        "seconds": round(time.monotonic() - started, 1),
    }


async def main_async(path: Path, layouts: list[str], core_only: bool) -> list[dict[str, Any]]:
    out = []
    for layout in layouts:
        samples = LAYOUTS[layout](path)
        out.append(await measure(samples, CORE, layout=layout))
        if core_only:
            continue
        out.append(await measure(samples, CORE, combine=False, layout=layout))
        for m in CORE:
            out.append(await measure(samples, [m], layout=layout))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--layout", choices=[*LAYOUTS, "both"], default="both")
    ap.add_argument("--core-only", action="store_true", help="only the five core metrics together")
    ap.add_argument("--judge", default=None, help="a judge spec to measure instead of the loopback server")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--structured", default="auto")
    ap.add_argument("--limit", type=int, default=None, help="at most N samples per layout")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    layouts = list(LAYOUTS) if args.layout == "both" else [args.layout]
    if args.judge:
        rows = [
            asyncio.run(
                measure_real(
                    LAYOUTS[lay](args.data)[: args.limit], args.judge, args.base_url, args.structured, lay
                )
            )
            for lay in layouts
        ]
        print(json.dumps(rows, indent=2))
        return
    rows = asyncio.run(main_async(args.data, layouts, args.core_only))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"{'layout':<9} {'metrics':<20} {'combine':>7} {'n':>3} {'calls/s':>8} {'prompt tok/s':>13} "
        f"{'cached tok/s':>13} {'compl tok/s':>12} {'invalid':>7}"
    )
    for r in rows:
        name = "five core" if r["metrics"] == CORE else "+".join(r["metrics"])
        print(
            f"{r['layout']:<9} {name:<20} {r['combine']!s:>7} {r['n_samples']:>3} {r['calls_per_sample']:>8.2f} "
            f"{r['prompt_tokens_per_sample']:>13.0f} {r['cached_tokens_per_sample']:>13.0f} "
            f"{r['completion_tokens_per_sample']:>12.0f} {r['n_invalid']:>7}"
        )


if __name__ == "__main__":
    main()
