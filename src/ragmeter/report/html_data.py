"""The data an HTML report embeds, built from a run's result only (what :class:`~ragmeter.run.view.RunView`
offers: a :class:`~ragmeter.run.result.Result`).

Everything here is read from the run record (the run's meta, samples, skipped rows and stored
scores); nothing is re-run. One thing is derived: where each sentence a score quotes from the
contexts (a claim's *evidence*, a context's useful sentence, a rated sentence) lies in the
sample's contexts, so the page can highlight it. A quote is searched verbatim, then ignoring case
and runs of white space; a quote that is found is embedded as its place only (the page reads the
text back from the context, which keeps a large report small); one found in no context (a judge
that paraphrased instead of quoting) stays as text and the page says so instead of guessing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ragmeter.traces.summary import trace_summary

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.log.reading import ScoreRow
    from ragmeter.run.view import RunView

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


def _rounded(item: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``item`` with its probability ``key`` kept to 4 decimals (shown with 2; the data stays small)."""
    out = dict(item)
    if isinstance(out.get(key), float):
        out[key] = round(out[key], 4)
    return out


def _located(details: Mapping[str, Any], contexts: Sequence[str]) -> dict[str, Any]:
    """``details`` with every quoted context sentence replaced by its place in the sample's
    contexts where it is found (the page marks it there).

    Claim lists (faithfulness, context recall): each quoted ``evidence`` becomes ``evidence_at``
    (``[context, start, end]``); a quote found in no context stays as text. Per-context verdicts
    (context precision, utilization) get ``context_index`` (metrics see the non-blank contexts
    only, so their ranks are mapped back to the sample's contexts) and ``evidence_at`` the same
    way. Per-sentence ratings (context relevance): each sentence becomes ``at``, and the sentences
    rated as needed are marked. The page reads the quoted text back from the contexts. With
    repeated judging the same is done in ``first`` (the first valid judgement's details).
    """
    out = dict(details)
    scored = [i for i, c in enumerate(contexts) if isinstance(c, str) and c.strip()]
    claims = details.get("claims")
    if isinstance(claims, list):
        rows: list[Any] = []
        for c in claims:
            if isinstance(c, Mapping):
                c = _rounded(c, "confidence")
                at = locate(str(c.get("evidence") or ""), contexts)
                if at is not None:
                    del c["evidence"]
                    c["evidence_at"] = at
            rows.append(c)
        out["claims"] = rows
    per_ctx = details.get("contexts")
    if isinstance(per_ctx, list) and per_ctx and all(isinstance(c, Mapping) for c in per_ctx):
        rows = []
        for c in per_ctx:
            c = dict(c)
            rank = c.get("rank")
            if isinstance(rank, int) and 1 <= rank <= len(scored):
                k = scored[rank - 1]
                c.pop("context", None)  # a preview of the context the page has in full
                c["context_index"] = k
                hit = locate(str(c.get("evidence") or ""), [contexts[k]])
                if hit is not None:
                    del c["evidence"]
                    c["evidence_at"] = [k, hit[1], hit[2]]
            rows.append(c)
        out["contexts"] = rows
    elif isinstance(per_ctx, list) and all(isinstance(g, list) for g in per_ctx):
        groups: list[Any] = []
        for j, group in enumerate(per_ctx):
            k = scored[j] if j < len(scored) else -1
            ctx, cursor = (contexts[k] if k >= 0 else ""), 0
            items: list[Any] = []
            for item in group:
                if not isinstance(item, Mapping):
                    items.append(item)
                    continue
                item = _rounded(item, "rating")
                sentence = str(item.get("sentence") or "").strip()
                start = ctx.find(sentence, cursor) if sentence else -1
                if start >= 0:
                    cursor = start + len(sentence)
                    del item["sentence"]
                    item["at"] = [k, start, cursor]
                items.append(item)
            groups.append(items)
        out["contexts"] = groups
    first = details.get("first")
    if isinstance(first, Mapping):  # repeated judging: the first valid judgement's details
        out["first"] = _located(first, contexts)
    return out


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


def _job(row: ScoreRow | None, contexts: Sequence[str]) -> dict[str, Any] | None:
    if row is None:
        return None
    score = row.score
    details = _located(score.details, contexts)
    job: dict[str, Any] = {
        "value": score.value,
        "reason": score.reason,
        "details": details,
        "error": None
        if score.error is None
        else {"kind": score.error.kind, "message": score.error.message, "raw": score.error.raw},
        "duration_s": round(row.duration_s, 4),
    }
    if row.usage.requests:
        job["usage"] = row.usage.to_dict()
    if row.calls:
        keep = (lambda c: c) if not score.valid else (lambda c: {k: c[k] for k in _CALL_FIELDS if k in c})
        job["calls"] = [keep(c) for c in row.calls]
    return job


def _metric_specs(result: RunView) -> dict[str, Mapping[str, Any]]:
    return {str(m.get("name")): m for m in result.meta.get("metrics", []) if isinstance(m, Mapping)}


def sample_data(
    result: RunView,
    idx: int,
    sample: Sample,
    metric_names: Sequence[str] | None = None,
    rows: Mapping[str, ScoreRow] | None = None,
) -> dict[str, Any]:
    """One sample as the pages show it (``assets/sample.js``): its fields and its scores in
    ``metric_names`` order (default: the run's metrics; None where it was not scored), with the
    quoted sentences placed in its contexts. ``rows``: the sample's scores by metric, when the
    caller has them (else each is looked up in ``result``)."""
    contexts = list(sample.contexts)
    names = result.metric_names if metric_names is None else metric_names
    out: dict[str, Any] = {
        "idx": idx,
        "id": sample.id,
        "question": sample.question,
        "answer": sample.answer,
        "reference": sample.reference,
        "contexts": contexts,
        "metadata": dict(sample.metadata),
        "scores": [_job(result.row(idx, m) if rows is None else rows.get(m), contexts) for m in names],
    }
    if sample.conversation_id is not None:
        out.update(_conversation_fields(sample, out["scores"]))
        steps = trajectory_steps(sample, dict(zip(names, out["scores"], strict=True)))
        if steps:
            out["steps"] = steps
    return out


