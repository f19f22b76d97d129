"""Agreement of a metric with people on labelled judgement files (``ragmeter agreement FILE``); a
run's stored scores against its own labels is :mod:`ragmeter.run.label_agreement`. Both end in one
function, :func:`~ragmeter.stats.agreement.agreement_summary`.

For each file and aspect, both variants of each pair (or each point) are scored with the metric
for that aspect (or the one a record names), then: pairs -> accuracy (ties count one half); points
-> the statistics of binary labels (accuracy, kappa, TPR, TNR, balanced accuracy at the metric's
threshold, ROC AUC) or, when any label of the group is graded, of graded ones (Spearman, Kendall,
AUC at label 0.5); each with a bootstrap 95% CI, ``n`` (valid) and ``n_invalid``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragmeter.dataset.sample import Dataset, Sample
from ragmeter.errors import ConfigError
from ragmeter.metrics.base import Metric
from ragmeter.metrics.registry import get_metric, list_metrics
from ragmeter.run.config import RunConfig
from ragmeter.run.label_agreement import AgreementReport, point_kind
from ragmeter.run.labels import ASPECT_METRICS
from ragmeter.run.runner import aevaluate, check_judge_supports, left_out_metrics, resolve_judge
from ragmeter.run.sync import run_sync

# ASPECT_METRICS (run/labels.py): aspect of a judgement -> the metrics that measure it, in order of
# preference: the first one whose steps the judge supports is used (correctness: LlamaIndex's graded
# ``correctness`` for an LLM judge, ``answer_correctness`` for a judge that cannot ``grade``). A record
# that names its ``metric`` is scored with that metric.


def metric_for_aspect(aspect: str, override: str | None, judge: Any = None) -> Metric:
    """The metric for ``aspect``: ``override``, else the first of :data:`ASPECT_METRICS` that exists
    and whose steps ``judge`` supports (the first that exists when no judge is given or none fits)."""
    if override:
        name: str | None = override
    else:
        known = [n for n in ASPECT_METRICS.get(aspect, ()) if n in list_metrics()]
        fits = [n for n in known if judge is None or all(judge.supports(s) for s in list_metrics()[n].steps)]
        candidates = fits or known or list(ASPECT_METRICS.get(aspect, ()))
        name = candidates[0] if candidates else None
    if name is None:
        raise ConfigError(f"no metric is known for aspect {aspect!r}; give --metric")
    if name not in list_metrics():
        raise ConfigError(
            f"aspect {aspect!r} is measured by metric {name!r}, which this version of ragmeter does not have; "
            f"give --metric with one of: {', '.join(list_metrics())}"
        )
    return get_metric(name)


async def aagreement(
    files: Sequence[str | Path],
    judge: Any = None,
    *,
    metric: str | None = None,
    concurrency: int = 16,
    limit: int | None = None,
    progress: bool | None = None,
) -> list[AgreementReport]:
    """Score every judgement file; one report per (file, aspect, kind). A metric the judge cannot
    compute (an agent's ``tool_selection`` with the local judge) gets a report of kind
    ``"left_out"`` whose stats say why (``{"n", "left_out"}``); when every metric is, nothing is
    scored and UnsupportedStepError says why."""
    from ragmeter.dataset.judgements import load_judgements
    from ragmeter.stats.agreement import agreement_summary

    the_judge = resolve_judge(judge)
    loaded = []
    for f in files:
        loaded.append((str(f), list(load_judgements(f, limit=limit))))
    # Check every (aspect -> metric) before any call.
    groups: dict[tuple[str, str, str, str], list[Any]] = {}
    metrics: dict[tuple[str, str], Metric] = {}
    for fname, judgements in loaded:
        for j in judgements:
            kind = "pair" if j.kind == "pair" else "point"
            named = metric or j.metric or ""  # --metric, else the record's own metric, else the aspect's
            groups.setdefault((fname, j.aspect, named, kind), []).append(j)
            if (j.aspect, named) not in metrics:
                metrics[j.aspect, named] = metric_for_aspect(j.aspect, named or None, the_judge)
    # the run's rule: the metrics the judge cannot compute are left out, each reported with why;
    # when that leaves nothing, refuse before any call
    left_out = {d["metric"]: d["why"] for d in left_out_metrics(list(metrics.values()), the_judge)}
    if len(left_out) == len({m.name for m in metrics.values()}):
        check_judge_supports(list(metrics.values()), the_judge)

    reports: list[AgreementReport] = []
    owns_judge = judge is None or isinstance(judge, str)
    try:
        for (fname, aspect, named, kind), items in groups.items():
            m = metrics[aspect, named]
            if m.name in left_out:
                stats = {"n": len(items), "left_out": left_out[m.name]}
                reports.append(AgreementReport(fname, aspect, m.name, the_judge.name, "left_out", stats))
                continue
            samples: list[Sample] = []
            for j in items:
                if kind == "pair":
                    samples.extend([j.sample_a, j.sample_b])
                else:
                    samples.append(j.sample)
            dataset = Dataset(tuple(samples), source=fname)
            result = await aevaluate(
                dataset,
                [m],
                the_judge,
                config=RunConfig(concurrency=concurrency, progress=progress),
            )
            values = [None if s is None or not s.valid else s.value for s in result.scores(m.name)]
            if kind == "pair":
                preferred, other = [], []
                for i, j in enumerate(items):
                    a, b = values[2 * i], values[2 * i + 1]
                    preferred.append(a if j.preferred == "a" else b)
                    other.append(b if j.preferred == "a" else a)
                stats = agreement_summary(
                    "pair", preferred=preferred, other=other, higher_is_better=m.higher_is_better
                )
            else:
                kind = point_kind([j.label_kind or "binary" for j in items])
                stats = agreement_summary(
                    "point",
                    kind,
                    scores=values,
                    labels=[float(j.label) for j in items],
                    threshold=_threshold(m),
                    higher_is_better=m.higher_is_better,
                    ids=[j.id for j in items],
                )
            reports.append(AgreementReport(fname, aspect, m.name, the_judge.name, kind, stats))
    finally:
        if owns_judge:
            await the_judge.aclose()
    return reports


def _threshold(m: Metric) -> float:
    return 0.5 if m.threshold is None else float(m.threshold)


def agreement(files: Sequence[str | Path], judge: Any = None, **options: Any) -> list[AgreementReport]:
    """Sync form of :func:`aagreement`."""
    return run_sync(aagreement(files, judge, **options))
