"""How big the HTML report of a large run is, and how fast it opens in a browser.

Scores N samples (default 10,000: the shipped example data, cycled, each copy a new sample id) with
the local judge into a run store (reused when the run is already there), writes the run's report,
and the report of its first tenth, then opens the two in turn from file:// in headless Chromium
(Debian's chromium + chromedriver, via Selenium), each time in a fresh browser, and measures:

- ``load s``: from the navigation to the page built and interactive (the page's script has run:
  data parsed, cards and the first rows of the table built), as the browser's navigation timing
  ``domInteractive`` and ``loadEventEnd`` give it, and as wall time seen from Python;
- the JavaScript time of actions on the loaded page: sort by a column, filter by a metric range,
  open a sample's drill-down, and the first full-text search (which lower-cases all text once);
- the JS heap used.

    python bench/report_scale.py [--samples 10000] [--store DIR] [--repeats 5] [--json]
    python bench/report_scale.py --screenshot docs/report-screenshot.png   # the README's picture

``--screenshot`` only writes the picture: the report of the shipped example data (scored by the
local judge) with its worst sample opened.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import ragmeter
from ragmeter import Result
from ragmeter.errors import RunError
from ragmeter.report.html import render_report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
METRICS = ["faithfulness", "answer_relevance", "context_relevance", "context_precision", "token_f1"]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.browser import Browser, missing_browser  # noqa: E402


def rows(n: int) -> list[dict[str, Any]]:
    base = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for i in range(n):
        r = dict(base[i % len(base)])
        r["id"] = f"{r.get('id', 'sample')}-{i}"
        out.append(r)
    return out


def scored_run(store: Path, n: int) -> tuple[Result, float | None]:
    """The run ``scale-<n>`` of the store, made now when missing (with its wall time)."""
    run_id = f"scale-{n}"
    try:
        return Result.from_store(store, run_id), None
    except RunError:
        pass
    t0 = time.perf_counter()
    result = ragmeter.evaluate(rows(n), METRICS, None, out=store, run_id=run_id, progress=False)
    return result, time.perf_counter() - t0


TIMING_JS = """
const nav = performance.getEntriesByType('navigation')[0];
const text = document.getElementById('ragmeter-data').textContent;
const t = performance.now(); JSON.parse(text); const parse = performance.now() - t;
return {file_read: nav.responseEnd, dom_interactive: nav.domInteractive, parse_ms: parse,
        load: nav.loadEventEnd, heap: performance.memory ? performance.memory.usedJSHeapSize : null,
        rows_in_dom: document.querySelectorAll('#rows .row').length,
        count: document.getElementById('count').textContent,
        resources: performance.getEntriesByType('resource').length};
