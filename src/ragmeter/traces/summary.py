"""What a run's trace samples say about the app itself: latency and the app's own token counts
(not the judge's), read from each sample's ``metadata["trace"]`` (:mod:`ragmeter.traces.samples`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragmeter.dataset.sample import Sample


def _nearest_rank(sorted_values: list[float], q: float) -> float:
    """The nearest-rank percentile ``q`` (0-100) of sorted values."""
    k = max(1, -(-len(sorted_values) * q // 100))
    return sorted_values[int(k) - 1]


def trace_summary(samples: Iterable[Sample]) -> dict[str, Any] | None:
    """``{"n", "latency_ms": {"median", "p95", "max"} | None, "prompt_tokens", "completion_tokens",
    "total_tokens", "n_with_tokens", "llm_calls"}`` over the samples read from traces, or None when
    none was. Percentiles are nearest-rank; token sums are over the traces that report counts."""
    n = calls = with_tokens = 0
    latencies: list[float] = []
    sums = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    for sample in samples:
        trace = sample.metadata.get("trace") if isinstance(sample.metadata, Mapping) else None
        if not isinstance(trace, Mapping) or not trace.get("trace_id"):
            continue
        n += 1
        latency = trace.get("latency_ms")
        if isinstance(latency, (int, float)) and not isinstance(latency, bool):
            latencies.append(float(latency))
        if isinstance(trace.get("llm_calls"), int):
            calls += trace["llm_calls"]
        if any(isinstance(trace.get(k), int) for k in sums):
            with_tokens += 1
            for k in sums:
                if isinstance(trace.get(k), int):
                    sums[k] += trace[k]
    if not n:
        return None
    latencies.sort()
    return {
        "n": n,
        "latency_ms": None
        if not latencies
        else {
            "median": _nearest_rank(latencies, 50),
            "p95": _nearest_rank(latencies, 95),
            "max": latencies[-1],
        },
        **{k: (v if with_tokens else None) for k, v in sums.items()},
        "n_with_tokens": with_tokens,
        "llm_calls": calls,
    }


def _ms(value: float) -> str:
    return f"{value:.0f} ms" if value < 1000 else f"{value / 1000:.2f} s"


def summary_line(summary: Mapping[str, Any]) -> str:
    """One line for the terminal report."""
    parts = [f"traces: {summary['n']} sample(s) read from traces"]
    lat = summary.get("latency_ms")
    if lat:
        parts.append(f"latency median {_ms(lat['median'])}, p95 {_ms(lat['p95'])}, max {_ms(lat['max'])}")
    if summary.get("n_with_tokens"):
        total = summary["total_tokens"]
        parts.append(
            f"the app's tokens {summary['prompt_tokens']} prompt + {summary['completion_tokens']} completion "
            f"({total} total, {total / summary['n_with_tokens']:.0f} a trace) in {summary['llm_calls']} LLM call(s)"
        )
    else:
        parts.append(f"{summary['llm_calls']} LLM call(s), no token counts in the traces")
    return "; ".join(parts)


__all__ = ["summary_line", "trace_summary"]
