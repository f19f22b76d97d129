"""--dry-run: count the calls and estimate the tokens a run would spend, without calling anything.

With an LLM judge the run is *rehearsed*: the real metrics run with a copy of the judge (same
prompts, data fences, combined steps, memo and configuration) whose provider is
:class:`~ragmeter.judges.providers.rehearsal.RehearsalProvider`, which answers every request with
a made-up reply of the right shape and sends nothing. So the request count is the run's own (shared
calls counted once, under the metric whose job made them), and prompt tokens are those of the
prompts the run would render, at about 4 characters per token (1 per CJK character). What depends
on the judge's answers is estimated: claims are taken to be the sentences of the text, replies
are of typical length. Retries, repair rounds and the reply cache are not counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.metrics.registry import resolve_metrics


@dataclass
class StepEstimate:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Estimate:
    n_samples: int
    n_problems: int
    judge: str
    per_metric: dict[str, dict[str, StepEstimate]] = field(default_factory=dict)
    embed_texts: int = 0
    problems: list[str] = field(default_factory=list)
    #: metric -> step answers it gets from another metric's call on the same sample (the memo)
    shared: dict[str, int] = field(default_factory=dict)
    #: metrics the judge cannot compute, which the run would leave out, and why
    left_out: list[dict[str, Any]] = field(default_factory=list)

    def totals(self) -> StepEstimate:
        total = StepEstimate()
        for steps in self.per_metric.values():
            for e in steps.values():
                total.calls += e.calls
                total.prompt_tokens += e.prompt_tokens
                total.completion_tokens += e.completion_tokens
        return total

    def to_dict(self) -> dict[str, Any]:
        t = self.totals()
        return {
            "dry_run": True,
            "n_samples": self.n_samples,
            "n_problems": self.n_problems,
            "judge": self.judge,
            "note": "rehearsed with the run's prompts and shared calls; replies simulated; "
            "before retries, repair rounds and the reply cache",
            "estimate": {
                "requests": t.calls,
                "prompt_tokens": t.prompt_tokens,
                "completion_tokens": t.completion_tokens,
                "texts_embedded": self.embed_texts,
            },
            "metrics": {m: {s: vars(e) for s, e in steps.items()} for m, steps in self.per_metric.items()},
            "shared": self.shared,
            "problems": self.problems,
            **({"metrics_left_out": self.left_out} if self.left_out else {}),
        }

    def render(self) -> str:
        t = self.totals()
        lines = [
            f"dry run: {self.n_samples} samples, {self.n_problems} input problem(s), judge {self.judge}",
            "estimated LLM requests (rehearsed: the run's prompts, shared calls counted once under the "
            "metric that makes them; before retries, repairs and the reply cache):",
        ]
        for m, steps in self.per_metric.items():
            if self.shared.get(m):
                lines.append(f"  {m}: {self.shared[m]} answers from calls counted under another metric")
            elif not steps:
                lines.append(f"  {m}: no LLM calls")
            for s, e in steps.items():
                lines.append(
                    f"  {m} / {s}: {e.calls} requests, ~{e.prompt_tokens} prompt + "
                    f"~{e.completion_tokens} completion tokens"
                )
        lines.append(
            f"total: {t.calls} requests, ~{t.prompt_tokens} prompt + ~{t.completion_tokens} completion tokens; "
            f"{self.embed_texts} texts to embed"
        )
        for x in self.left_out:
            lines.append(f"left out {x['metric']}: {x['why']}")
        for p in self.problems[:20]:
            lines.append(f"problem: {p}")
        return "\n".join(lines)


def estimate_run(
    data: Any,
    metrics: Sequence[Any],
    judge: Any,
    *,
    mapping: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> Estimate:
    """Count what a run of ``metrics`` on ``data`` with ``judge`` would do, calling nothing.

    The data are read as a stream, like a run's (:mod:`ragmeter.run.intake`): once to count samples,
    problems and jobs, and once more to rehearse an LLM judge's requests, a window of jobs at a
    time, so a dry run of a large file holds no more than a run of it does."""
    from ragmeter.dataset.seen import SpilledSeen
    from ragmeter.dataset.sources import SampleStream
    from ragmeter.judges.llm import LLMJudge
    from ragmeter.run.intake import Reading
    from ragmeter.run.runner import check_judge_supports, left_out_metrics

    metric_list = resolve_metrics(list(metrics))
    # the run's rule (runner.aevaluate): the metrics the judge cannot compute are left out, and
    # a run of nothing else is refused
    left_out = left_out_metrics(metric_list, judge)
    if len(left_out) == len(metric_list):
        check_judge_supports(metric_list, judge)
    metric_list = [m for m in metric_list if m.name not in {x["metric"] for x in left_out}]
    reading = Reading(SampleStream(data, mapping=mapping, limit=limit, seen=SpilledSeen()), metric_list)
    est = Estimate(
        n_samples=0, n_problems=0, judge=judge.name, per_metric={m.name: {} for m in metric_list}, left_out=left_out
    )
    embeds = {m.name: 4 * sum(1 for step in m.steps if step == "embed") for m in metric_list}
    for _, _, able in reading:
        # Only an LLM judge sends requests; the local judge answers every step on this machine.
        est.embed_texts += sum(embeds[m.name] for m in able)
        est.problems.extend(str(p) for p in reading.take_problems())
    est.problems.extend(str(p) for p in reading.take_problems())
    est.n_samples = reading.intake.n_samples
    est.n_problems = reading.intake.n_problems
    if isinstance(judge, LLMJudge) and reading.intake.n_jobs:
        stream = SampleStream(data, mapping=mapping, limit=limit, seen=SpilledSeen())
        _rehearse(est, stream, metric_list, judge, reading.intake.jobs_per_metric)
    return est


def _rehearse(
    est: Estimate, stream: Any, metrics: Sequence[Any], judge: Any, jobs_per_metric: Mapping[str, int]
) -> None:
    """Run ``metrics`` on the samples of ``stream`` with a rehearsal copy of ``judge`` and count
    its requests as each job finishes (nothing is kept)."""
    import numpy as np

    from ragmeter.judges.cache import NullCache
    from ragmeter.judges.client import ModelClient
    from ragmeter.judges.config import JudgeConfig
    from ragmeter.judges.llm import LLMJudge
    from ragmeter.judges.providers.fake import hash_embedding
    from ragmeter.judges.providers.rehearsal import RehearsalProvider
    from ragmeter.log.store import ScoreRow
    from ragmeter.run.config import RunConfig
    from ragmeter.run.executor import apply_run_concurrency, run_jobs, steps_of_metrics
    from ragmeter.run.intake import memory_jobs
    from ragmeter.run.sync import run_sync

    class _Embedder:
        def embed(self, texts: Sequence[str]) -> Any:
            return np.stack([hash_embedding(t, 16) for t in texts])

    cfg = judge.client.config.to_dict()
    cfg.update(rpm=None, tpm=None, max_retries=0)
    # the mode the run's requests will go in (in auto: the first one tried, or the one settled on)
    mode = getattr(judge.client.provider, "structured_mode", None) or "none"
    client = ModelClient(RehearsalProvider(judge.client.model, mode), JudgeConfig(**cfg), NullCache())
    rehearsal = LLMJudge(
        client,
        _Embedder() if judge.embedder is not None else None,
        judge.prompts_dir,
        combine=judge.combine_steps,
    )

    def count(row: ScoreRow) -> None:
        for call in row.calls:
            if call["step"] == "embed":
                continue
            if call["cached"]:
                est.shared[row.metric] = est.shared.get(row.metric, 0) + 1
                continue
            e = est.per_metric[row.metric].setdefault(call["step"], StepEstimate())
            e.calls += int(call["usage"]["requests"])
            e.prompt_tokens += int(call["usage"]["prompt_tokens"])
            e.completion_tokens += int(call["usage"]["completion_tokens"])

    config = RunConfig(concurrency=64, progress=False)
    apply_run_concurrency(rehearsal, config.concurrency)
    samples = ((idx, item.sample) for idx, item in enumerate(stream))
    used = [m for m in metrics if jobs_per_metric.get(m.name)]

    async def rehearse() -> None:
        try:
            await run_jobs(
                memory_jobs(samples, metrics),
                rehearsal,
                config,
                None,
                "dry-run",
                keep_rows=False,
                total=sum(jobs_per_metric.values()),
                steps=steps_of_metrics(used),
                sink=count,
            )
        finally:
            await rehearsal.aclose()

    run_sync(rehearse())
