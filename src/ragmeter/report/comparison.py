"""Compare two recorded runs sample by sample: is B better than A, or is the difference noise?

:func:`compare_runs` reads two run records (nothing is re-scored) and matches their samples by the
stable key stored with each sample (:mod:`ragmeter.dataset.keys`). For every metric both runs
scored it reports, over the **pairs** (matched samples that both runs scored validly):

- ``mean_a``, ``mean_b``: the means over those pairs, so ``diff = mean_b - mean_a``;
- ``ci95``: a paired bootstrap 95% interval of the mean difference, and ``p_value`` from a
  two-sided paired permutation (sign-flip) test (:mod:`ragmeter.stats.paired`);
- ``wins`` / ``ties`` / ``losses``: pairs where B is better / equal (within 1e-6) / worse,
  "better" following the metric's direction (lower is better for ``noise_sensitivity``);
- the samples that moved most in each direction, with both runs' reasons.

Invalid scores: the statistics use a pair only when both scores are valid (``n_pairs``).
``n_invalid_a`` / ``n_invalid_b`` count matched samples whose score is invalid in that run,
``n_unscored`` those a run did not score at all (a field was missing, e.g. an empty answer, or the
run was interrupted). **Unscorable is not better**: a matched sample that A scored validly and B
did not (invalid, or not scored) is *newly invalid* in B (``n_new_invalid``, ``new_invalid``), a
regression of B on that sample however the pairs read; the reverse is *newly valid*
(``n_new_valid``, ``new_valid``), an improvement. Samples present in one run only are not counted
there: they make the evaluation sets differ (``only_a``, ``only_b``, and not comparable, below).

A metric **regresses** (``regressions``; the gate of ``compare --fail-on-regression``) when B is
worse and the whole interval says so by more than ``margin`` (the CI's upper end of ``B - A`` is
below ``-margin``; for a lower-is-better metric its lower end above ``+margin``), or when more
samples than ``max_new_invalid`` (a count, default 0) are newly invalid in B. It improves when
the interval says so beyond ``+margin``, or more than ``max_new_invalid`` samples are newly valid
in B. An interval is read beyond the margin by more than :data:`TIE_TOLERANCE` (two identical runs
of the local judge can differ by ~1e-9). Identical runs, and runs that differ only in float noise,
read ``no change`` (every pair tied) and never regress. :meth:`MetricComparison.verdict` is the one
place that says ``worse`` / ``better`` / ``no change`` / ``no clear change``; the console, the
JSON, the HTML page and the gate read it.

The runs are **not comparable** (``comparable`` is False and ``issues`` says why; everything is
still computed) when their judges differ (name, model, sampling parameters, embedder, local
support model; not operational settings such as concurrency, timeouts, cache or endpoint URL),
their prompt versions differ, a shared metric's version, parameters or threshold differ, or their
evaluation sets differ: the *eval-set hash* covers each sample's key, question and reference,
not its answer or contexts, which are what a comparison of two pipeline versions is about.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ragmeter.dataset.keys import normalize_key_text
from ragmeter.errors import ConfigError
from ragmeter.metrics.base import Score
from ragmeter.report.comparability import comparability_issues, eval_set_hash, metric_specs
from ragmeter.run.result import Result
from ragmeter.stats.paired import TEST_NAME, paired_difference

#: |b - a| at or below this is a tie: well below the 3 decimals shown, and above the float noise of
#: embedding arithmetic (the local judge can differ by ~1e-8 between two identical runs).
TIE_TOLERANCE = 1e-6


@dataclass(frozen=True)
class MovedSample:
    """One matched sample whose score changed: its key, index in each run, question, the two
    scores, ``diff = value_b - value_a`` and both reasons."""

    key: str
    idx_a: int
    idx_b: int
    question: str
    value_a: float
    value_b: float
    diff: float
    reason_a: str
    reason_b: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # its fields, in order: plain values only


@dataclass(frozen=True)
class ValidityChange:
    """A matched sample scored validly in one run only: ``value_a`` / ``value_b`` are the scores
    (None on the side without a valid one); ``error_a`` / ``error_b`` say why that side has none
    (the invalid score's kind, e.g. ``NoClaims``, or ``not scored``; empty on the valid side)."""

    key: str
    idx_a: int
    idx_b: int
    question: str
    value_a: float | None
    value_b: float | None
    error_a: str
    error_b: str
    reason_a: str
    reason_b: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # its fields, in order: plain values only


#: The verdicts of :meth:`MetricComparison.verdict`.
WORSE, BETTER, NO_CLEAR_CHANGE, NO_CHANGE, NO_PAIRS = "worse", "better", "no clear change", "no change", "no pairs"


@dataclass(frozen=True)
class MetricComparison:
    """One metric's paired comparison (see the module docstring). Statistics are None when no
    pair is usable."""

    name: str
    higher_is_better: bool
    n_pairs: int
    n_invalid_a: int
    n_invalid_b: int
    n_unscored: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    exact: bool | None
    wins: int
    ties: int
    losses: int
    improved: tuple[MovedSample, ...] = ()
    worsened: tuple[MovedSample, ...] = ()
    #: when both runs have random-drawn labels of this metric on matched samples: the calibrated
    #: estimate of the difference of *human* means, B - A (:func:`~ragmeter.run.calibrated.
    #: calibrated_difference`); else None, and ``ci95`` is on the judge's scale only
    calibrated: Mapping[str, Any] | None = None
    n_new_invalid: int = 0
    n_new_valid: int = 0
    new_invalid: tuple[ValidityChange, ...] = ()
    new_valid: tuple[ValidityChange, ...] = ()
    #: why the newly invalid samples have no valid score in B: error kind (or ``not scored``) -> count
    new_invalid_kinds: Mapping[str, int] = field(default_factory=dict)

    def ci_verdict(self, margin: float = 0.0) -> str:
        """What the paired interval alone says: ``worse`` (B worse than A beyond ``margin`` with
        95% confidence), ``better``, ``no clear change``, or ``no pairs``."""
        if self.ci95 is None:
            return NO_PAIRS
        lo, hi = self.ci95
        # an interval within float noise of the margin says nothing (two identical runs can differ
        # by ~1e-9: TIE_TOLERANCE)
        m = margin + TIE_TOLERANCE
        worse, better = (hi < -m, lo > m) if self.higher_is_better else (lo > m, hi < -m)
        return WORSE if worse else BETTER if better else NO_CLEAR_CHANGE

    def verdict(self, margin: float = 0.0, max_new_invalid: int = 0) -> str:
        """``worse`` when the interval says so or more than ``max_new_invalid`` samples are newly
        invalid in B; else ``better`` when the interval says so or more than ``max_new_invalid``
        are newly valid in B; else ``no change`` when every pair tied (within
        :data:`TIE_TOLERANCE`) and no sample changed validity, ``no clear change`` otherwise
        (``no pairs`` when nothing can be said)."""
        ci = self.ci_verdict(margin)
        if ci == WORSE or self.n_new_invalid > max_new_invalid:
            return WORSE
        if ci == BETTER or self.n_new_valid > max_new_invalid:
            return BETTER
        if ci == NO_PAIRS and not (self.n_new_invalid or self.n_new_valid):
            return NO_PAIRS
        if self.n_pairs and not self.wins and not self.losses and not (self.n_new_invalid or self.n_new_valid):
            return NO_CHANGE  # every pair tied: the same scores, float noise aside
        return NO_CLEAR_CHANGE

    def regressed(self, margin: float = 0.0, max_new_invalid: int = 0) -> bool:
        """B is worse than A (the regression gate): see :meth:`verdict`."""
        return self.verdict(margin, max_new_invalid) == WORSE

    def to_dict(self, margin: float = 0.0, max_new_invalid: int = 0) -> dict[str, Any]:
        return {
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "diff": self.diff,
            "ci95": None if self.ci95 is None else [self.ci95[0], self.ci95[1]],
            "p_value": self.p_value,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "n_pairs": self.n_pairs,
            "n_invalid_a": self.n_invalid_a,
            "n_invalid_b": self.n_invalid_b,
            "n_unscored": self.n_unscored,
            "higher_is_better": self.higher_is_better,
            "exact_p": self.exact,
            "improved": [m.to_dict() for m in self.improved],
            "worsened": [m.to_dict() for m in self.worsened],
            "calibrated": None if self.calibrated is None else dict(self.calibrated),
            "n_new_invalid": self.n_new_invalid,
            "n_new_valid": self.n_new_valid,
            "new_invalid": [c.to_dict() for c in self.new_invalid],
            "new_valid": [c.to_dict() for c in self.new_valid],
            "new_invalid_kinds": dict(self.new_invalid_kinds),
            "verdict": self.verdict(margin, max_new_invalid),
        }


@dataclass(frozen=True)
class Comparison:
    """Two runs compared (see the module docstring); :meth:`to_dict` is ``compare --json``."""

    run_a: str
    run_b: str
    n_matched: int
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    issues: tuple[str, ...]
    metrics: Mapping[str, MetricComparison]
    metrics_only_a: tuple[str, ...] = ()
    metrics_only_b: tuple[str, ...] = ()
    eval_set_hash_a: str = ""
    eval_set_hash_b: str = ""
    #: matched sample keys with (idx in A, idx in B), in A's order
    pairs: tuple[tuple[str, int, int], ...] = field(default=(), repr=False)
    #: the two runs compared (what the HTML page shows side by side)
    result_a: Result | None = field(default=None, repr=False, compare=False)
    result_b: Result | None = field(default=None, repr=False, compare=False)

    @property
    def comparable(self) -> bool:
        return not self.issues

    @property
    def n_only_a(self) -> int:
        return len(self.only_a)

    @property
    def n_only_b(self) -> int:
        return len(self.only_b)

    def regressions(self, margin: float = 0.0, max_new_invalid: int = 0) -> list[str]:
        """Metrics where B is worse than A: beyond ``margin``, or with more than
        ``max_new_invalid`` samples newly invalid in B (see the module docstring)."""
        check_margin(margin)
        check_max_new_invalid(max_new_invalid)
        return [name for name, m in self.metrics.items() if m.regressed(margin, max_new_invalid)]

    def to_dict(self, margin: float = 0.0, max_new_invalid: int = 0) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "n_matched": self.n_matched,
            "n_only_a": self.n_only_a,
            "n_only_b": self.n_only_b,
            "comparable": self.comparable,
            "metrics": {name: m.to_dict(margin, max_new_invalid) for name, m in self.metrics.items()},
            "regressions": self.regressions(margin, max_new_invalid),
            "margin": margin,
            "max_new_invalid": max_new_invalid,
            "issues": list(self.issues),
            "test": TEST_NAME,
            "ci": "paired bootstrap percentile interval of the mean difference B - A, on the judge's "
            "scale (metrics.<name>.calibrated, where both runs have labels, is on people's)",
            "metrics_only_a": list(self.metrics_only_a),
            "metrics_only_b": list(self.metrics_only_b),
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "eval_set_hash_a": self.eval_set_hash_a,
            "eval_set_hash_b": self.eval_set_hash_b,
        }


