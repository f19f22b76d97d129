"""The calibrated estimate of a metric: the *human* mean, from the judge's scores on all of a
run's samples and people's random-drawn labels on some of them (PPI++, :mod:`ragmeter.stats.ppi`).

What goes in, for a metric:

- **the population**: the samples the metric has a score for (valid or invalid); a sample it
  skipped for a missing field is no part of what it measures;
- **the labels**: the random labels on the labelled prefix of the run's draw
  (:mod:`ragmeter.log.labels`); picked labels and random ones held back behind a skipped sample
  are not used (``n_held_back``, ``n_picked`` say how many there are);
- **the judge's prediction** of each sample: its valid score; an **invalid score** enters as the
  mean of the metric's valid scores over the run (``n_imputed`` counts them). PPI's interval is
  valid for any prediction, so the estimate still covers the human mean over *all* the metric's
  samples, the ones the judge could not score included; the imputed value only says nothing about
  those samples, and the labels correct for it (an invalid-scored sample that was labelled counts
  with its label, as every labelled sample does). Nothing is dropped.

The interval is clipped to [0, 1], the range of a label. Below :data:`MIN_LABELS` random labels
there is no interval (``mean`` and ``ci95`` are None and ``needed`` says how many more to give).
With fewer than :data:`FEW_OF_A_KIND` labels on either side of 0.5 the normal approximation is
too narrow (measured in docs/trust.md), and ``warning`` says so.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.log.labels import Label, draw_order, draw_progress

if TYPE_CHECKING:
    from ragmeter.run.result import Result

#: random labels needed before the calibrated estimate has an interval
MIN_LABELS = 10
#: fewer labels than this on one side of 0.5 (either class, for binary labels): the interval warns
FEW_OF_A_KIND = 10
METHOD = "ppi++"


def calibrated_estimate(
    metric: str,
    scores: Mapping[int, float | None],
    labels: Sequence[Label],
    keys: Mapping[int, str],
    seed: int,
    fitted: Collection[str] = (),
) -> dict[str, Any] | None:
    """The calibrated estimate of ``metric`` (see the module docstring), or None when the run has
    no random label for it. ``scores``: ``{idx: value}`` for every sample the metric has a score
    for, None where the score is invalid; ``labels``: the run's labels (any metric); ``keys``:
    every sample's key; ``seed``: the run's draw seed. ``fitted``: digests of the sample keys whose
    labels the judge was calibrated on (:func:`ragmeter.local.calibration_file.key_digest`); a
    labelled sample among them makes ``warning`` say that the interval does not hold."""
    from ragmeter.stats.ppi import ppi_mean

    mine = [lab for lab in labels if lab.metric == metric]
    progress = draw_progress(metric, seed, draw_order(keys, seed), mine, eligible=scores)
    if progress.n_random == 0:
        return None
    value = {lab.idx: lab.value for lab in mine if lab.drawn == "random"}
    labelled = list(progress.prefix)
    chosen = set(labelled)
    pred = judge_predictions(scores)
    fill = _fill(scores)
    out: dict[str, Any] = {
        "mean": None,
        "ci95": None,
        "n_labels": len(labelled),
        "method": METHOD,
        "lambda": None,
        "labels_only_mean": None,
        "labels_only_ci95": None,
        "n_samples": len(scores),
        "n_imputed": sum(1 for v in scores.values() if v is None),
        "n_held_back": progress.n_held_back,
        "n_picked": progress.n_picked,
        "needed": max(0, MIN_LABELS - len(labelled)),
        "warning": None,
    }
    if len(labelled) < MIN_LABELS:
        return out
    y = [value[i] for i in labelled]
    f_lab = [pred[i] for i in labelled]
    f_unlab = [pred[i] for i in scores if i not in chosen]
    if f_unlab:
        est = ppi_mean(y, f_lab, f_unlab)
    else:  # every sample labelled: the labels alone
        est = ppi_mean(y, f_lab, [fill], lam=0.0)
    out.update(
        mean=est.mean,
        ci95=[_clip(est.ci[0]), _clip(est.ci[1])],
        **{"lambda": est.lam},
        labels_only_mean=est.labels_only_mean,
        labels_only_ci95=[_clip(est.labels_only_ci[0]), _clip(est.labels_only_ci[1])],
    )
    high = sum(1 for v in y if v >= 0.5)
    if min(high, len(y) - high) < FEW_OF_A_KIND:
        out["warning"] = (
            f"only {min(high, len(y) - high)} of the {len(y)} labels are "
            f"{'below' if high > len(y) - high else 'at or above'} 0.5: with so few of a kind this "
            "normal-approximation interval is often too narrow; label more samples of the draw"
        )
    if fitted:
        from ragmeter.local.calibration_file import key_digest

        digests = set(fitted)
        n_fitted = sum(1 for i in labelled if key_digest(keys[i]) in digests)
        if n_fitted:
            out["warning"] = (
                f"the judge was calibrated on the labels of {n_fitted} of these {len(labelled)} labelled "
                "samples (ragmeter calibrate): its scores there were fitted to those labels, so this "
                "interval is too narrow and its correction too small; estimate with the labels of "
                "other samples, or with the judge before calibration"
                + ("; also " + out["warning"] if out["warning"] else "")
            )
    return out


def _clip(x: float, lo: float = 0.0) -> float:
    return min(1.0, max(lo, float(x)))


def _fill(scores: Mapping[int, float | None]) -> float:
    valid = [v for v in scores.values() if v is not None]
    return sum(valid) / len(valid) if valid else 0.5


def judge_predictions(scores: Mapping[int, float | None]) -> dict[int, float]:
    """The judge's prediction of each sample of ``scores`` (``{idx: value}``, None where the score
    is invalid): the valid score, else the mean of the valid scores (0.5 when there is none)."""
    fill = _fill(scores)
    return {idx: (fill if v is None else float(v)) for idx, v in scores.items()}


def predictions(result: Result, metric: str) -> dict[int, float]:
    """The judge's prediction of each sample ``metric`` has a score for (:func:`judge_predictions`)."""
    rows = {idx: result.score(idx, metric) for idx, _ in result.samples}
    return judge_predictions({idx: (sc.value if sc.valid else None) for idx, sc in rows.items() if sc is not None})


