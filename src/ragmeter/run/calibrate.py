"""Adapt the local judge to a run's labels: ``ragmeter calibrate RUN --metric faithfulness``.

For each labelled sample the claims the metric verifies are taken again from the stored sample,
the way the metric takes them with the local judge, and the support combiners' features of each
claim are computed (:meth:`~ragmeter.local.judge.LocalJudge.claim_features`): one *bag* of claim
rows per label. The combiners are refitted on the bags (:func:`ragmeter.local.refit.refit`:
sample labels, claim weights, a prior towards the packaged weights), and

- **cross-validated** agreement says whether that helps: folds of samples (a conversation's turns
  stay in one fold), stratified by label and seeded; each fold is scored by a refit on the other
  folds, and the out-of-fold scores are compared with the labels by the same statistics as
  ``ragmeter agreement`` (:func:`~ragmeter.stats.agreement.agreement_summary`), beside the judge's
  scores before the refit on the same samples, with a paired bootstrap interval of the gain in ROC
  AUC;
- the refit on **all** labels is the calibration (:class:`~ragmeter.local.calibration_file.Calibration`),
  written to a file that ``--judge local:FILE`` loads.

Which metrics: those whose value is the expected share of claims the contexts support, one claim
set against the contexts (:data:`CALIBRATABLE`); the others are refused with the reason
(:data:`NOT_CALIBRATABLE`). A calibration replaces the judge's support combiners for every metric
that verifies claims, not only the one whose labels fitted it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.errors import ConfigError

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.local.calibration_file import Calibration
    from ragmeter.local.judge import LocalJudge
    from ragmeter.local.refit import Bag
    from ragmeter.run.result import Result

#: metric -> the text whose claims it verifies against the contexts (its value: the expected share
#: of them the contexts support)
CALIBRATABLE: dict[str, str] = {"faithfulness": "answer", "context_recall": "reference"}
_SHARE = "the expected share of supported claims"
#: metrics a calibration cannot be fitted on, and why
NOT_CALIBRATABLE: dict[str, str] = {
    "factual_correctness": f"its score is an F1 of claims verified between answer and reference in both "
    f"directions, not {_SHARE} against the contexts: a label of the whole answer does not say which "
    "direction failed",
    "answer_correctness": "its score mixes a claim F1 between answer and reference with an embedding "
    "similarity, so a label of the whole answer does not bear on the support of its claims alone",
    "context_precision": "its score is an average precision over ranked chunks, each rated by its best "
    "claim, not " + _SHARE,
}
#: the fewest usable labels (samples with claims to check), and of each class, that calibrate fits on
MIN_LABELS = 30
MIN_PER_CLASS = 10
DEFAULT_FOLDS = 5
#: samples whose claims are featurised at once (the judge's batching serves them together)
_IN_FLIGHT = 16


def check_metric(metric: str) -> str:
    """The claim set a calibratable metric verifies, or a ConfigError saying why it is not one."""
    if metric in CALIBRATABLE:
        return CALIBRATABLE[metric]
    why = NOT_CALIBRATABLE.get(metric) or (
        "the local judge does not score it with the support combiner (the claim-support step) that "
        "a calibration refits"
    )
    raise ConfigError(
        f"cannot calibrate the local judge on {metric!r} labels: {why}. Calibratable metrics: "
        f"{', '.join(CALIBRATABLE)}"
    )


async def claim_rows(
    judge: LocalJudge, sample: Sample, metric: str, lang: str = "auto"
) -> list[dict[str, float]] | None:
    """The feature rows of the claims ``metric`` verifies on ``sample`` with the local judge (as the
    metric takes them: hedges off, the same contexts); None when it has none to verify (an invalid
    score: no claim, an empty field)."""
    from ragmeter.metrics._common import checked_contexts
    from ragmeter.metrics._shared import claim_sets, sample_lang

    text = check_metric(metric)
    contexts, bad = checked_contexts(sample, text)
    if bad is not None:
        return None
    sets = await claim_sets(
        judge, sample, sample_lang(lang, sample), answer=text == "answer", reference=text == "reference"
    )
    claims = (sets.answer if text == "answer" else sets.reference) or []
    if not claims:
        return None
    return await judge.claim_features(claims, contexts)


def cv_folds(groups: Sequence[str], labels: Sequence[float], k: int, seed: int) -> np.ndarray:
    """Fold of each row (0..k-1): rows of one group stay together; groups are dealt out per class
    (a group's class: its mean label >= 0.5) in a seeded random order, so every fold gets its
    share of each class. Deterministic for the same groups, labels, k and seed."""
    by_group: dict[str, list[float]] = {}
    for g, y in zip(groups, labels, strict=True):
        by_group.setdefault(g, []).append(float(y))
    rng = np.random.default_rng(seed)
    fold_of: dict[str, int] = {}
    start = 0
    for cls in (False, True):
        names = sorted(g for g, ys in by_group.items() if (float(np.mean(ys)) >= 0.5) == cls)
        for rank, pos in enumerate(rng.permutation(len(names))):
            fold_of[names[pos]] = (start + rank) % k
        start += len(names)  # the next class continues where this one stopped: folds stay even
    return np.array([fold_of[g] for g in groups], dtype=np.int64)


def cross_validated_scores(
    bags: Sequence[Bag],
    groups: Sequence[str],
    support: Any,
    plain: Any,
    *,
    label_kind: str,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    l2: float | None = None,
) -> np.ndarray:
    """Each bag's score by the combiners refitted on the other folds (:func:`cv_folds`)."""
    from ragmeter.local.refit import DEFAULT_L2, bag_scores, refit

    fold = cv_folds(groups, [b.label for b in bags], folds, seed)
    out = np.zeros(len(bags))
    for k in range(folds):
        test = np.flatnonzero(fold == k)
        if not test.size:
            continue
        train = [bags[int(i)] for i in np.flatnonzero(fold != k)]
        s_k, p_k = refit(train, support, plain, label_kind=label_kind, l2=DEFAULT_L2 if l2 is None else l2)
        out[test] = bag_scores([bags[int(i)] for i in test], s_k, p_k)
    return out


@dataclass(frozen=True)
class CalibrationReport:
    """What :func:`acalibrate` did: the cross-validated agreement ``before`` (the judge's own
    combiners) and ``after`` (refitted on the other folds), both
    :func:`~ragmeter.stats.agreement.agreement_summary` dicts over the same samples; ``gain``:
    the difference in ROC AUC, after - before, with its paired bootstrap 95% interval; the
    ``calibration`` fitted on all labels (``save`` it, or pass it to ``LocalJudge(calibration=)``)."""

    run_id: str
    metric: str
    label_kind: str
    n_labels: int
    n_without_claims: int
    labels: Mapping[str, int]
    folds: int
    seed: int
    l2: float
    before: Mapping[str, Any]
    after: Mapping[str, Any]
    gain: Mapping[str, Any]
    calibration: Calibration

    def save(self, path: str | Path) -> Path:
        return self.calibration.save(path)

    def judge(self, **options: Any) -> LocalJudge:
        """A local judge scoring with this calibration (``options``: LocalJudge's others)."""
        from ragmeter.local.judge import LocalJudge

        return LocalJudge(calibration=self.calibration, **options)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run_id,
            "metric": self.metric,
            "label_kind": self.label_kind,
            "n_labels": self.n_labels,
            "n_without_claims": self.n_without_claims,
            "labels": dict(self.labels),
            "folds": self.folds,
            "seed": self.seed,
            "l2": self.l2,
            "before": dict(self.before),
            "after": dict(self.after),
            "gain": dict(self.gain),
        }


