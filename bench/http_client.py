"""The judge's HTTP client alone: N POSTs at C in flight against the loopback server, CPU per request.

The loopback OpenAI-compatible server of the tests (``tests/helpers/server.py``, no latency) runs in
its own process; each client runs in a fresh process of its own, which POSTs ``--requests`` chat
requests (a body of about 2 KB, the size of a judge's verdicts prompt) with ``--concurrency`` in
flight and parses each JSON reply. The CPU time (user + system) of that process is read from the
operating system when it exits, so interpreter start-up and the client's imports are included;
the process also notes its own CPU after the imports, to split the two. Clients:

- ``aiohttp``: ragmeter's client, :class:`ragmeter.judges.providers.aiohttp_client.AiohttpClient`,
  as the provider uses it (``post`` of a parsed ``Target``).
- ``aiohttp-bare``: an ``aiohttp.ClientSession`` used directly (no cap on connections, no cookies):
  what ragmeter's wrapper adds is the difference.
- ``hand-written``: the HTTP/1.1 client on asyncio transports and ``h11`` that ragmeter had before
  (``judges/providers/netstream.py``), loaded from the git history into a temporary module: ``git
  show COMMIT:src/ragmeter/judges/providers/netstream.py`` (``--netstream-commit``, default
  fc0c8c6, the last commit before it was removed); needs ``h11`` (``pip install h11``).
- ``httpx2``: ``httpx2.AsyncClient`` with the pool the provider used behind a proxy (no cap,
  connections kept 5 s); needs ``pip install httpx2``.

A client whose package is not installed is left out with a note. ``--repeat R`` runs every client R
times, alternately, and the table gives the median of each column: on a shared machine, compare
the clients within one run.

    python bench/http_client.py [--requests 3000] [--concurrency 64] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner_overhead import ServerProcess  # the loopback server in its own process

ROOT = Path(__file__).resolve().parents[1]

CLIENTS = ("aiohttp", "aiohttp-bare", "hand-written", "httpx2")
NEEDS = {"hand-written": "h11", "httpx2": "httpx2", "aiohttp-bare": "aiohttp", "aiohttp": "aiohttp"}
NETSTREAM = "src/ragmeter/judges/providers/netstream.py"
HEADERS = {
    "Accept": "application/json",
    "Accept-Encoding": "gzip, deflate",
    "Content-Type": "application/json",
    "Authorization": "Bearer not-needed",
    "User-Agent": "ragmeter-bench",
}


def _body(i: int) -> bytes:
    prompt = (
        "Decide for each statement whether the contexts support it.\n\nContexts:\n"
        + "\n".join(f"[{k}] Item {i} says the topic is important; it was written in {1900 + k}." for k in range(12))
        + "\n\nStatements:\n1. The item says the topic is important.\n2. It was written in 1950.\n\nOutput:"
    )
    body = {"model": "fake-model", "messages": [{"role": "user", "content": prompt}], "temperature": 0}
    return json.dumps(body).encode()


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def _drive(post: Any, n: int, concurrency: int) -> None:
    """``n`` calls of ``post(i)`` with ``concurrency`` in flight; each returns the reply's bytes."""
    next_i = iter(range(n))

    async def worker() -> None:
        for i in next_i:
            reply = json.loads(await post(i))
            if "choices" not in reply:
                raise SystemExit(f"not a chat completion: {reply}")

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def _run(name: str, url: str, n: int, concurrency: int, netstream_file: str | None) -> float:
    """Import the client, run it; returns the CPU seconds of this process after the imports."""
    chat = url + "/chat/completions"
    if name == "aiohttp":
        from ragmeter.judges.providers.aiohttp_client import AiohttpClient
        from ragmeter.judges.providers.http import parse_target, timeouts_for

        after_imports = _cpu()
        target, limits = parse_target(chat), timeouts_for(60.0)
        async with AiohttpClient(HEADERS) as client:

            async def post(i: int) -> bytes:
                return (await client.post(target, _body(i), limits)).content

            await _drive(post, n, concurrency)
    elif name == "aiohttp-bare":
        import aiohttp

        after_imports = _cpu()
        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=5.0)
        async with aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar()) as session:

            async def post(i: int) -> bytes:
                async with session.post(chat, data=_body(i), headers=HEADERS) as r:
                    return await r.read()

            await _drive(post, n, concurrency)
    elif name == "hand-written":
        assert netstream_file is not None
        spec = importlib.util.spec_from_file_location("netstream_handwritten", netstream_file)
        assert spec is not None and spec.loader is not None
        netstream = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = netstream  # its dataclasses look their module up
        spec.loader.exec_module(netstream)
        after_imports = _cpu()
        target, limits = netstream.parse_target(chat), netstream.Timeouts(60.0, 60.0, 60.0)
        async with netstream.JsonClient(HEADERS, lambda: None) as client:

            async def post(i: int) -> bytes:
                return bytes((await client.post(target, _body(i), limits)).content)

            await _drive(post, n, concurrency)
    elif name == "httpx2":
        import httpx2

        after_imports = _cpu()
        limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None, keepalive_expiry=5.0)
        async with httpx2.AsyncClient(headers=HEADERS, limits=limits, timeout=60.0, trust_env=False) as client:

            async def post(i: int) -> bytes:
                return (await client.post(chat, content=_body(i))).content

            await _drive(post, n, concurrency)
    else:
        raise SystemExit(f"unknown client {name!r}")
    return _cpu() - after_imports


