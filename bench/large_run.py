"""A large judge-free run through the CLI: time, peak memory and run-store size.

Generates N rows deterministically (seeded, English), writes them to a data file and runs, in a
fresh process::

    ragmeter evaluate data.jsonl --metrics token_f1,rouge_l,bleu,exact_match \
        --out DIR --no-progress --json

It reports the wall time (start-up included) and rows per second over it, the CPU time and the
peak resident memory of that process, the size of the run store (``runs.sqlite`` plus its WAL)
and its bytes per row, and the size of the input file.

Rows (``--size``):

- ``short``: a question, three contexts of three sentences, a 16-32-word answer and reference
  (about 1.2 KB of JSON a row);
- ``wikieval``: WikiEval-sized, about 6 KB a row: a question, three contexts of about 1.7 KB
  each (a Wikipedia lead section), a 60-90-word answer and reference.

``--context-pool K`` draws every context from K distinct passages (as a retriever over a corpus
of K chunks does: the same passage comes back for many questions); 0 (the default) makes every
context of every row distinct, the worst case for the store.

``--rows`` takes a comma-separated list (``5000,20000,100000``): each size is run in turn, and
with ``--baseline SRC`` another checkout's code (e.g. ``../main/src``) runs on the same file just
before this code, so the two compare by ratio on a shared, noisy machine.

    python bench/large_run.py [--rows 20000] [--size short|wikieval] [--context-pool K]
        [--format jsonl|csv|parquet] [--metrics ...] [--baseline SRC] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_runs import env_for, ragmeter_cmd, versions

METRICS = "token_f1,rouge_l,bleu,exact_match"
SIZES = ("short", "wikieval")
FORMATS = ("jsonl", "csv", "parquet")

_WORDS = (
    "the river city bridge was built in century by engineers who used stone and iron to span wide "
    "valley trade grew after railway opened north station market people moved from farms into new "
    "houses along canal factory produced cloth paper glass tools for export harbour ships carried goods "
    "across sea council voted to expand school library hospital park museum during long years of growth"
).split()


def _sentence(rng: random.Random, n: int) -> str:
    words = rng.choices(_WORDS, k=n)
    return " ".join(words).capitalize() + "."


def _passage(rng: random.Random, size: str) -> str:
    if size == "short":
        return " ".join(_sentence(rng, rng.randint(10, 20)) for _ in range(3))
    return " ".join(_sentence(rng, rng.randint(14, 26)) for _ in range(14))  # ~1.7 KB


def iter_rows(n: int, seed: int = 7, *, size: str = "short", context_pool: int = 0) -> Iterator[dict[str, Any]]:
    """``n`` deterministic rows; the answer shares about half its words with the reference.
    ``context_pool`` > 0: contexts are drawn from that many distinct passages."""
    rng = random.Random(seed)
    pool_rng = random.Random(seed + 1)
    pool = [_passage(pool_rng, size) for _ in range(context_pool)]
    ref_sentences = (2, 8, 16) if size == "short" else (5, 12, 18)
    for i in range(n):
        k, lo, hi = ref_sentences
        reference = " ".join(_sentence(rng, rng.randint(lo, hi)) for _ in range(k))
        ref_words = reference.split()
        answer_words = [w if rng.random() < 0.5 else rng.choice(_WORDS) for w in ref_words]
        contexts = [rng.choice(pool) if pool else _passage(rng, size) for _ in range(3)]
        yield {
            "id": f"q{i}",
            "question": _sentence(rng, rng.randint(6, 12)).rstrip(".") + "?",
            "contexts": contexts,
            "answer": " ".join(answer_words),
            "reference": reference,
        }


def make_rows(n: int, seed: int = 7, *, size: str = "short", context_pool: int = 0) -> list[dict[str, Any]]:
    """``n`` deterministic rows (see :func:`iter_rows`) as a list."""
    return list(iter_rows(n, seed, size=size, context_pool=context_pool))


def write_data(path: Path, rows: Iterator[dict[str, Any]], fmt: str) -> dict[str, int]:
    """Write ``rows`` to ``path`` in ``fmt``; return the row count and the bytes of sample text."""
    n = text = 0

    def counted() -> Iterator[dict[str, Any]]:
        nonlocal n, text
        for r in rows:
            n += 1
            text += sum(len(r[k].encode()) for k in ("question", "answer", "reference"))
            text += sum(len(c.encode()) for c in r["contexts"])
            yield r

    if fmt == "jsonl":
        with path.open("w", encoding="utf-8") as f:
            for r in counted():
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        with path.open("w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["id", "question", "contexts", "answer", "reference"])
            for r in counted():
                contexts = json.dumps(r["contexts"], ensure_ascii=False)
                writer.writerow([r["id"], r["question"], contexts, r["answer"], r["reference"]])
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema(
            [
                ("id", pa.string()),
                ("question", pa.string()),
                ("contexts", pa.list_(pa.string())),
                ("answer", pa.string()),
                ("reference", pa.string()),
            ]
        )
        with pq.ParquetWriter(path, schema) as writer:
            group: list[dict[str, Any]] = []
            for r in counted():
                group.append(r)
                if len(group) == 5000:  # a row group of 5,000 rows (about 30 MB of text)
                    writer.write_table(pa.Table.from_pylist(group, schema=schema))
                    group = []
            if group:
                writer.write_table(pa.Table.from_pylist(group, schema=schema))
    return {"rows": n, "text_bytes": text}


def _write(path: Path, n: int, size: str, context_pool: int, fmt: str, result: Any) -> None:
    result.update(write_data(path, iter_rows(n, size=size, context_pool=context_pool), fmt))


def write_apart(path: Path, n: int, size: str, context_pool: int, fmt: str) -> dict[str, int]:
    """:func:`write_data` in a process of its own: Linux carries a process's peak RSS over to the
    programs it starts (``ru_maxrss`` survives ``exec``), so the bench process stays small for each
    run's peak to be the run's own."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        result = manager.dict()
        proc = ctx.Process(target=_write, args=(path, n, size, context_pool, fmt, result))
        proc.start()
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"writing the data failed (exit code {proc.exitcode})")
        return dict(result)


