"""Runner overhead through the CLI, start-up included, against the loopback server.

For each (latency, concurrency) it writes N samples to a JSONL file and runs, as a user would::

    ragmeter evaluate data.jsonl --judge openai-compatible:fake-model --base-url URL \
        --metrics faithfulness,answer_relevance,context_precision,context_recall \
        --concurrency C --no-cache --no-progress --json --out DIR

in a fresh process (so interpreter start-up, imports, loading the local embedder that answer
relevance needs, the run store and the report are all in the wall time). The loopback
OpenAI-compatible server of the tests runs in its own process. ``ratio`` is wall time over the
ideal ``requests x latency / C``: 1.0 would be an endpoint whose C slots never idle and a runner
that costs nothing. At 0 ms latency there is no ideal; the figure is the whole loop's own cost.
``CPU ms/request`` is the CLI process's CPU time (user + system, start-up, the local embedder and
the report included) over the requests the server saw.

The goals (docs/performance.md): wall time <= 1.2x the ideal at 200 ms and 16 in flight, <= 1.1x
at 1 s and 64 in flight (``--latency 0.2 --concurrency 16``, ``--latency 1 --concurrency 64``), and
<= 5 ms of CPU per judge request at 64 in flight.

Where the wall time goes, from the server's clock: ``to 1st request`` (launch to the first request:
start-up, loading the data, the run store), ``busy`` (first request to last reply) with the mean
number of requests in flight over it (time-weighted; C would keep every slot full), and ``after
last reply`` (the last job's parsing and scoring, the store's last commit, the report, exit).
A second table splits the busy window's time over its floor (``ceil(requests / C)`` waves of the
latency) from the server's timeline: the first hop, the later hops, the last wave's spread, and
the server's own delay (:func:`wave_timing`).

    python bench/runner_overhead.py [--samples 200] [--concurrency 16,64] [--latency 0,0.2]
                                    [--pairs 0.2:16,1:64] [--metrics M1,M2] [--repeat 5]
                                    [--extra "--judge-concurrency 8"] [--baseline SRC] [--json]

``--pairs LATENCY:CONCURRENCY,...`` runs just those pairs instead of every latency with every
concurrency (``--pairs 0.2:16,1:64`` for the two goals).

``--baseline SRC`` runs another checkout's code (e.g. ``../main/src``) alternately with this one.
``--repeat N`` runs each configuration N times (alternately with the baseline) and adds a line per
configuration with the median of each column: on a noisy machine, read the medians.

Run it in an environment installed as a user's would be (``pip install .``, no test extras), so that
start-up imports what a user's does.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_runs import env_for, ragmeter_cmd, versions

SERVER = Path(__file__).resolve().parents[1] / "tests" / "helpers" / "server.py"
METRICS = "faithfulness,answer_relevance,context_precision,context_recall"


def rows(n: int) -> list[dict[str, object]]:
    return [
        {
            "question": f"What does item {i} say?",
            "contexts": [
                f"Item {i} says the topic is important. It was written in {1900 + i}.",
                f"Item {i + 1} is about something else entirely.",
            ],
            "answer": f"Item {i} says the topic is important. It was written in {1900 + i}.",
            "reference": f"Item {i} calls the topic important; it dates from {1900 + i}.",
        }
        for i in range(n)
    ]


class ServerProcess:
    """The loopback server in its own process, so its threads do not share the runner's GIL."""

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--latency", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def __enter__(self) -> ServerProcess:
        return self

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/stats") as r:  # loopback only
            return dict(json.loads(r.read()))

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def one(
    latency: float, concurrency: int, n: int, data: Path, extra: list[str], src: str | None, metrics: str
) -> dict[str, Any]:
    with ServerProcess(latency) as server, tempfile.TemporaryDirectory() as out:
        cmd = [
            *ragmeter_cmd(),
            "evaluate",
            str(data),
            "--judge",
            "openai-compatible:fake-model",
            "--base-url",
            server.url,
            "--metrics",
            metrics,
            "--concurrency",
            str(concurrency),
            "--no-cache",
            "--no-progress",
            "--json",
            "--out",
            out,
            *extra,
        ]
        with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
            launched_at = time.time()
            start = time.perf_counter()
            proc = subprocess.Popen(
                cmd, stdout=stdout, stderr=stderr, text=True, env=env_for(src, OPENAI_API_KEY="x")
            )
            _, status, usage = os.wait4(proc.pid, 0)  # this child's own CPU time
            wall = time.perf_counter() - start
            exited_at = launched_at + wall
            stdout.seek(0)
            stderr.seek(0)
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"ragmeter exited {status}:\n{stderr.read()[-2000:]}")
            report = json.loads(stdout.read())
        stats = server.stats()
    for name, m in report["metrics"].items():
        if m["n_scored"] != n:
            raise SystemExit(f"{name}: {m['n_scored']} of {n} scored: {m}")
    requests = int(stats["total_requests"])
    ideal = requests * latency / concurrency
    waves = wave_timing(stats.get("timeline") or [], latency, concurrency)
    first, last = float(stats["first_request_at"]), float(stats["last_reply_at"])
    busy = last - first
    return {
        "latency_ms": round(latency * 1000),
        "concurrency": concurrency,
        "samples": n,
        "requests": requests,
        "peak_in_flight": stats["peak_in_flight"],
        "mean_in_flight": round(stats["in_flight_s"] / busy, 1) if busy > 0 else None,
        "wall_s": round(wall, 3),
        "to_first_request_s": round(first - launched_at, 3),
        "busy_s": round(busy, 3),
        "after_last_reply_s": round(exited_at - last, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "cpu_ms_per_request": round(1000 * (usage.ru_utime + usage.ru_stime) / requests, 2) if requests else None,
        "server_cpu_s": round(stats["process_cpu_s"], 2),
        "ideal_s": round(ideal, 3),
        "ratio": round(wall / ideal, 3) if ideal else None,
        "requests_per_s": round(requests / wall, 1),
        **waves,
    }


def wave_timing(timeline: list[Any], latency: float, concurrency: int) -> dict[str, Any]:
    """Where the busy window goes over its floor (``ceil(requests / C)`` waves of ``latency``),
    from the server's timeline (each request's arrival and reply). With every slot busy, request
    ``n + C`` is the one the ``n``-th reply set free, so the n-th request of each wave lies on one
    chain of ``C`` slots: ``first hop`` is how much later than ``latency`` the second wave's first
    request left after the first wave's first (the first replies' one-time costs), ``later hops``
    the mean of the same for the waves after, ``last wave spread`` how long the last wave took to
    leave (its last request's reply ends the run), ``server late`` the server's own median delay
    over ``latency`` in replying (not the client's). Empty at 0 ms or with one wave."""
    arrivals = sorted(float(t[0]) for t in timeline)
    if latency <= 0 or len(arrivals) <= concurrency:
        return {}
    starts = arrivals[::concurrency]
    hops = [1000 * (b - a - latency) for a, b in itertools.pairwise(starts)]
    last = arrivals[(len(arrivals) - 1) // concurrency * concurrency :]
    late = [1000 * (float(t[1]) - float(t[0]) - latency) for t in timeline]
    return {
        "first_hop_ms": round(hops[0], 1),
        "later_hops_ms": round(statistics.mean(hops[1:]), 1) if len(hops) > 1 else None,
        "last_wave_spread_ms": round(1000 * (last[-1] - last[0]), 1),
        "server_late_ms": round(statistics.median(late), 2),
    }


def median_row(label: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each numeric column's median over ``rows`` (runs of one configuration)."""
    out: dict[str, Any] = {"code": f"{label}, median of {len(rows)}"}
    for key, value in rows[0].items():
        if key == "code":
            continue
        values = [r[key] for r in rows if r[key] is not None]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and values:
            m = statistics.median(values)
            out[key] = values[0] if len(set(values)) == 1 else round(m, 3)
        else:
            out[key] = value
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--concurrency", default="16,64", help="comma-separated values")
    ap.add_argument("--latency", default="0,0.2", help="comma-separated seconds")
    ap.add_argument("--pairs", default=None, help="LATENCY:CONCURRENCY pairs, e.g. '0.2:16,1:64'")
    ap.add_argument("--metrics", default=METRICS, help=f"comma-separated (default {METRICS})")
    ap.add_argument("--extra", default="", help="extra CLI options, e.g. '--judge-concurrency 8'")
    ap.add_argument("--baseline", metavar="SRC", help="also run this checkout's src/, alternately")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each configuration (medians added)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    extra = shlex.split(args.extra)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows(args.samples)), encoding="utf-8")
        if args.pairs:
            pairs = [(float(lat), int(conc)) for lat, conc in (p.split(":") for p in args.pairs.split(","))]
        else:
            pairs = [
                (float(lat), int(conc)) for lat in args.latency.split(",") for conc in args.concurrency.split(",")
            ]
        for latency, conc in pairs:
            runs: dict[str, list[dict[str, Any]]] = {}
            for _ in range(max(1, args.repeat)):
                for label, src in versions(args.baseline):
                    r = {"code": label, **one(latency, conc, args.samples, data, extra, src, args.metrics)}
                    results.append(r)
                    runs.setdefault(label, []).append(r)
            if args.repeat > 1:
                results.extend(median_row(label, rs) for label, rs in runs.items())
    machine = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_avg": round(os.getloadavg()[0], 1),
    }
    if args.json:
        print(json.dumps({**machine, "metrics": args.metrics, "results": results}))
        return
    print(f"{machine}, samples {args.samples}, metrics {args.metrics}, extra {extra or 'none'}")
    print(
        "| code | latency | concurrency | requests | in flight: peak / mean | wall s | to 1st request s "
        "| busy s | after last reply s | CPU s | CPU ms/request | ideal s | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        print(
            f"| {r['code']} | {r['latency_ms']} ms | {r['concurrency']} | {r['requests']} "
            f"| {r['peak_in_flight']} / {r['mean_in_flight']} | {r['wall_s']} | {r['to_first_request_s']} "
            f"| {r['busy_s']} | {r['after_last_reply_s']} | {r['cpu_s']} | {r['cpu_ms_per_request']} "
            f"| {r['ideal_s']} | {ratio} |"
        )
    timed = [r for r in results if r.get("first_hop_ms") is not None]
    if timed:
        print("\nThe busy window over its floor, from the server's timeline (`wave_timing`):\n")
        print("| code | latency | concurrency | first hop ms | later hops ms (mean) | last wave spread ms | server late ms |")
        print("|---|---|---|---|---|---|---|")
        for r in timed:
            print(
                f"| {r['code']} | {r['latency_ms']} ms | {r['concurrency']} | {r['first_hop_ms']} "
                f"| {r['later_hops_ms']} | {r['last_wave_spread_ms']} | {r['server_late_ms']} |"
            )


if __name__ == "__main__":
    main()
