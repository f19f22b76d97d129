"""Whether two runs can be compared: the same judge (operational settings aside), prompt versions,
metric settings and evaluation set. :func:`comparability_issues` says why not (empty when they
can); :func:`eval_set_hash` fingerprints what a run's samples ask. See
:mod:`ragmeter.report.comparison` for what is compared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ragmeter.dataset.keys import normalize_key_text

if TYPE_CHECKING:
    from ragmeter.run.result import Result

#: Judge description keys that do not change a score (compared runs may differ in them).
_OPERATIONAL_KEYS = frozenset(
    {
        "cache",
        "memo_size",
        "prompts",  # compared on their own, as prompt versions
        "prompts_dir",
        "base_url",
        "structured",
        "structured_resolved",
        "concurrency",
        "timeout_s",
        "max_retries",
        "backoff_base_s",
        "backoff_max_s",
        "rpm",
        "tpm",
        "prompt_price_per_1k",
        "completion_price_per_1k",
    }
)


def eval_set_hash(result: Result) -> str:
    """SHA-256 over the sorted (key, normalised question, normalised reference) of a run's samples."""
    items = sorted(
        (result.keys[idx], normalize_key_text(s.question), normalize_key_text(s.reference))
        for idx, s in result.samples
    )
    h = hashlib.sha256()
    for item in items:
        h.update("\x1f".join(item).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if str(k) in _OPERATIONAL_KEYS:
                continue
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    fa, fb = _flatten(a), _flatten(b)
    return [
        f"{k}: {fa.get(k)!r} vs {fb.get(k)!r}" for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)
    ]


def metric_specs(result: Result) -> dict[str, dict[str, Any]]:
    return {str(m.get("name")): dict(m) for m in result.meta.get("metrics", []) if m.get("name")}


def comparability_issues(
    a: Result, b: Result, shared: Iterable[str], hashes: tuple[str, str], counts: tuple[int, int, int]
) -> list[str]:
    """Why A and B are not comparable (empty when they are); ``counts``: only in A, only in B,
    matched with another question or reference."""
    issues: list[str] = []
    judge = _differences(a.meta.get("judge") or {}, b.meta.get("judge") or {})
    if judge:
        issues.append("different judges: " + "; ".join(judge[:6]) + (" ..." if len(judge) > 6 else ""))
    prompts = _differences(a.meta.get("prompt_versions") or {}, b.meta.get("prompt_versions") or {})
    if prompts:
        issues.append(
            "different prompt versions: " + "; ".join(prompts[:6]) + (" ..." if len(prompts) > 6 else "")
        )
    specs_a, specs_b = metric_specs(a), metric_specs(b)
    for name in shared:
        sa = {k: specs_a[name].get(k) for k in ("version", "params", "threshold")}
        sb = {k: specs_b[name].get(k) for k in ("version", "params", "threshold")}
        diff = _differences(sa, sb)
        if diff:
            issues.append(f"metric {name} differs: " + "; ".join(diff))
    if counts[0] and counts[1] and counts[0] == len(a.samples) and counts[1] == len(b.samples):
        kinds_a = sorted({k.split(":", 1)[0] for k in a.keys.values()})
        kinds_b = sorted({k.split(":", 1)[0] for k in b.keys.values()})
        issues.append(
            f"no sample matched: A's keys are {'/'.join(kinds_a)}:..., B's {'/'.join(kinds_b)}:... "
            "(an id column in one data file only, or other questions)"
        )
    if hashes[0] != hashes[1]:
        issues.append(
            f"different evaluation sets (eval-set hash {hashes[0][:12]} vs {hashes[1][:12]}): "
            f"{counts[0]} sample(s) only in A, {counts[1]} only in B, "
            f"{counts[2]} matched sample(s) with another question or reference"
        )
    return issues


__all__ = ["comparability_issues", "eval_set_hash", "metric_specs"]
