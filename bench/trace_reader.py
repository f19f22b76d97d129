"""The trace file reader on large files: speed, and whether its memory stays bounded.

Writes OTLP JSON files of TRACES RAG traces (an OpenInference CHAIN root, a RETRIEVER span with 3
documents of ~300 characters, an LLM span with messages and token counts: 3 spans, ~4.6 KB a
trace), exported as a batching exporter sends them: 16 traces' spans a line, each trace's spans
split over two consecutive lines (its children on one, its root on the next). Then, each in a
fresh interpreter, measures the peak resident set size (``ru_maxrss``) above the interpreter's
own after imports and a warm-up read of a small file, while ``read_traces`` yields every item
(the reader alone: no Dataset kept), and, in a second run under ``tracemalloc``, the peak of the
Python heap during the read; and the wall time (of the first run). Run for two sizes: a streaming
reader's peak does not grow with the file beyond its index (one dict entry per trace).

Usage: python bench/trace_reader.py [--traces 2000 20000] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.otlp import export, rag_trace

CHILD = r"""
import resource, sys, time, tracemalloc
from pathlib import Path
from ragmeter.traces.reader import read_traces
path, warm = Path(sys.argv[1]), Path(sys.argv[2])
for _ in read_traces(warm, str(warm)):  # imports and one-time allocations happen before the baseline
    pass
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
traced = sys.argv[3] == "traced"
if traced:
    tracemalloc.start()
start = time.perf_counter()
samples = problems = 0
for _row, item in read_traces(path, str(path)):
    if isinstance(item, dict):
        samples += 1
    else:
        problems += 1
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
peak = tracemalloc.get_traced_memory()[1] / 2**20 if traced else (rss - base) / 1024.0
print(samples, problems, peak, seconds)
"""

PER_LINE = 16


def write_file(path: Path, n_traces: int) -> int:
    doc = "Retrieved passage number {} about topic {}: " + "lorem ipsum dolor sit amet " * 10
    pending_roots: list[dict] = []
    with path.open("w", encoding="utf-8") as fh:
        for start in range(0, n_traces, PER_LINE):
            spans: list[dict] = list(pending_roots)
            pending_roots = []
            for t in range(start, min(start + PER_LINE, n_traces)):
                child_a, child_b, root = rag_trace(
                    t + 1, f"What is item {t}?", [doc.format(k, t) for k in range(3)], f"Item {t} is a box."
                )
                spans += [child_a, child_b]
                pending_roots.append(root)
            fh.write(json.dumps(export(*spans)) + "\n")
        fh.write(json.dumps(export(*pending_roots)) + "\n")
    return path.stat().st_size


def _run(path: Path, warm: Path, mode: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(warm), mode], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def measure(path: Path, warm: Path) -> dict[str, float]:
    samples, problems, mib, seconds = _run(path, warm, "rss")
    traced_mib = _run(path, warm, "traced")[2]
    return {
        "samples": int(samples),
        "problems": int(problems),
        "peak_rss_growth_mib": round(float(mib), 1),
        "traced_peak_mib": round(float(traced_mib), 1),
        "seconds": round(float(seconds), 2),
        "traces_per_s": round(int(samples) / float(seconds)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--traces", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm.otlp.jsonl"
        write_file(warm, 2 * PER_LINE)
        for n in args.traces:
            path = Path(tmp) / f"t{n}.otlp.jsonl"
            size = write_file(path, n)
            t0 = time.perf_counter()
            row = {"traces": n, "file_mb": round(size / 1e6, 1), **measure(path, warm)}
            row["wall_s"] = round(time.perf_counter() - t0, 1)
            results.append(row)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print("| traces | file MB | samples | peak RSS growth MiB | Python heap peak MiB | read s | traces/s |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['traces']} | {r['file_mb']} | {r['samples']} | {r['peak_rss_growth_mib']} | "
            f"{r['traced_peak_mib']} | {r['seconds']} | {r['traces_per_s']} |"
        )


if __name__ == "__main__":
    main()
