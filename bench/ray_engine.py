"""The Ray engine against the local engine, on the same data, in this process.

Starts a local Ray (``--cpus`` CPUs, no dashboard), then scores the same rows with
``engine="local"`` and ``engine="ray"`` and reports wall time, samples/s and, for Ray,
samples/s per worker, the figure to multiply by a cluster's cores for an estimate. Two workloads:

- ``local-judge``: faithfulness, answer_relevance and context_relevance with the offline local
  judge (CPU-bound: embeddings), on generated English rows (a question, three contexts of three
  sentences, a two-sentence answer);
- ``lexical``: token_f1, rouge_l, bleu and exact_match (judge-free).

Ray's own start-up (``ray.init``) is reported apart, and each engine is run once before timing so
the embedding model is loaded in the workers and here alike.

    python bench/ray_engine.py [--rows 400] [--cpus 2] [--workload local-judge|lexical] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from large_run import make_rows

WORKLOADS = {
    "local-judge": ["faithfulness", "answer_relevance", "context_relevance"],
    "lexical": ["token_f1", "rouge_l", "bleu", "exact_match"],
}


async def timed(rows: list[dict[str, Any]], metrics: list[str], engine: str) -> float:
    import ragmeter

    start = time.perf_counter()
    result = await ragmeter.aevaluate(rows, metrics, None, engine=engine, progress=False)
    wall = time.perf_counter() - start
    for name in metrics:
        s = result.summary()[name]
        if s.n_scored + s.n_invalid != len(rows):
            raise SystemExit(f"{engine}: {name} scored {s.n_scored} + {s.n_invalid} of {len(rows)}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=400)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="local-judge")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    metrics = WORKLOADS[args.workload]
    rows = make_rows(args.rows)
    warm = rows[: 2 * args.cpus]
    start = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray_init = time.perf_counter() - start
    try:
        asyncio.run(timed(warm, metrics, "local"))
        local = asyncio.run(timed(rows, metrics, "local"))
        remote = asyncio.run(timed(rows, metrics, "ray"))
    finally:
        ray.shutdown()
    result = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "cpus_machine": os.cpu_count(),
        "load_avg": round(os.getloadavg()[0], 1),
        "workload": args.workload,
        "metrics": metrics,
        "rows": args.rows,
        "ray_cpus": args.cpus,
        "ray_init_s": round(ray_init, 2),
        "local_s": round(local, 2),
        "local_samples_per_s": round(args.rows / local, 1),
        # the Ray figure includes starting its workers (each loads ragmeter and its models)
        "ray_s": round(remote, 2),
        "ray_samples_per_s": round(args.rows / remote, 1),
        "ray_samples_per_s_per_worker": round(args.rows / remote / args.cpus, 1),
    }
    if args.json:
        print(json.dumps(result))
        return
    for k, v in result.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
