"""Peak memory of the readers on a large file: do they stream?

Writes a JSONL, a CSV and a Parquet file of ROWS rows (question, answer, one context; about 110
bytes a row; the Parquet file in row groups of 100,000 rows), then, each in a fresh interpreter,
measures the peak resident set size (``ru_maxrss``) above the interpreter's own after imports while:

- ``read_jsonl`` / ``read_csv`` / ``read_parquet`` yield every record (the reader alone: a stream
  holds one row, or one Parquet record batch; pyarrow is imported before the baseline is taken);
- ``SampleStream`` (JSONL) validates every row into a sample, keys and hashes it and checks it for
  a repeated id, holding none (what it remembers of earlier rows in a temporary file): what a
  run's intake reads its data through (the run then writes each chunk to its store);
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
from ragmeter.dataset.readers import read_csv, read_jsonl, read_parquet
from ragmeter.dataset import load_dataset
from ragmeter.dataset.sources import SampleStream
from ragmeter.dataset.seen import SpilledSeen
kind, path = sys.argv[1], Path(sys.argv[2])
if path.suffix == ".parquet":
    import pyarrow.parquet  # the library's own memory is not the reader's
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
n = 0
if kind == "load_dataset":
    n = len(load_dataset(path))
elif kind == "stream":
    stream = SampleStream(path, seen=SpilledSeen())  # as a run with a store reads its data
    for _item in stream:
        n += 1
    stream.content_hash()
else:
    reader = {".jsonl": read_jsonl, ".csv": read_csv, ".parquet": read_parquet}[path.suffix]
    for _row, _record in reader(path, str(path)):
        n += 1
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(n, (peak - base) / 1024.0, time.perf_counter() - start)
"""


def write_files(directory: Path, rows: int) -> tuple[Path, Path, Path]:
    jsonl, csv_path, parquet = directory / "big.jsonl", directory / "big.csv", directory / "big.parquet"
    with jsonl.open("w", encoding="utf-8") as fj, csv_path.open("w", encoding="utf-8") as fc:
        fc.write("id,question,answer,contexts\n")
        for i in range(rows):
            q, a, c = f"What is item {i}?", f"Item {i} is a red box.", f"Item {i} is a red box in room {i % 97}."
            fj.write(json.dumps({"id": i, "question": q, "answer": a, "contexts": [c]}) + "\n")
            fc.write(f'{i},{q},{a},"[""{c}""]"\n')
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [("id", pa.int64()), ("question", pa.string()), ("answer", pa.string()), ("contexts", pa.list_(pa.string()))]
    )
    with pq.ParquetWriter(parquet, schema) as writer:
        for start in range(0, rows, 100_000):
            ids = range(start, min(rows, start + 100_000))
            writer.write_table(
                pa.table(
                    {
                        "id": list(ids),
                        "question": [f"What is item {i}?" for i in ids],
                        "answer": [f"Item {i} is a red box." for i in ids],
                        "contexts": [[f"Item {i} is a red box in room {i % 97}."] for i in ids],
                    },
                    schema=schema,
                )
            )
    return jsonl, csv_path, parquet


def write_apart(directory: Path, rows: int) -> tuple[Path, Path, Path]:
    """:func:`write_files` in a process of its own: Linux carries a process's peak RSS over to the
    programs it starts, so this one stays small for the children's peaks to be their own."""
    import multiprocessing

    proc = multiprocessing.get_context("spawn").Process(target=write_files, args=(directory, rows))
    proc.start()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"writing the files failed (exit code {proc.exitcode})")
    return directory / "big.jsonl", directory / "big.csv", directory / "big.parquet"


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
        jsonl, csv_path, parquet = write_apart(Path(tmp), args.rows)
        results = {
            "rows": args.rows,
            "jsonl_mib": round(jsonl.stat().st_size / 2**20, 1),
            "csv_mib": round(csv_path.stat().st_size / 2**20, 1),
            "parquet_mib": round(parquet.stat().st_size / 2**20, 1),
            "write_seconds": round(time.perf_counter() - started, 1),
            "read_jsonl": measure("reader", jsonl),
            "read_csv": measure("reader", csv_path),
            "read_parquet": measure("reader", parquet),
            "sample_stream_jsonl": measure("stream", jsonl),
            "load_dataset_jsonl": measure("load_dataset", jsonl),
        }
    if args.json:
        print(json.dumps(results))
        return
    print(
        f"{args.rows} rows: JSONL {results['jsonl_mib']} MiB, CSV {results['csv_mib']} MiB, "
        f"Parquet {results['parquet_mib']} MiB"
    )
    for key in ("read_jsonl", "read_csv", "read_parquet", "sample_stream_jsonl", "load_dataset_jsonl"):
        r = results[key]
        print(f"  {key:20s} peak RSS +{r['peak_rss_growth_mib']:7.1f} MiB  {r['seconds']:6.1f} s  ({r['rows']} rows)")


if __name__ == "__main__":
    main()