def check_margin(margin: float) -> float:
    try:
        value = float(margin)
    except (TypeError, ValueError):
        raise ConfigError(f"the regression margin must be a number, got {margin!r}") from None
    if not 0.0 <= value < 1e9:
        raise ConfigError(f"the regression margin must be >= 0, got {margin!r}")
    return value


def check_max_new_invalid(count: int) -> int:
    """The allowance of newly invalid samples per metric: a count >= 0."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ConfigError(f"the allowance of newly invalid samples must be a count >= 0, got {count!r}")
    return count


def _load(run: Result | str, store: str | Path | None) -> Result:
    if isinstance(run, Result):
        return run
    if store is None:
        raise ConfigError(f"run {run!r} is a run id: give the run store directory (store=...)")
    return Result.from_store(store, run)


def _compare_metric(
    name: str,
    a: Result,
    b: Result,
    pairs: Sequence[tuple[str, int, int]],
    *,
    higher_is_better: bool,
    n_top: int,
    n_resamples: int,
    n_permutations: int,
    seed: int,
) -> MetricComparison:
    used: list[tuple[str, int, int, float, float]] = []
    lost: list[tuple[str, int, int]] = []  # valid in A only
    gained: list[tuple[str, int, int]] = []  # valid in B only
    n_invalid_a = n_invalid_b = n_unscored = 0
    samples_a, samples_b = dict(a.samples), dict(b.samples)
    for key, ia, ib in pairs:
        sa, sb = a.score(ia, name), b.score(ib, name)
        if sa is None or sb is None:
            n_unscored += 1
        if sa is not None and not sa.valid:
            n_invalid_a += 1
        if sb is not None and not sb.valid:
            n_invalid_b += 1
        valid_a, valid_b = sa is not None and sa.valid, sb is not None and sb.valid
        if valid_a and valid_b:
            assert sa is not None and sb is not None and sa.value is not None and sb.value is not None
            used.append((key, ia, ib, float(sa.value), float(sb.value)))
        elif valid_a:
            lost.append((key, ia, ib))
        elif valid_b:
            gained.append((key, ia, ib))

    def changed(key: str, ia: int, ib: int) -> ValidityChange:
        sa, sb = a.score(ia, name), b.score(ib, name)
        return ValidityChange(
            key, ia, ib, samples_b[ib].question or samples_a[ia].question,
            _valid_value(sa), _valid_value(sb), _error_kind(sa), _error_kind(sb), _reason(sa), _reason(sb),
        )  # fmt: skip

    validity: dict[str, Any] = {
        "n_new_invalid": len(lost),
        "n_new_valid": len(gained),
        "new_invalid": tuple(changed(*c) for c in lost[:n_top]),
        "new_valid": tuple(changed(*c) for c in gained[:n_top]),
        "new_invalid_kinds": dict(Counter(_error_kind(b.score(ib, name)) for _, _, ib in lost).most_common()),
    }
    if not used:
        return MetricComparison(
            name, higher_is_better, 0, n_invalid_a, n_invalid_b, n_unscored,
            None, None, None, None, None, None, 0, 0, 0, **validity,
        )  # fmt: skip
    stats = paired_difference(
        [u[3] for u in used],
        [u[4] for u in used],
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        seed=seed,
    )
    sign = 1.0 if higher_is_better else -1.0
    gains = [sign * (vb - va) for _, _, _, va, vb in used]
    wins = sum(1 for g in gains if g > TIE_TOLERANCE)
    losses = sum(1 for g in gains if g < -TIE_TOLERANCE)

    def moved(i: int) -> MovedSample:
        key, ia, ib, va, vb = used[i]
        sa, sb = a.score(ia, name), b.score(ib, name)
        return MovedSample(
            key, ia, ib, samples_b[ib].question or samples_a[ia].question, va, vb, vb - va,
            sa.reason if sa else "", sb.reason if sb else "",
        )  # fmt: skip

    order = sorted(range(len(used)), key=lambda i: (gains[i], used[i][0]))
    worsened = tuple(moved(i) for i in order[:n_top] if gains[i] < -TIE_TOLERANCE)
    improved = tuple(moved(i) for i in reversed(order[-n_top:]) if gains[i] > TIE_TOLERANCE) if n_top else ()
    return MetricComparison(
        name=name,
        higher_is_better=higher_is_better,
        n_pairs=stats.n,
        n_invalid_a=n_invalid_a,
        n_invalid_b=n_invalid_b,
        n_unscored=n_unscored,
        mean_a=stats.mean_a,
        mean_b=stats.mean_b,
        diff=stats.diff,
        ci95=stats.ci95,
        p_value=stats.p_value,
        exact=stats.exact,
        wins=wins,
        ties=len(used) - wins - losses,
        losses=losses,
        improved=improved,
        worsened=worsened,
        **validity,
    )


def _valid_value(score: Score | None) -> float | None:
    return float(score.value) if score is not None and score.valid and score.value is not None else None


def _error_kind(score: Score | None) -> str:
    if score is None:
        return "not scored"
    if score.valid:
        return ""
    return score.error.kind if score.error is not None else "invalid"


def _reason(score: Score | None) -> str:
    if score is None:
        return "not scored in this run: a field the metric needs was missing (see the run's input problems) or the run stopped"
    return score.reason


def compare_runs(
    run_a: Result | str,
    run_b: Result | str,
    *,
    store: str | Path | None = None,
    store_b: str | Path | None = None,
    metrics: Sequence[str] | None = None,
    n_top: int = 5,
    n_resamples: int = 2000,
    n_permutations: int = 20_000,
    seed: int = 0,
) -> Comparison:
    """Compare run B against run A (see the module docstring).

    ``run_a`` / ``run_b``: :class:`Result` objects, or run ids (an id, a unique prefix,
    ``latest``) in the run store ``store`` (``store_b`` when B is in another store).
    ``metrics``: compare only these (default: every metric both runs scored). ``n_top``: how many
    most-moved samples to keep per direction. Seeded and deterministic."""
    a = _load(run_a, store)
    b = _load(run_b, store_b if store_b is not None else store)
    if n_top < 0:
        raise ConfigError(f"n_top must be >= 0, got {n_top}")
    by_key_b = {key: idx for idx, key in b.keys.items()}
    pairs: list[tuple[str, int, int]] = []
    only_a: list[str] = []
    for idx, _ in a.samples:
        key = a.keys[idx]
        if key in by_key_b:
            pairs.append((key, idx, by_key_b[key]))
        else:
            only_a.append(key)
    matched = {key for key, _, _ in pairs}
    only_b = [b.keys[idx] for idx, _ in b.samples if b.keys[idx] not in matched]

    shared = [m for m in a.metric_names if m in b.metric_names]
    if metrics is not None:
        unknown = [m for m in metrics if m not in shared]
        if unknown:
            raise ConfigError(
                f"metric(s) {', '.join(unknown)} not scored by both runs; both have: {', '.join(shared) or 'none'}"
            )
        shared = [m for m in shared if m in metrics]
    specs = metric_specs(a)
    samples_a, samples_b = dict(a.samples), dict(b.samples)
    n_changed = sum(
        1
        for _, ia, ib in pairs
        if (normalize_key_text(samples_a[ia].question), normalize_key_text(samples_a[ia].reference))
        != (normalize_key_text(samples_b[ib].question), normalize_key_text(samples_b[ib].reference))
    )
    hashes = (eval_set_hash(a), eval_set_hash(b))
    results = {
        name: _compare_metric(
            name,
            a,
            b,
            pairs,
            higher_is_better=bool(specs.get(name, {}).get("higher_is_better", True)),
            n_top=n_top,
            n_resamples=n_resamples,
            n_permutations=n_permutations,
            seed=seed,
        )
        for name in shared
    }
    from ragmeter.run.calibrated import calibrated_difference

    for name, m in results.items():
        cal = calibrated_difference(a, b, pairs, name)
        if cal is not None:
            results[name] = replace(m, calibrated=cal)
    return Comparison(
        run_a=a.run_id,
        run_b=b.run_id,
        n_matched=len(pairs),
        only_a=tuple(only_a),
        only_b=tuple(only_b),
        issues=tuple(comparability_issues(a, b, shared, hashes, (len(only_a), len(only_b), n_changed))),
        metrics=results,
        metrics_only_a=tuple(m for m in a.metric_names if m not in b.metric_names),
        metrics_only_b=tuple(m for m in b.metric_names if m not in a.metric_names),
        eval_set_hash_a=hashes[0],
        eval_set_hash_b=hashes[1],
        pairs=tuple(pairs),
        result_a=a,
        result_b=b,
    )


__all__ = [
    "Comparison",
    "MetricComparison",
    "MovedSample",
    "ValidityChange",
    "check_margin",
    "check_max_new_invalid",
    "compare_runs",
    "eval_set_hash",
]
