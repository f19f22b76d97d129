"""Start-up of ``ragmeter evaluate`` with an LLM judge: process launch to the judge's first request.

Starts the loopback OpenAI-compatible server of the tests in this process, then runs, several
times in a fresh process each::

    ragmeter evaluate data.jsonl --judge openai-compatible:fake-model --base-url URL \
        --metrics faithfulness --no-cache --no-progress --out DIR

and records when the server sees the first request. The figure is the median (and min/max) of the
launch-to-first-request times. ``--importtime`` also prints the slowest imports of the CLI on that
path (``python -X importtime``), cumulative, to show what start-up still spends its time on.

    python bench/startup.py [--repeat 7] [--importtime] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

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


def cli(url: str, data: Path, out: str, *prefix: str) -> list[str]:
    return [
        sys.executable,
        *prefix,
        "-m",
        "ragmeter",
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


def one(data: Path) -> float:
    responder = FirstRequest()
    env = {**os.environ, "OPENAI_API_KEY": "loopback"}
    with FakeOpenAIServer(responder=responder) as server, tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        proc = subprocess.run(
            cli(server.url, data, out), capture_output=True, text=True, env=env, check=False
        )
        if proc.returncode != 0:
            raise SystemExit(f"ragmeter exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    if responder.first is None:
        raise SystemExit("the judge sent no request")
    return responder.first - start


def slowest_imports(data: Path, top: int = 15) -> list[tuple[str, float]]:
    """The ``top`` imports with the largest cumulative time, on the path to the first request."""
    env = {**os.environ, "OPENAI_API_KEY": "loopback"}
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
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.jsonl"
        data.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
        times = [one(data) for _ in range(args.repeat)]
        imports = slowest_imports(data) if args.importtime else []
    result = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "repeat": args.repeat,
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "slowest_imports": [{"module": m, "cumulative_s": round(s, 3)} for m, s in imports],
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['machine']}, python {result['python']}; {args.repeat} runs")
    print(
        f"launch to first request: median {result['median_s']} s (min {result['min_s']}, max {result['max_s']})"
    )
    for m, s in imports:
        print(f"  {s:7.3f} s  {m}")


if __name__ == "__main__":
    main()
