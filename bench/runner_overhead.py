"""Runner overhead against the loopback OpenAI-compatible server.

For each (latency, concurrency) it scores N samples with faithfulness (2 chat calls a sample,
one after the other) through the real HTTP client, no cache, and reports samples/s and how close
the wall time gets to the ideal ``requests x latency / concurrency``. At 0 ms latency the figure
is the runner's (and client's, and server's) own cost per request.

    python bench/runner_overhead.py [--samples 400] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import ragmeter
from ragmeter import JudgeConfig, make_judge

SERVER = Path(__file__).resolve().parents[1] / "tests" / "helpers" / "server.py"


def rows(n: int) -> list[dict[str, object]]:
    return [
        {
            "question": f"What does item {i} say?",
            "contexts": [f"Item {i} says the topic is important. It was written in {1900 + i}."],
            "answer": f"Item {i} says the topic is important. It was written in {1900 + i}.",
        }
        for i in range(n)
    ]


class ServerProcess:
    """The loopback server in its own process, so its threads do not share the runner's GIL."""

    def __enter__(self) -> ServerProcess:
        return self

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--latency", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/stats") as r:  # loopback only
            return json.loads(r.read())

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


async def one(latency: float, concurrency: int, n: int) -> dict[str, float]:
    with ServerProcess(latency) as server:
        judge = make_judge(
            "openai-compatible:fake-model",
            base_url=server.url,
            config=JudgeConfig(concurrency=concurrency, timeout_s=30, max_retries=0),
        )
        data = rows(n)
        try:
            start = time.perf_counter()
            result = await ragmeter.aevaluate(data, ["faithfulness"], judge, concurrency=concurrency)
            wall = time.perf_counter() - start
        finally:
            await judge.aclose()
        stats = server.stats()
        requests = stats["total_requests"]
        assert result.summary()["faithfulness"].n_scored == n, result.summary()
        assert stats["peak_in_flight"] <= concurrency
    ideal = requests * latency / concurrency
    return {
        "latency_ms": latency * 1000,
        "concurrency": concurrency,
        "samples": n,
        "requests": requests,
        "wall_s": round(wall, 3),
        "samples_per_s": round(n / wall, 1),
        "requests_per_s": round(requests / wall, 1),
        "ideal_s": round(ideal, 3),
        "efficiency": round(ideal / wall, 3) if ideal else None,
        "overhead_ms_per_request": round((wall - ideal) / requests * concurrency * 1000, 2)
        if ideal
        else round(wall / requests * 1000, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=400)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = []
    for latency in (0.0, 0.2):
        for conc in (16, 64):
            results.append(asyncio.run(one(latency, conc, args.samples)))
    if args.json:
        print(
            json.dumps(
                {"machine": platform.platform(), "python": platform.python_version(), "results": results}
            )
        )
        return
    print(f"machine: {platform.platform()}, python {platform.python_version()}, samples {args.samples}")
    print("| latency | concurrency | requests | wall s | samples/s | requests/s | ideal s | efficiency |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        eff = "—" if r["efficiency"] is None else f"{r['efficiency']:.0%}"
        print(
            f"| {r['latency_ms']:.0f} ms | {r['concurrency']} | {r['requests']} | {r['wall_s']} | "
            f"{r['samples_per_s']} | {r['requests_per_s']} | {r['ideal_s']} | {eff} |"
        )


if __name__ == "__main__":
    main()