def prefix_labels(result: Result, metric: str, labels: Sequence[Label] | None = None) -> dict[int, float]:
    """``{idx: label}`` of the random labels of ``metric`` on the labelled prefix of the run's draw."""
    labels = result.labels if labels is None else labels
    mine = [lab for lab in labels if lab.metric == metric]
    if not any(lab.drawn == "random" for lab in mine):
        return {}
    seed = result.draw_seed()
    scored = [idx for idx, _ in result.samples if result.score(idx, metric) is not None]
    progress = draw_progress(metric, seed, draw_order(result.keys, seed), mine, eligible=scored)
    value = {lab.idx: lab.value for lab in mine if lab.drawn == "random"}
    return {idx: value[idx] for idx in progress.prefix}


def calibrated_difference(
    a: Result, b: Result, pairs: Sequence[tuple[str, int, int]], metric: str
) -> dict[str, Any] | None:
    """The calibrated estimate of the paired difference of human means, B - A, over the matched
    samples ``pairs`` (key, idx in A, idx in B) that both runs scored: the labels are the pairs
    with a random label on the labelled prefix of the draw in *both* runs (each run's prefix is a
    random sample that no label chose, so their intersection is one too; runs over the same
    questions share the draw, so their prefixes line up), the prediction of a pair is the
    judge's B - A. None when no pair is labelled in both runs; no interval below
    :data:`MIN_LABELS` labelled pairs. The interval is clipped to [-1, 1]."""
    from ragmeter.stats.ppi import ppi_mean

    la, lb = prefix_labels(a, metric), prefix_labels(b, metric)
    if not la or not lb:
        return None
    fa, fb = predictions(a, metric), predictions(b, metric)
    usable = [(ia, ib) for _, ia, ib in pairs if ia in fa and ib in fb]
    labelled = [(ia, ib) for ia, ib in usable if ia in la and ib in lb]
    if not labelled:
        return None
    out: dict[str, Any] = {
        "diff": None,
        "ci95": None,
        "n_labels": len(labelled),
        "method": METHOD,
        "lambda": None,
        "labels_only_diff": None,
        "labels_only_ci95": None,
        "n_pairs": len(usable),
        "needed": max(0, MIN_LABELS - len(labelled)),
    }
    if len(labelled) < MIN_LABELS:
        return out
    chosen = set(labelled)
    y = [lb[ib] - la[ia] for ia, ib in labelled]
    f_lab = [fb[ib] - fa[ia] for ia, ib in labelled]
    f_unlab = [fb[ib] - fa[ia] for ia, ib in usable if (ia, ib) not in chosen]
    est = ppi_mean(y, f_lab, f_unlab) if f_unlab else ppi_mean(y, f_lab, [0.0], lam=0.0)
    out.update(
        diff=est.mean,
        ci95=[_clip(est.ci[0], -1.0), _clip(est.ci[1], -1.0)],
        **{"lambda": est.lam},
        labels_only_diff=est.labels_only_mean,
        labels_only_ci95=[_clip(est.labels_only_ci[0], -1.0), _clip(est.labels_only_ci[1], -1.0)],
    )
    return out


__all__ = [
    "FEW_OF_A_KIND",
    "METHOD",
    "MIN_LABELS",
    "calibrated_difference",
    "calibrated_estimate",
    "judge_predictions",
    "predictions",
    "prefix_labels",
]