"""

ACTIONS_JS = """
const done = arguments[arguments.length - 1];
const out = {};
function timed(name, f) { const t = performance.now(); f(); out[name] = performance.now() - t; }
timed('sort_ms', function () { document.querySelector('#table .head div[data-key="m1"]').click(); });
timed('range_filter_ms', function () {
  const e = document.getElementById('f-min'); e.value = '0.5'; e.dispatchEvent(new Event('input'));
});
out.after_filter = document.getElementById('count').textContent;
timed('range_clear_ms', function () {
  const e = document.getElementById('f-min'); e.value = ''; e.dispatchEvent(new Event('input'));
});
timed('open_sample_ms', function () { document.querySelector('#rows .row').click(); });
const q = document.getElementById('q'), before = document.getElementById('count').textContent;
const t = performance.now();
q.value = 'chlorophyll'; q.dispatchEvent(new Event('input'));
(function wait() {
  if (document.getElementById('count').textContent !== before) {
    out.first_search_ms = performance.now() - t - 150;  /* the search box waits 150 ms for typing */
    out.after_search = document.getElementById('count').textContent;
    done(out);
  } else { setTimeout(wait, 5); }
})();
"""


def measure(path: Path) -> dict[str, Any]:
    """One opening of ``path`` in a fresh browser and profile (nothing cached)."""
    b = Browser()
    try:
        t0 = time.perf_counter()
        b.open(path.as_uri())
        wall = time.perf_counter() - t0
        timing = b.driver.execute_script(TIMING_JS)
        actions = b.driver.execute_async_script(ACTIONS_JS)
        errors = b.console_errors()
        return {"wall_s": wall, **timing, **actions, "console_errors": len(errors)}
    finally:
        b.close()


def subset(result: Result, n: int) -> Result:
    """The first ``n`` samples of ``result`` as a run of their own (same record, fewer samples)."""
    keep = result.samples[:n]
    idxs = {idx for idx, _ in keep}
    return Result(
        run_id=f"{result.run_id}-first-{n}",
        meta=result.meta,
        samples=keep,
        problems=result.problems,
        rows=[r for r in result.rows if r.idx in idxs],
        metric_names=result.metric_names,
        store_dir=result.store_dir,
    )


def _median(values: list[float]) -> float:
    return statistics.median(values)


def screenshot(target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = ragmeter.evaluate(str(EXAMPLE), METRICS, None, out=tmp, run_id="example", progress=False)
        page = result.to_html(Path(tmp) / "report.html")
        b = Browser(width=1280, height=1400)
        try:
            b.open(page.as_uri())
            b.driver.find_element("css selector", "#rows .row").click()  # the worst sample
            b.driver.execute_script("document.getElementById('cards').scrollIntoView({block: 'start'});")
            target.write_bytes(b.driver.get_screenshot_as_png())
        finally:
            b.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "ragmeter-bench-report")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--screenshot", type=Path, default=None)
    args = ap.parse_args()
    reason = missing_browser()
    if reason is not None:
        sys.exit(f"report_scale needs headless Chromium: {reason}")
    if args.screenshot is not None:
        screenshot(args.screenshot)
        print(f"{args.screenshot}: {args.screenshot.stat().st_size / 1024:.0f} KiB")
        return

    result, run_s = scored_run(args.store, args.samples)
    t0 = time.perf_counter()
    result = Result.from_store(args.store, result.run_id)
    load_s = time.perf_counter() - t0
    # the same record cut to a tenth: opened in turn with the full one, so the machine's noise
    # hits both alike and their ratio is meaningful
    pages: dict[str, dict[str, Any]] = {}
    for res in (result, subset(result, max(1, args.samples // 10))):
        t0 = time.perf_counter()
        html = render_report(res)
        render_s = time.perf_counter() - t0
        path = args.store / f"report-{res.run_id}.html"
        path.write_text(html, encoding="utf-8")
        raw = html.encode("utf-8")
        pages[res.run_id] = {
            "samples": res.n_samples,
            "render_s": render_s,
            "bytes": len(raw),
            "gzip_bytes": len(gzip.compress(raw, 6)),
            "path": path,
            "opens": [],
        }
    for _ in range(args.repeats):
        for page in pages.values():
            page["opens"].append(measure(page["path"]))
    report = {
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "metrics": result.metric_names,
        "run_s": run_s,
        "load_run_s": load_s,
        "pages": {k: {**v, "path": str(v["path"])} for k, v in pages.items()},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['machine']}, {report['date']}; metrics {', '.join(result.metric_names)}")
    if run_s is not None:
        print(f"scoring {result.n_samples} samples (local judge): {run_s:.1f} s")
    print(f"Result.from_store of {result.n_samples} samples: {load_s:.2f} s")
    keys = (
        "wall_s",
        "file_read",
        "dom_interactive",
        "parse_ms",
        "sort_ms",
        "range_filter_ms",
        "open_sample_ms",
        "first_search_ms",
    )
    for page in pages.values():
        opens = page["opens"]
        med = {k: _median([o[k] for o in opens]) for k in keys}
        print(
            f"{page['samples']} samples: render {page['render_s']:.2f} s, {page['bytes'] / 1e6:.1f} MB "
            f"({page['gzip_bytes'] / 1e6:.1f} MB gzipped); median of {len(opens)} opens: "
            f"file read {med['file_read']:.0f} ms, interactive {med['dom_interactive']:.0f} ms "
            f"(JSON.parse {med['parse_ms']:.0f} ms), wall {med['wall_s']:.2f} s; sort {med['sort_ms']:.0f} ms, "
            f"range filter {med['range_filter_ms']:.0f} ms, open a sample {med['open_sample_ms']:.0f} ms, "
            f"first search {med['first_search_ms']:.0f} ms; rows in the DOM {opens[0]['rows_in_dom']}, "
            f"heap {(opens[0]['heap'] or 0) / 1e6:.0f} MB; console errors "
            f"{sum(o['console_errors'] for o in opens)}, resources fetched {sum(o['resources'] for o in opens)}"
        )
        print("  interactive ms per open: " + ", ".join(f"{o['dom_interactive']:.0f}" for o in opens))


if __name__ == "__main__":
    main()
