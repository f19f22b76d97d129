"""A large judge-free run through the CLI: time, peak memory and run-store size.

Generates N rows deterministically (seeded; question, three contexts, an answer and a reference of
realistic length, English), writes them to a JSONL file and runs, in a fresh process::

    ragmeter evaluate data.jsonl --metrics token_f1,rouge_l,bleu,exact_match \
        --out DIR --no-progress --json

It reports the wall time (start-up included), the CPU time and the peak resident memory of that
process, the size of the run store (``runs.sqlite`` plus its WAL) and the bytes of sample text
in the input, so "text held once" can be read off the store size.

``--baseline SRC`` runs another checkout's code (e.g. ``../main/src``) on the same file first.

    python bench/large_run.py [--rows 20000] [--metrics ...] [--baseline SRC] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_runs import env_for, ragmeter_cmd, versions

METRICS = "token_f1,rouge_l,bleu,exact_match"

_WORDS = (
    "the river city bridge was built in century by engineers who used stone and iron to span wide "
    "valley trade grew after railway opened north station market people moved from farms into new "
    "houses along canal factory produced cloth paper glass tools for export harbour ships carried goods "
    "across sea council voted to expand school library hospital park museum during long years of growth"
).split()


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def make_rows(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` deterministic rows; the answer shares about half its words with the reference."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        reference = " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(2))
        ref_words = reference.split()
        answer_words = [w if rng.random() < 0.5 else rng.choice(_WORDS) for w in ref_words]
        out.append(
            {
                "id": f"q{i}",
                "question": _sentence(rng, rng.randint(6, 12)).rstrip(".") + "?",
                "contexts": [
                    " ".join(_sentence(rng, rng.randint(10, 20)) for _ in range(3)) for _ in range(3)
                ],
                "answer": " ".join(answer_words),
                "reference": reference,
            }
        )
    return out


def run(data: Path, out: Path, metrics: str, src: str | None) -> dict[str, Any]:
    cmd = [
        *ragmeter_cmd(),
        "evaluate",
        str(data),
        "--metrics",
        metrics,
        "--no-progress",
        "--json",
        "--out",
        str(out),
    ]
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, text=True, env=env_for(src))
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own CPU time and peak RSS
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"ragmeter exited {proc.returncode}:\n{stderr.read()[-2000:]}")
        report = json.loads(stdout.read())
    store = sum(p.stat().st_size for p in out.glob("runs.sqlite*"))
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # KiB on Linux
        "store_mb": round(store / 1e6, 1),
        "n_samples": report["n_samples"],
        "scored": {k: v["n_scored"] for k, v in report["metrics"].items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--metrics", default=METRICS)
    ap.add_argument("--baseline", metavar="SRC", help="run this checkout's src/ first, for a ratio")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.jsonl"
        rows = make_rows(args.rows)
        with data.open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        text_bytes = sum(
            len(r["question"].encode())
            + len(r["answer"].encode())
            + len(r["reference"].encode())
            + sum(len(c.encode()) for c in r["contexts"])
            for r in rows
        )
        del rows
        for label, src in versions(args.baseline):
            results[label] = run(data, Path(tmp) / f"runs-{label}", args.metrics, src)
    info = {
        "rows": args.rows,
        "metrics": args.metrics,
        "input_mb": round(text_bytes / 1e6, 1),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_avg": round(os.getloadavg()[0], 1),
    }
    if args.json:
        print(json.dumps({**info, "versions": results}))
        return
    print(
        f"{info['machine']}, python {info['python']}; {args.rows} rows x {args.metrics}; "
        f"sample text {info['input_mb']} MB; load {info['load_avg']}"
    )
    print("| code | wall s | CPU s | peak RSS MB | store MB |")
    print("|---|---|---|---|---|")
    for label, r in results.items():
        print(f"| {label} | {r['wall_s']} | {r['cpu_s']} | {r['peak_rss_mb']} | {r['store_mb']} |")


if __name__ == "__main__":
    main()