def worker_main(args: argparse.Namespace) -> None:
    start = _cpu()
    wall = time.perf_counter()
    run_cpu = asyncio.run(_run(args.worker, args.url, args.requests, args.concurrency, args.netstream_file))
    print(json.dumps({"start_cpu_s": start, "run_cpu_s": run_cpu, "run_wall_s": time.perf_counter() - wall}))


def one(name: str, url: str, n: int, concurrency: int, netstream_file: str | None) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", name, "--url", url]
    cmd += ["--requests", str(n), "--concurrency", str(concurrency)]
    if netstream_file:
        cmd += ["--netstream-file", netstream_file]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{name} exited {status}:\n{err.read()[-2000:]}")
        inner = json.loads(out.read())
    total = usage.ru_utime + usage.ru_stime
    return {
        "client": name,
        "cpu_s": round(total, 3),
        "start_and_imports_cpu_s": round(total - inner["run_cpu_s"], 3),
        "run_cpu_s": round(inner["run_cpu_s"], 3),
        "run_wall_s": round(inner["run_wall_s"], 3),
        "ms_per_request": round(1000 * total / n, 3),
        "ms_per_request_run_only": round(1000 * inner["run_cpu_s"] / n, 3),
    }


def available(name: str) -> bool:
    return importlib.util.find_spec(NEEDS[name]) is not None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated, of: " + ", ".join(CLIENTS))
    ap.add_argument("--netstream-commit", default="fc0c8c6", help="where the hand-written client is read from")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--netstream-file", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker_main(args)
        return
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    skipped = {c: f"pip install {NEEDS[c]}" for c in clients if not available(c)}
    clients = [c for c in clients if c not in skipped]
    load_before = os.getloadavg()[0]
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
    with tempfile.TemporaryDirectory() as tmp:
        netstream_file = None
        if "hand-written" in clients:
            source = subprocess.run(
                ["git", "show", f"{args.netstream_commit}:{NETSTREAM}"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            netstream_file = str(Path(tmp) / "netstream_handwritten.py")
            Path(netstream_file).write_text(source, encoding="utf-8")
        with ServerProcess(0.0) as server:
            for _ in range(max(1, args.repeat)):
                for c in clients:
                    runs[c].append(one(c, server.url, args.requests, args.concurrency, netstream_file))
    rows = []
    for c, rs in runs.items():
        row: dict[str, Any] = {"client": c}
        for key in rs[0]:
            if key != "client":
                row[key] = round(statistics.median(r[key] for r in rs), 3)
        row["ms_per_request_range"] = [min(r["ms_per_request"] for r in rs), max(r["ms_per_request"] for r in rs)]
        rows.append(row)
    result = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_avg": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "requests": args.requests,
        "concurrency": args.concurrency,
        "repeat": args.repeat,
        "netstream_commit": args.netstream_commit,
        "skipped": skipped,
        "clients": rows,
        "runs": runs,
    }
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['machine']}, python {result['python']}, {result['cpus']} CPUs, load {result['load_avg']}; "
        f"{args.requests} POSTs at {args.concurrency} in flight, medians of {args.repeat}"
    )
    print(
        "| client | CPU ms per request, all (range) | of it start-up and imports, s | CPU ms per request, "
        "requests only | wall s of the requests |"
    )
    print("|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["ms_per_request_range"]
        print(
            f"| {r['client']} | {r['ms_per_request']} ({lo}-{hi}) | {r['start_and_imports_cpu_s']} "
            f"| {r['ms_per_request_run_only']} | {r['run_wall_s']} |"
        )
    for c, how in skipped.items():
        print(f"left out: {c} ({how})")


if __name__ == "__main__":
    main()
