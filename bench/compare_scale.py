"""Scale of ``ragmeter compare``: two runs of N samples, compared and written as an HTML page.

Builds two run records of N synthetic samples each (question, three contexts, an answer, and
three metrics with faithfulness-shaped details: three claims with verdicts and evidence) in a
temporary run store, then times, for each N:

- ``load``: reading both records back (``Result.from_store``);
- ``compare``: ``compare_runs`` (matching by key, per metric the paired bootstrap CI with 2000
  resamples and the sign-flip permutation test, exact up to 20 non-zero differences, else 20,000
  random sign assignments);
- ``render``: ``render_comparison`` (the page's data and the HTML file) and its size;
- ``browser``: when Debian's chromium and chromedriver are installed, the time from navigation to
  the page being interactive (``<html data-ready>``) in headless Chromium.

    python bench/compare_scale.py [--n 1000,10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ragmeter.dataset.sample import Sample
from ragmeter.log.store import RunStore
from ragmeter.metrics.base import Score
from ragmeter.report.compare_html import render_comparison
from ragmeter.report.comparison import compare_runs
from ragmeter.run.result import Result

METRICS = ("faithfulness", "answer_relevance", "token_f1")


def _sample(i: int) -> Sample:
    contexts = [
        f"Document {i}-{k} explains how component {i} works: it reads the input, checks it against "
        f"rule {k}, and writes the result to the log. The process was introduced in {1990 + k} and "
        "has been revised several times since then." * 2
        for k in range(3)
    ]
    return Sample(
        question=f"How does component {i} handle its input, and when was the process introduced?",
        contexts=contexts,
        answer=f"Component {i} reads the input, checks it against a rule and writes the result to the log. "
        f"It was introduced in {1990 + i % 3}.",
        reference=f"It reads, checks and logs its input; introduced in {1990 + i % 3}.",
        id=f"s{i}",
    )


def _score(rng: random.Random, sample: Sample, shift: float) -> Score:
    value = min(1.0, max(0.0, rng.random() + shift))
    claims = [
        {
            "claim": f"claim {k} of the answer",
            "supported": rng.random() < value,
            "reason": "found in the contexts",
            "evidence": sample.contexts[k][:60],
            "confidence": 0.9,
        }
        for k in range(3)
    ]
    return Score(
        value=value,
        reason=f"{sum(c['supported'] for c in claims)} of 3 claims supported",
        details={"claims": claims},
    )


def _record(store: RunStore, run_id: str, n: int, shift: float, seed: int) -> None:
    rng = random.Random(seed)
    samples = [_sample(i) for i in range(n)]
    store.create_run(
        run_id,
        {"metrics": [{"name": m, "higher_is_better": True} for m in METRICS], "judge": {"name": "bench"}},
    )
    store.add_samples(run_id, list(enumerate(samples)))
    # one transaction for all the scores (the runner writes them one by one as jobs finish)
    with store._tx() as c:
        for i, s in enumerate(samples):
            for m in METRICS:
                score = _score(rng, s, shift)
                c.execute(
                    "INSERT INTO scores (run_id, idx, metric, value, reason, details, error_kind, error_message, "
                    "error_raw, usage, calls, duration_s, created_at) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL, "
                    "'{}', '[]', 0.0, '')",
                    (run_id, i, m, score.value, score.reason, json.dumps(score.details)),
                )
    store.set_status(run_id, "finished")


def _browser_ready_s(page: Path) -> float | None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from helpers.browser import Browser, missing_browser

    if missing_browser() is not None:
        return None
    b = Browser()
    try:
        start = time.perf_counter()
        b.open(page.as_uri())
        return time.perf_counter() - start
    finally:
        b.close()


def measure(n: int, workdir: Path) -> dict[str, Any]:
    out = workdir / f"runs-{n}"
    with RunStore(out) as store:
        _record(store, "a", n, 0.0, 1)
        _record(store, "b", n, -0.02, 2)
    t = time.perf_counter()
    a, b = Result.from_store(out, "a"), Result.from_store(out, "b")
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    comparison = compare_runs(a, b)
    compare_s = time.perf_counter() - t
    t = time.perf_counter()
    page = render_comparison(comparison)
    render_s = time.perf_counter() - t
    path = workdir / f"compare-{n}.html"
    path.write_text(page, encoding="utf-8")
    return {
        "n": n,
        "load_s": round(load_s, 2),
        "compare_s": round(compare_s, 2),
        "render_s": round(render_s, 2),
        "page_mb": round(len(page.encode("utf-8")) / 1e6, 1),
        "browser_ready_s": None if (r := _browser_ready_s(path)) is None else round(r, 2),
        "faithfulness_diff": round(comparison.metrics["faithfulness"].diff or 0.0, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", default="1000,10000", help="comma-separated sample counts")
    parser.add_argument("--json", action="store_true", help="one JSON object per size")
    args = parser.parse_args()
    print(f"# {platform.platform()}, Python {platform.python_version()}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.n.split(",")):
            row = measure(n, Path(tmp))
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
