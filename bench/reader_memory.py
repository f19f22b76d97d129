"""Peak memory of the readers on a large file: do they stream?

Writes a JSONL and a CSV file of ROWS rows (question, answer, one context; about 110 bytes a row),
then, each in a fresh interpreter, measures the peak resident set size (``ru_maxrss``) above the
interpreter's own after imports while:

- ``read_jsonl`` / ``read_csv`` yield every record (the reader alone: a stream holds one row);
- ``load_dataset`` builds the whole :class:`Dataset` (which keeps every sample in memory, so it
  grows with the rows by design; measured for comparison).

Usage: python bench/reader_memory.py [--rows 1000000] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import resource, sys, time
from pathlib import Path
from ragmeter.dataset.readers import read_csv, read_jsonl
from ragmeter.dataset import load_dataset
kind, path = sys.argv[1], Path(sys.argv[2])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
n = 0
if kind == "load_dataset":
    n = len(load_dataset(path))
else:
    reader = read_jsonl if path.suffix == ".jsonl" else read_csv
    for _row, _record in reader(path, str(path)):
        n += 1
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(n, (peak - base) / 1024.0, time.perf_counter() - start)
"""


def write_files(directory: Path, rows: int) -> tuple[Path, Path]:
    jsonl, csv_path = directory / "big.jsonl", directory / "big.csv"
    with jsonl.open("w", encoding="utf-8") as fj, csv_path.open("w", encoding="utf-8") as fc:
        fc.write("id,question,answer,contexts\n")
        for i in range(rows):
            q, a, c = f"What is item {i}?", f"Item {i} is a red box.", f"Item {i} is a red box in room {i % 97}."
            fj.write(json.dumps({"id": i, "question": q, "answer": a, "contexts": [c]}) + "\n")
            fc.write(f'{i},{q},{a},"[""{c}""]"\n')
    return jsonl, csv_path


def measure(kind: str, path: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], capture_output=True, text=True, check=True)
    n, mib, seconds = out.stdout.split()
    return {"rows": int(n), "peak_rss_growth_mib": round(float(mib), 1), "seconds": round(float(seconds), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        jsonl, csv_path = write_files(Path(tmp), args.rows)
        results = {
            "rows": args.rows,
            "jsonl_mib": round(jsonl.stat().st_size / 2**20, 1),
            "csv_mib": round(csv_path.stat().st_size / 2**20, 1),
            "write_seconds": round(time.perf_counter() - started, 1),
            "read_jsonl": measure("reader", jsonl),
            "read_csv": measure("reader", csv_path),
            "load_dataset_jsonl": measure("load_dataset", jsonl),
        }
    if args.json:
        print(json.dumps(results))
        return
    print(f"{args.rows} rows: JSONL {results['jsonl_mib']} MiB, CSV {results['csv_mib']} MiB")
    for key in ("read_jsonl", "read_csv", "load_dataset_jsonl"):
        r = results[key]
        print(f"  {key:20s} peak RSS +{r['peak_rss_growth_mib']:7.1f} MiB  {r['seconds']:6.1f} s  ({r['rows']} rows)")


if __name__ == "__main__":
    main()
