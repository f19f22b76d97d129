"""Start-up of ``ragmeter evaluate`` with an LLM judge: process launch to the judge's first request.

Starts the loopback OpenAI-compatible server of the tests in this process, then runs, several
times in a fresh process each::

    ragmeter evaluate data.jsonl --judge openai-compatible:fake-model --base-url URL \
        --metrics faithfulness --no-cache --no-progress --out DIR

and records when the server sees the first request. The figures are the median (and min/max) of
the launch-to-first-request times, and the median CPU time (user + system) of the whole
one-sample run, which a loaded machine disturbs less than wall time. ``--baseline SRC`` times
another checkout's code (e.g. ``../main/src``) alternately with this one, for a ratio.
``--importtime`` also prints the slowest imports of the CLI on that
path (``python -X importtime``), cumulative, to show what start-up still spends its time on.

    python bench/startup.py [--repeat 7] [--importtime] [--baseline SRC] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_runs import env_for, ragmeter_cmd, versions

from helpers.server import FakeOpenAIServer, default_responder

ROW = {
    "question": "What does the item say?",
    "contexts": ["The item says the topic is important."],
    "answer": "The item says the topic is important.",
}


class FirstRequest:
    """A responder that notes when the first request arrives."""

    def __init__(self) -> None:
        self.first: float | None = None
        self._lock = threading.Lock()

    def __call__(self, req: dict[str, Any]) -> str:
        with self._lock:
            if self.first is None:
                self.first = time.perf_counter()
        return default_responder(req)


def cli(url: str, data: Path, out: str, *python_flags: str) -> list[str]:
    return [
        *ragmeter_cmd(*python_flags),
        "evaluate",
        str(data),
        "--judge",
        "openai-compatible:fake-model",
        "--base-url",
        url,
        "--metrics",
        "faithfulness",
        "--no-cache",
        "--no-progress",
        "--out",
        out,
    ]


def one(data: Path, src: str | None) -> tuple[float, float]:
    """(launch to first request, CPU seconds of the whole one-sample run) of one CLI run."""
    responder = FirstRequest()
    env = env_for(src, OPENAI_API_KEY="loopback")
    with FakeOpenAIServer(responder=responder) as server, tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            cli(server.url, data, out), capture_output=True, text=True, env=env, check=False
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"ragmeter exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    if responder.first is None:
        raise SystemExit("the judge sent no request")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return responder.first - start, cpu


def slowest_imports(data: Path, src: str | None, top: int = 15) -> list[tuple[str, float]]:
    """The ``top`` imports with the largest cumulative time, on the path to the first request."""
    env = env_for(src, OPENAI_API_KEY="loopback")
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as out:
        proc = subprocess.run(
            cli(server.url, data, out, "-X", "importtime"),
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    rows: list[tuple[str, float]] = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self_us, cumulative_us, name = line[len("import time:") :].split("|")
        rows.append((name.strip(), int(cumulative_us) / 1e6))
    rows.sort(key=lambda r: -r[1])
    return rows[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--importtime", action="store_true")
    ap.add_argument("--baseline", metavar="SRC", help="also time this checkout's src/, alternately")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    times: dict[str, list[float]] = {label: [] for label, _ in versions(args.baseline)}
    cpu: dict[str, list[float]] = {label: [] for label, _ in versions(args.baseline)}
    imports: dict[str, list[tuple[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.jsonl"
        data.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
        for _ in range(args.repeat):
            for label, src in versions(args.baseline):
                first, cpu_s = one(data, src)
                times[label].append(first)
                cpu[label].append(cpu_s)
        if args.importtime:
            imports = {label: slowest_imports(data, src) for label, src in versions(args.baseline)}
    result = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_avg": round(os.getloadavg()[0], 1),
        "repeat": args.repeat,
        "versions": {
            label: {
                "median_s": round(statistics.median(t), 3),
                "min_s": round(min(t), 3),
                "max_s": round(max(t), 3),
                "cpu_median_s": round(statistics.median(cpu[label]), 3),
                "slowest_imports": [
                    {"module": m, "cumulative_s": round(c, 3)} for m, c in imports.get(label, [])
                ],
            }
            for label, t in times.items()
        },
    }
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['machine']}, python {result['python']}; {args.repeat} runs each; load {result['load_avg']}"
    )
    for label, v in result["versions"].items():
        print(
            f"{label}: launch to first request, median {v['median_s']} s (min {v['min_s']}, max {v['max_s']}); "
            f"CPU of the whole one-sample run, median {v['cpu_median_s']} s"
        )
        for imp in v["slowest_imports"]:
            print(f"  {imp['cumulative_s']:7.3f} s  {imp['module']}")


if __name__ == "__main__":
    main()