def run(data: Path, out: Path, metrics: str, src: str | None, n_rows: int) -> dict[str, Any]:
    parent_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
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
    if usage.ru_maxrss <= parent_kib:
        raise SystemExit("the run's peak RSS is not above this bench process's own: it cannot be told apart")
    scored = {k: v["n_scored"] for k, v in report["metrics"].items()}
    if report["n_samples"] != n_rows or any(v != n_rows for v in scored.values()):
        raise SystemExit(f"not every row was scored: {report['n_samples']} samples, {scored}")
    return {
        "wall_s": round(wall, 2),
        "rows_per_s": round(n_rows / wall),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # KiB on Linux
        "store_mb": round(store / 1e6, 1),
        "store_bytes_per_row": round(store / n_rows),
        "n_samples": report["n_samples"],
        "scored": scored,
        "means": {k: v["mean"] for k, v in report["metrics"].items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="20000", help="rows, or a comma-separated list of row counts")
    ap.add_argument("--size", choices=SIZES, default="short")
    ap.add_argument("--context-pool", type=int, default=0, metavar="K", help="distinct passages (0: all distinct)")
    ap.add_argument("--format", choices=FORMATS, default="jsonl")
    ap.add_argument("--metrics", default=METRICS)
    ap.add_argument("--baseline", metavar="SRC", help="run this checkout's src/ first, for a ratio")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sizes = [int(r) for r in str(args.rows).split(",") if r.strip()]
    runs: list[dict[str, Any]] = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / f"data.{args.format}"
            written = write_apart(data, n, args.size, args.context_pool, args.format)
            entry: dict[str, Any] = {
                "rows": n,
                "input_mb": round(data.stat().st_size / 1e6, 1),
                "text_mb": round(written["text_bytes"] / 1e6, 1),
                "load_avg": round(os.getloadavg()[0], 1),
                "versions": {},
            }
            for label, src in versions(args.baseline):
                entry["versions"][label] = run(data, Path(tmp) / f"runs-{label}", args.metrics, src, n)
            if args.baseline:
                a, b = entry["versions"]["baseline"]["means"], entry["versions"]["this"]["means"]
                entry["same_means"] = all(abs(a[m] - b[m]) < 1e-12 for m in a)
            runs.append(entry)
    info = {
        "size": args.size,
        "context_pool": args.context_pool,
        "format": args.format,
        "metrics": args.metrics,
        "machine": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    if args.json:
        print(json.dumps({**info, "runs": runs}))
        return
    pool = f"{args.context_pool} distinct contexts" if args.context_pool else "every context distinct"
    print(
        f"{info['machine']}, python {info['python']}, {info['cpus']} CPUs, {info['date']}; "
        f"{args.size} rows ({pool}), {args.format}; metrics {args.metrics}"
    )
    print("| rows | input MB | load | code | wall s | rows/s | CPU s | peak RSS MB | store MB | store B/row |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for e in runs:
        for label, r in e["versions"].items():
            print(
                f"| {e['rows']} | {e['input_mb']} | {e['load_avg']} | {label} | {r['wall_s']} | {r['rows_per_s']} | "
                f"{r['cpu_s']} | {r['peak_rss_mb']} | {r['store_mb']} | {r['store_bytes_per_row']} |"
            )
        if "same_means" in e:
            print(f"(rows {e['rows']}: means equal in both: {e['same_means']})")


if __name__ == "__main__":
    main()