def _needed(n: int, n_neg: int, n_pos: int, kind: str) -> str | None:
    """None when the labels are enough, else what is missing, in words."""
    more_neg = max(0, MIN_PER_CLASS - n_neg)
    more_pos = max(0, MIN_PER_CLASS - n_pos)
    more = max(MIN_LABELS - n, more_neg + more_pos, 0)
    if more == 0:
        return None
    neg, pos = ("labelled 0", "labelled 1") if kind == "binary" else ("below 0.5", "at 0.5 or above")
    parts = [f"at least {more} more"]
    side = [f"{m} more {what}" for m, what in ((more_neg, neg), (more_pos, pos)) if m]
    if side:
        parts.append("of them at least " + " and ".join(side))
    return ", ".join(parts)


def _gain(before: np.ndarray, after: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """ROC AUC after - before on the same samples, with a paired bootstrap interval (resampling
    within each class, seeded as the agreement statistics are)."""
    from ragmeter.stats.bootstrap import paired_bootstrap_ci
    from ragmeter.stats.rank import roc_auc

    pos = y >= 0.5

    def diff(b: np.ndarray, a: np.ndarray, p: np.ndarray) -> float:
        return float(roc_auc(a, p) - roc_auc(b, p))

    try:
        value = diff(before, after, pos)
        lo, hi = paired_bootstrap_ci(diff, before, after, pos, strata=pos, seed=0)
    except ValueError:
        return {"auc": None, "ci95": None}
    return {"auc": value, "ci95": [float(lo), float(hi)]}


def _lean(stats: Mapping[str, Any]) -> dict[str, Any]:
    """An agreement summary without its per-sample lists (for the calibration file)."""
    return {k: v for k, v in stats.items() if k != "disagreements"}


async def acalibrate(
    result: Result,
    metric: str = "faithfulness",
    *,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    l2: float | None = None,
    judge: LocalJudge | None = None,
) -> CalibrationReport:
    """Refit the local judge's support combiners on ``result``'s labels of ``metric`` (see the
    module docstring). ``judge``: the local judge whose combiners are the starting point and the
    prior and whose features are used (default: ``LocalJudge()``, the packaged one); ``l2``: the
    prior's strength (default :data:`~ragmeter.local.refit.DEFAULT_L2`); ``folds``, ``seed``: the
    cross-validation. Refuses (ConfigError) a metric that cannot be calibrated and too few labels,
    saying how many more it needs."""
    from ragmeter.local.calibration_file import Calibration, key_digest, packaged_features
    from ragmeter.local.judge import LocalJudge
    from ragmeter.local.refit import DEFAULT_L2, LINKS, Bag, bag_scores, refit
    from ragmeter.log.labels import draw_order
    from ragmeter.run.label_agreement import point_kind
    from ragmeter.run.labels import export_id
    from ragmeter.stats.agreement import agreement_summary

    check_metric(metric)
    if metric not in result.metric_names:
        raise ConfigError(
            f"run {result.run_id} has no metric {metric!r}; its metrics: {', '.join(result.metric_names)}"
        )
    if folds < 2:
        raise ConfigError(f"folds must be at least 2, got {folds}")
    strength = DEFAULT_L2 if l2 is None else float(l2)
    if not strength > 0:
        raise ConfigError(f"l2 must be positive, got {l2}")
    position = {idx: i for i, idx in enumerate(draw_order(result.keys, result.draw_seed()))}
    labels = sorted(
        (lab for lab in result.labels if lab.metric == metric), key=lambda lab: (position[lab.idx], lab.idx)
    )
    if not labels:
        raise ConfigError(
            f"run {result.run_id} has no labels of {metric!r}; label at least {MIN_LABELS} of its samples "
            f"({MIN_PER_CLASS} of each class) first (docs/trust.md, 'Labelling a run')"
        )
    kind = point_kind([lab.label_kind for lab in labels])
    spec: dict[str, Any] = next((m for m in result.meta.get("metrics", []) if m.get("name") == metric), {})
    lang = str((spec.get("params") or {}).get("lang") or "auto")
    if judge is not None and not isinstance(judge, LocalJudge):
        raise ConfigError(
            f"calibrate refits the local judge's combiners; judge= must be a LocalJudge, not {type(judge).__name__}"
        )
    the_judge = judge if judge is not None else LocalJudge()
    samples = dict(result.samples)

    rows = await _bags_rows(the_judge, [samples[lab.idx] for lab in labels], metric, lang)
    used = [(lab, r) for lab, r in zip(labels, rows, strict=True) if r is not None]
    n_without = len(labels) - len(used)
    y = np.array([lab.value for lab, _ in used], dtype=np.float64)
    n_neg, n_pos = int((y < 0.5).sum()), int((y >= 0.5).sum())
    missing = _needed(len(used), n_neg, n_pos, kind)
    if missing is not None:
        neg, pos = ("labelled 0", "labelled 1") if kind == "binary" else ("below 0.5", "at 0.5 or above")
        raise ConfigError(
            f"too few labels to calibrate on: calibrate needs at least {MIN_LABELS} labelled samples of "
            f"{metric!r} with claims to check, at least {MIN_PER_CLASS} {neg} and {MIN_PER_CLASS} {pos} "
            f"(both classes, for the fit and its cross-validation); run {result.run_id} has {len(used)} "
            f"({n_neg} {neg}, {n_pos} {pos})"
            + (
                f" and {n_without} labelled sample(s) without a claim to check, which cannot inform it"
                if n_without
                else ""
            )
            + f": label {missing}"
        )
    bags: list[Bag] = [Bag(tuple(r), float(lab.value)) for lab, r in used]
    groups = [_group(samples[lab.idx], lab.idx) for lab, _ in used]
    support, plain = the_judge.support, the_judge.support_plain
    before = bag_scores(bags, support, plain)
    after = cross_validated_scores(
        bags, groups, support, plain, label_kind=kind, folds=folds, seed=seed, l2=strength
    )
    threshold = spec.get("threshold")
    common: dict[str, Any] = {
        "threshold": 0.5 if threshold is None else float(threshold),
        "higher_is_better": bool(spec.get("higher_is_better", True)),
        "ids": [export_id(result.keys[lab.idx]) for lab, _ in used],
    }
    stats_before = agreement_summary("point", kind, scores=before.tolist(), labels=y.tolist(), **common)
    stats_after = agreement_summary("point", kind, scores=after.tolist(), labels=y.tolist(), **common)
    gain = _gain(before, after, y)
    counts = {"random": sum(1 for lab, _ in used if lab.drawn == "random")}
    counts["picked"] = len(used) - counts["random"]

    fit_record = {
        "kind": "calibrated",
        "version": "calibrated",
        "script": "ragmeter calibrate",
        "prior": {"support": support.record.get("version"), "support_plain": plain.record.get("version")},
    }
    s_all, p_all = refit(bags, support, plain, label_kind=kind, l2=strength, record=fit_record)
    record: dict[str, Any] = {
        "features": packaged_features(the_judge.embedder, the_judge.verifier),
        "fitted_on": {
            "run": result.run_id,
            "dataset_hash": result.meta.get("dataset_hash"),
            "n_labels": len(used),
            "n_without_claims": n_without,
            "label_kind": kind,
            "labels": counts,
            "n_claims": sum(len(b.rows) for b in bags),
            "sample_keys": sorted(key_digest(result.keys[lab.idx]) for lab, _ in used),
        },
        "fit": {
            "link": LINKS[kind],
            "l2": strength,
            "prior": "the packaged combiners" if judge is None else "the judge's combiners",
            "folds": folds,
            "seed": seed,
        },
        "agreement": {
            "cross_validated": True,
            "before": _lean(stats_before),
            "after": _lean(stats_after),
            "gain": gain,
        },
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "ragmeter": _version(),
    }
    calibration = Calibration(s_all, p_all, metric, record)
    return CalibrationReport(
        run_id=result.run_id,
        metric=metric,
        label_kind=kind,
        n_labels=len(used),
        n_without_claims=n_without,
        labels=counts,
        folds=folds,
        seed=seed,
        l2=strength,
        before=stats_before,
        after=stats_after,
        gain=gain,
        calibration=calibration,
    )


def _group(sample: Sample, idx: int) -> str:
    """A sample's CV group: its conversation (turns share their contexts and history), else itself."""
    return f"conversation:{sample.conversation_id}" if sample.conversation_id is not None else f"sample:{idx}"


def _version() -> str:
    from ragmeter import __version__

    return __version__


async def _bags_rows(
    judge: LocalJudge, samples: Sequence[Sample], metric: str, lang: str
) -> list[list[dict[str, float]] | None]:
    """:func:`claim_rows` of each sample, :data:`_IN_FLIGHT` at a time (in order)."""
    out: list[list[dict[str, float]] | None] = [None] * len(samples)
    todo: Iterable[int] = iter(range(len(samples)))

    async def worker() -> None:
        for i in todo:
            out[i] = await claim_rows(judge, samples[i], metric, lang)

    from ragmeter.run.sync import gather_or_cancel

    await gather_or_cancel(
        [asyncio.ensure_future(worker()) for _ in range(min(_IN_FLIGHT, len(samples)) or 1)]
    )
    return out


def calibrate(result: Result, metric: str = "faithfulness", **options: Any) -> CalibrationReport:
    """Sync form of :func:`acalibrate`."""
    from ragmeter.run.sync import run_sync

    return run_sync(acalibrate(result, metric, **options))


__all__ = [
    "CALIBRATABLE",
    "MIN_LABELS",
    "MIN_PER_CLASS",
    "NOT_CALIBRATABLE",
    "CalibrationReport",
    "acalibrate",
    "calibrate",
    "check_metric",
    "claim_rows",
    "cross_validated_scores",
    "cv_folds",
]
