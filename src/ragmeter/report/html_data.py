"""The data an HTML report embeds, built from a :class:`~ragmeter.run.result.Result` only.

Everything here is read from the run record (the run's meta, samples, skipped rows and stored
scores); nothing is re-run. One thing is derived: where each claim's *evidence* sentence (the
judge's quote from the contexts) lies in the sample's contexts, so the page can highlight it. The
quote is searched verbatim, then ignoring case and runs of white space; when it is in no context
(a judge that paraphrased instead of quoting) the page says so instead of guessing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.log.store import ScoreRow
    from ragmeter.run.result import Result

#: bins of a metric's histogram
HIST_BINS = 10

#: call fields kept for a valid score (its replies are not embedded: the details hold what they said)
_CALL_FIELDS = ("step", "model", "usage", "cached", "latency_s", "prompt_version", "attempts", "error")


def _normalized(text: str) -> tuple[str, list[int]]:
    """``text`` lower-cased with white-space runs as one space, and each output character's
    position in ``text``."""
    out: list[str] = []
    pos: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not space and out:
                out.append(" ")
                pos.append(i)
            space = True
            continue
        space = False
        low = ch.lower()
        out.append(low if len(low) == 1 else ch)
        pos.append(i)
    return "".join(out), pos


def locate(quote: str, contexts: Sequence[str]) -> list[int] | None:
    """``[context index, start, end]`` of ``quote`` in ``contexts`` (character offsets), or None.

    Verbatim first; then ignoring case and white-space differences.
    """
    q = quote.strip()
    if not q:
        return None
    for k, ctx in enumerate(contexts):
        at = ctx.find(q)
        if at >= 0:
            return [k, at, at + len(q)]
    nq, _ = _normalized(q)
    nq = nq.strip()
    if not nq:
        return None
    for k, ctx in enumerate(contexts):
        nctx, pos = _normalized(ctx)
        at = nctx.find(nq)
        if at >= 0:
            return [k, pos[at], pos[at + len(nq) - 1] + 1]
    return None


def _located(
    metric: str, details: Mapping[str, Any], contexts: Sequence[str]
) -> tuple[dict[str, Any], list[list[Any]]]:
    """``details`` with the place of each quoted evidence sentence added, and the marks to draw
    on the sample's contexts: ``[context index, start, end, class, label]``.

    Claim lists (faithfulness, context recall) get ``evidence_at`` (``[context, start, end]`` or
    None) beside each quote; per-context verdicts (context precision, utilization) get
    ``context_index`` (metrics see the non-blank contexts only, so their ranks are mapped back to
    the sample's contexts) and ``evidence_at``; per-sentence ratings (context relevance) mark the
    sentences rated as needed.
    """
    out = dict(details)
    marks: list[list[Any]] = []
    scored = [i for i, c in enumerate(contexts) if isinstance(c, str) and c.strip()]
    claims = details.get("claims")
    if isinstance(claims, list):
        rows: list[Any] = []
        for n, c in enumerate(claims, 1):
            if isinstance(c, Mapping) and c.get("evidence"):
                at = locate(str(c["evidence"]), contexts)
                c = {**c, "evidence_at": at}
                if at is not None:
                    verdict = "supported" if c.get("supported") else "not supported"
                    cls = "ev-sup" if c.get("supported") else "ev-unsup"
                    marks.append([*at, cls, f"{metric}, claim {n} ({verdict})"])
            rows.append(c)
        out["claims"] = rows
    per_ctx = details.get("contexts")
    if isinstance(per_ctx, list) and per_ctx and all(isinstance(c, Mapping) for c in per_ctx):
        rows = []
        for c in per_ctx:
            rank = c.get("rank")
            if isinstance(rank, int) and 1 <= rank <= len(scored):
                k = scored[rank - 1]
                c = {**c, "context_index": k}
                ev = str(c.get("evidence") or "")
                if ev:
                    hit = locate(ev, [contexts[k]])
                    c["evidence_at"] = None if hit is None else [k, hit[1], hit[2]]
            rows.append(c)
        out["contexts"] = rows
    elif isinstance(per_ctx, list) and all(isinstance(g, list) for g in per_ctx):
        for j, group in enumerate(per_ctx[: len(scored)]):
            k = scored[j]
            ctx, cursor = contexts[k], 0
            for item in group:
                if not isinstance(item, Mapping):
                    continue
                sentence = str(item.get("sentence") or "").strip()
                start = ctx.find(sentence, cursor) if sentence else -1
                if start < 0:
                    continue
                cursor = start + len(sentence)
                rating = item.get("rating")
                if isinstance(rating, (int, float)) and rating >= 0.5:
                    marks.append([k, start, cursor, "rel", f"{metric}: needed (rating {rating:.2f})"])
    return out, marks


def histogram(values: Sequence[float], bins: int = HIST_BINS) -> dict[str, Any]:
    """Counts of ``values`` in ``bins`` equal bins: over [0, 1] when every value lies there, else
    over [min, max]."""
    if not values:
        return {"lo": 0.0, "hi": 1.0, "counts": [0] * bins}
    lo, hi = min(values), max(values)
    if lo >= 0.0 and hi <= 1.0:
        lo, hi = 0.0, 1.0
    if hi == lo:
        return {"lo": lo, "hi": hi, "counts": [len(values)]}
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    return {"lo": lo, "hi": hi, "counts": counts}


def finite(x: Any) -> Any:
    """JSON has no NaN or infinity: such a float becomes None (and the value was never a score)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, Mapping):
        return {str(k): finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    return x


def _job(
    metric: str, row: ScoreRow | None, contexts: Sequence[str], marks: list[list[Any]]
) -> dict[str, Any] | None:
    if row is None:
        return None
    score = row.score
    details, found = _located(metric, score.details, contexts)
    marks.extend(found)
    valid = score.valid
    calls = [c if not valid else {k: c.get(k) for k in _CALL_FIELDS if k in c} for c in row.calls]
    return {
        "value": score.value,
        "reason": score.reason,
        "details": finite(details),
        "error": None
        if score.error is None
        else {"kind": score.error.kind, "message": score.error.message, "raw": score.error.raw},
        "usage": row.usage.to_dict(),
        "duration_s": row.duration_s,
        "calls": finite(calls),
    }


def _metric_specs(result: Result) -> dict[str, Mapping[str, Any]]:
    return {str(m.get("name")): m for m in result.meta.get("metrics", []) if isinstance(m, Mapping)}


def sample_data(
    result: Result, idx: int, sample: Sample, metric_names: Sequence[str] | None = None
) -> dict[str, Any]:
    """One sample as the pages show it: its fields, its scores in ``metric_names`` order (default:
    the run's metrics; None where it was not scored) with evidence located, and the marks to draw
    on its contexts."""
    contexts = list(sample.contexts)
    marks: list[list[Any]] = []
    names = result.metric_names if metric_names is None else metric_names
    return {
        "idx": idx,
        "id": sample.id,
        "question": sample.question,
        "answer": sample.answer,
        "reference": sample.reference,
        "contexts": contexts,
        "metadata": finite(dict(sample.metadata)),
        "scores": [_job(m, result.row(idx, m), contexts, marks) for m in names],
        "marks": marks,
    }


def run_header(result: Result) -> dict[str, Any]:
    """What the pages show of a run besides its samples: id, status, data, judge, versions, usage."""
    meta = result.meta
    judge = meta.get("judge", {}) if isinstance(meta.get("judge"), Mapping) else {}
    return {
        "run_id": result.run_id,
        "status": result.status,
        "created_at": meta.get("created_at"),
        "source": meta.get("source"),
        "dataset_hash": meta.get("dataset_hash"),
        "judge": finite(dict(judge)),
        "prompt_versions": finite(meta.get("prompt_versions", {})),
        "versions": meta.get("versions", {}),
        "config": finite(meta.get("config", {})),
        "n_samples": result.n_samples,
        "n_skipped": result.n_skipped,
        "usage": result.usage.to_dict(),
        "cost": result.cost,
        "store": None if result.store_dir is None else str(result.store_dir),
    }


def report_data(result: Result) -> dict[str, Any]:
    """The JSON-able content of a run's HTML report (see ``assets/report.js`` for its use)."""
    specs = _metric_specs(result)
    summaries = result.summary()
    metrics = []
    for name in result.metric_names:
        s = summaries[name]
        values = [sc.value for sc in result.scores(name) if sc is not None and sc.value is not None]
        spec = specs.get(name, {})
        metrics.append(
            {
                "name": name,
                **finite(s.to_dict()),
                "higher_is_better": bool(spec.get("higher_is_better", True)),
                "params": finite(spec.get("params", {})),
                "histogram": histogram(values),
            }
        )
    return {
        "kind": "report",
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run": run_header(result),
        "skipped": [p.to_dict() for p in result.problems],
        "metrics": metrics,
        "samples": [sample_data(result, idx, sample) for idx, sample in result.samples],
    }
