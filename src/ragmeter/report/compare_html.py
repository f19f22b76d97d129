"""The HTML page of a comparison: run A and run B side by side, one self-contained file (the
report's page shell, style and sample view; see :mod:`ragmeter.report.page`).

The page shows both runs' headers, the NOT COMPARABLE warning with its reasons, one row per
metric (means, B - A with its paired bootstrap CI, the permutation p-value, wins / ties /
losses, the samples newly invalid and newly valid in B, the verdict at the margin and the
allowance of newly invalid samples), and every matched sample, sorted by how much it moved on a
chosen metric (worst in B first), filterable, rendered lazily; a click shows the sample's
answers, scores, claims and contexts from A and from B next to each other.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.report.html_data import run_header, sample_data
from ragmeter.report.page import render_page, write_page

if TYPE_CHECKING:
    from ragmeter.report.comparison import Comparison
    from ragmeter.run.result import Result


def _runs(comparison: Comparison) -> tuple[Result, Result]:
    a, b = comparison.result_a, comparison.result_b
    if a is None or b is None:
        raise ConfigError("this comparison does not hold its runs; build it with compare_runs(...)")
    return a, b


def _pair(key: str, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """One matched sample; B's contexts are left out (``null``) when they equal A's, the usual case
    when only the generator changed (the page reads A's then)."""
    if b["contexts"] == a["contexts"]:
        b = {**b, "contexts": None}
    return {"key": key, "a": a, "b": b}


def comparison_data(comparison: Comparison, margin: float = 0.0, max_new_invalid: int = 0) -> dict[str, Any]:
    """The JSON-able content of the comparison page (see ``assets/compare.js``)."""
    a, b = _runs(comparison)
    names = list(comparison.metrics)
    samples_a, samples_b = dict(a.samples), dict(b.samples)
    idx_a = {key: idx for idx, key in a.keys.items()}
    idx_b = {key: idx for idx, key in b.keys.items()}
    return {
        "kind": "compare",
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "comparison": comparison.to_dict(margin, max_new_invalid),
        "runs": {"a": run_header(a), "b": run_header(b)},
        "metric_names": names,
        "pairs": [
            _pair(key, sample_data(a, ia, samples_a[ia], names), sample_data(b, ib, samples_b[ib], names))
            for key, ia, ib in comparison.pairs
        ],
        "only_a": [{"key": k, "question": samples_a[idx_a[k]].question} for k in comparison.only_a],
        "only_b": [{"key": k, "question": samples_b[idx_b[k]].question} for k in comparison.only_b],
    }


def render_comparison(comparison: Comparison, margin: float = 0.0, max_new_invalid: int = 0) -> str:
    """The comparison as one HTML document (a string)."""
    title = f"ragmeter compare {comparison.run_a} {comparison.run_b}"
    return render_page(
        title,
        comparison_data(comparison, margin, max_new_invalid),
        scripts=("sample.js", "compare.js"),
        styles=("compare.css",),
    )


def write_comparison(
    comparison: Comparison, path: str | Path | None = None, margin: float = 0.0, max_new_invalid: int = 0
) -> Path:
    """Write the comparison page to ``path`` (default ``ragmeter-compare-<A>-<B>.html``); return it."""
    target = Path(f"ragmeter-compare-{comparison.run_a}-{comparison.run_b}.html") if path is None else path
    return write_page(target, render_comparison(comparison, margin, max_new_invalid), "the comparison")


__all__ = ["comparison_data", "render_comparison", "write_comparison"]
