"""--dry-run: count the calls and estimate the tokens a run would spend, without calling anything.

Estimates are per judge step (the judge protocol's steps, see :mod:`ragmeter.judges.base`): the
prompt's own text plus the sample text the step sends, at about 4 characters per token for
alphabetic text and 1 token per CJK character; completions from the typical reply size of each
step. Calls served from the cache are not subtracted. It is an estimate and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError
from ragmeter.metrics.base import resolve_metrics
from ragmeter.text import detect_lang, split_sentences


def estimate_tokens(text: str) -> int:
    """About 4 characters per token for alphabetic text, one token per CJK character."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    return cjk + (len(text) - cjk + 3) // 4


def _claims(s: Sample) -> int:
    return max(1, len(split_sentences(s.answer or ""))) * 2


#: step -> (the sample text the step sends, typical completion tokens)
STEP_MODEL: dict[str, tuple[Callable[[Sample], str], Callable[[Sample], int]]] = {
    "extract_claims": (
        lambda s: f"{s.question}\n{s.answer or ''}",
        lambda s: int(estimate_tokens(s.answer or "") * 1.3) + 10,
    ),
    "verify_claims": (
        lambda s: "\n".join(s.contexts) + "\n" + (s.answer or "") * 2,
        lambda s: 45 * _claims(s) + 10,
    ),
    "generate_questions": (lambda s: s.answer or "", lambda s: 70),
    "rate_sentences": (
        lambda s: f"{s.question}\n" + "\n".join(s.contexts),
        lambda s: 8 * sum(len(split_sentences(c)) for c in s.contexts) + 10,
    ),
    "rate_chunks": (
        lambda s: f"{s.question}\n" + "\n".join(s.contexts) + f"\n{s.reference or s.answer or ''}",
        lambda s: 30 * len(s.contexts) + 10,
    ),
    "grade": (
        lambda s: f"{s.question}\n{s.answer or ''}\n{s.reference or ''}\n" + "\n".join(s.contexts),
        lambda s: 80,
    ),
    # pairwise asks both orders: two calls, each with both answers
    "compare": (
        lambda s: f"{s.question}\n{s.answer or ''}\n{s.metadata.get('answer_b', '')}\n{s.reference or ''}",
        lambda s: 80,
    ),
}

#: calls a step makes per job (pairwise comparison asks in both orders)
STEP_CALLS: dict[str, int] = {"compare": 2}


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
            "note": "upper bound: each metric counted alone, before shared steps, memo and cache",
            "estimate": {
                "requests": t.calls,
                "prompt_tokens": t.prompt_tokens,
                "completion_tokens": t.completion_tokens,
                "texts_embedded": self.embed_texts,
            },
            "metrics": {m: {s: vars(e) for s, e in steps.items()} for m, steps in self.per_metric.items()},
            "problems": self.problems,
        }

    def render(self) -> str:
        t = self.totals()
        lines = [
            f"dry run: {self.n_samples} samples, {self.n_problems} input problem(s), judge {self.judge}",
            "estimated LLM requests (upper bound: each metric alone, before shared steps, cache and retries):",
        ]
        for m, steps in self.per_metric.items():
            if not steps:
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
        for p in self.problems[:20]:
            lines.append(f"problem: {p}")
        return "\n".join(lines)


def _prompt_overhead(step: str, lang: str, prompts_dir: Any) -> int:
    try:
        from ragmeter.judges.prompts import load_prompt

        p = load_prompt(step, lang, overrides_dir=prompts_dir)
    except (ConfigError, FileNotFoundError, ImportError):
        return 300
    return estimate_tokens(p.system) + estimate_tokens(p.user) + estimate_tokens(str(p.schema))


def estimate_run(
    data: Any,
    metrics: Sequence[Any],
    judge: Any,
    *,
    mapping: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> Estimate:
    from ragmeter.dataset.sources import load_dataset
    from ragmeter.run.runner import check_judge_supports, plan_jobs

    metric_list = resolve_metrics(list(metrics))
    check_judge_supports(metric_list, judge)
    dataset = load_dataset(data, mapping=mapping, limit=limit)
    plan = plan_jobs(dataset, metric_list)
    describe = judge.describe() if hasattr(judge, "describe") else {}
    prompts_dir = describe.get("prompts_dir") if isinstance(describe, dict) else None
    est = Estimate(
        n_samples=len(dataset),
        n_problems=len(plan.problems),
        judge=judge.name,
        per_metric={m.name: {} for m in metric_list},
        problems=[str(p) for p in plan.problems],
    )
    from ragmeter.judges.llm import LLMJudge

    # Only an LLM judge sends requests; the local judge answers every step on this machine.
    llm_steps = set(STEP_MODEL) if isinstance(judge, LLMJudge) else set()
    overhead: dict[tuple[str, str], int] = {}
    for job in plan.jobs:
        lang = detect_lang(f"{job.sample.question} {job.sample.answer or ''}")
        for step in job.metric.steps:
            if step == "embed":
                est.embed_texts += 4
                continue
            if step not in llm_steps:
                continue
            key = (step, lang)
            if key not in overhead:
                overhead[key] = _prompt_overhead(step, lang, prompts_dir)
            text_fn, completion_fn = STEP_MODEL[step]
            repeats = int(getattr(job.metric, "n", 1)) if hasattr(job.metric, "inner") else 1
            calls = STEP_CALLS.get(step, 1) * repeats
            e = est.per_metric[job.metric.name].setdefault(step, StepEstimate())
            e.calls += calls
            e.prompt_tokens += calls * (overhead[key] + estimate_tokens(text_fn(job.sample)))
            e.completion_tokens += calls * completion_fn(job.sample)
    return est