#: characters of a tool result the pages show in a trajectory's step (the chat has all of it)
RESULT_EXCERPT = 300


def trajectory_steps(sample: Sample, scores: Mapping[str, Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """An agent's tool calls as steps, in order: ``index``, ``turn``, ``name``, ``arguments``, an
    excerpt of the ``result``, and ``verdicts``: what each trajectory metric of the run said of that
    call (``{"metric", "ok", "text"}``: the right tool or not, valid arguments or the problem, a
    repeat of which call, an unexpected call)."""
    from ragmeter.dataset.trajectory import tool_steps

    steps = tool_steps(sample.messages)
    if not steps:
        return []
    said: dict[int, list[dict[str, Any]]] = {s.index: [] for s in steps}

    def details(metric: str) -> Mapping[str, Any]:
        job = scores.get(metric)
        d = job.get("details") if job else None
        return d if isinstance(d, Mapping) else {}

    for row in details("tool_selection").get("calls") or []:
        if row.get("turn") in said:
            right = bool(row.get("ok"))
            text = ("right tool" if right else "wrong tool") + (
                f": {row['reason']}" if row.get("reason") else ""
            )
            said[row["turn"]].append({"metric": "tool_selection", "ok": right, "text": text})
    if scores.get("tool_args_valid"):
        bad = {r.get("step"): r.get("problem") for r in details("tool_args_valid").get("invalid") or []}
        for i in said:
            ok = i not in bad
            said[i].append(
                {"metric": "tool_args_valid", "ok": ok, "text": "valid arguments" if ok else str(bad[i])}
            )
    for r in details("redundant_calls").get("repeats") or []:
        if r.get("step") in said:
            said[r["step"]].append(
                {"metric": "redundant_calls", "ok": False, "text": f"repeats call {r.get('repeats')}"}
            )
    for i in details("tool_call_correctness").get("unexpected_steps") or []:
        if i in said:
            said[i].append({"metric": "tool_call_correctness", "ok": False, "text": "not an expected call"})
    return [{**s.to_dict(RESULT_EXCERPT), "verdicts": said[s.index]} for s in steps]


def _conversation_fields(sample: Sample, scores: Sequence[Mapping[str, Any] | None]) -> dict[str, Any]:
    """What the pages need to show a conversation as a chat: its messages, each with its turn and
    whether it is the turn's scored answer (a conversation sample); a turn's history and the
    standalone question its metrics scored it with (a turn sample)."""
    from ragmeter.dataset.conversations import turn_layout
    from ragmeter.run.turns import DETAILS_KEY

    out: dict[str, Any] = {
        "conversation_id": sample.conversation_id,
        "turn": sample.turn,
        "level": sample.level,
    }
    if sample.messages is not None:
        layout = turn_layout(sample.messages)
        out["messages"] = [
            {**m.to_dict(), "turn": turn, "answer": answer}
            for m, (turn, answer) in zip(sample.messages, layout, strict=True)
        ]
    if sample.history is not None:
        out["history"] = [m.to_dict() for m in sample.history]
    standalone = next(
        (j["details"].get(DETAILS_KEY) for j in scores if j and isinstance(j.get("details"), Mapping)),
        None,
    )
    if standalone is not None:
        out["standalone_question"] = standalone
    return out


def run_header(result: RunView) -> dict[str, Any]:
    """What the pages show of a run besides its samples: id, status, data, judge, versions, usage."""
    meta = result.meta
    judge = meta.get("judge", {}) if isinstance(meta.get("judge"), Mapping) else {}
    return {
        "run_id": result.run_id,
        "status": result.status,
        "created_at": meta.get("created_at"),
        "source": meta.get("source"),
        "dataset_hash": meta.get("dataset_hash"),
        "judge": dict(judge),
        "prompt_versions": meta.get("prompt_versions", {}),
        "versions": meta.get("versions", {}),
        "config": meta.get("config", {}),
        "n_samples": result.n_samples,
        "n_conversations": sum(1 for _, s in result.samples if s.messages is not None),
        "n_skipped": result.n_skipped,
        "usage": result.usage.to_dict(),
        "cost": result.cost,
        "store": None if result.store_dir is None else str(result.store_dir),
        "traces": trace_summary(s for _, s in result.samples),
    }


def report_data(result: RunView) -> dict[str, Any]:
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
                **s.to_dict(),
                "higher_is_better": bool(spec.get("higher_is_better", True)),
                "params": spec.get("params", {}),
                "level": str(spec.get("level") or "sample"),
                "histogram": histogram(values),
            }
        )
    from ragmeter.run.label_agreement import run_agreement

    return {
        "kind": "report",
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run": run_header(result),
        "skipped": [p.to_dict() for p in result.problems],
        "metrics": metrics,
        # the judge against the run's own labels (ragmeter agreement RUN), per metric with labels
        "agreement": [r.to_dict() for r in run_agreement(result)],
        "samples": [
            sample_data(result, idx, sample, rows=rows) for idx, sample, rows in result.iter_samples()
        ],
    }
