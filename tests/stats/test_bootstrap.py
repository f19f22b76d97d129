from __future__ import annotations

import time

import numpy as np
import pytest

from ragmeter.stats import (
    bootstrap_ci,
    kendall_tau_b,
    kendall_tau_b_bootstrap_ci,
    paired_bootstrap_ci,
    roc_auc,
)


def test_bootstrap_ci_small_cases() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        bootstrap_ci([])
    assert bootstrap_ci([0.7]) == (0.7, 0.7)
    assert bootstrap_ci([0.3, 0.3, 0.3]) == pytest.approx((0.3, 0.3))


def test_bootstrap_ci_two_points_hand_value() -> None:
    # resample means of [0, 1] are 0, 0.5, 1 with probability 1/4, 1/2, 1/4: the 95% interval is [0, 1]
    assert bootstrap_ci([0.0, 1.0], n_resamples=4000) == (0.0, 1.0)


def test_bootstrap_ci_is_the_percentile_interval() -> None:
    values = np.array([0.1, 0.4, 0.35, 0.8, 0.9, 0.05, 0.6])
    lo, hi = bootstrap_ci(values, n_resamples=500, seed=7)
    idx = np.random.default_rng(7).integers(0, values.size, size=(500, values.size))
    expected = np.quantile(values[idx].mean(axis=1), [0.025, 0.975])
    assert (lo, hi) == pytest.approx(tuple(expected))
    assert lo < values.mean() < hi


def test_bootstrap_ci_deterministic_and_seeded() -> None:
    rng = np.random.default_rng(0)
    values = rng.random(50)
    assert bootstrap_ci(values, seed=1) == bootstrap_ci(values, seed=1)
    assert bootstrap_ci(values, seed=1) != bootstrap_ci(values, seed=2)
    narrow = bootstrap_ci(values, confidence=0.5)
    wide = bootstrap_ci(values, confidence=0.99)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


def test_bootstrap_ci_custom_statistic_and_median() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 100.0]
    lo, hi = bootstrap_ci(values, statistic=np.median)
    assert 1.0 <= lo <= 3.0 <= hi <= 100.0
    lo2, hi2 = bootstrap_ci(values, statistic=lambda a: float(np.max(a)))
    assert lo2 <= 100.0 and hi2 == 100.0


def test_bootstrap_ci_rejects_nan_and_bad_params() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        bootstrap_ci([0.1, float("nan")])
    with pytest.raises(ValueError, match="None is not allowed"):
        bootstrap_ci([0.1, None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([0.1, 0.2], confidence=1.5)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci([0.1, 0.2], n_resamples=0)


def test_paired_bootstrap_stratified_keeps_classes() -> None:
    labels = np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 1])
    scores = np.linspace(0, 1, 10)
    lo, hi = paired_bootstrap_ci(
        lambda s, y: float(np.sum(y)), scores, labels, strata=labels, n_resamples=300
    )
    assert (lo, hi) == (3.0, 3.0)
    lo, hi = paired_bootstrap_ci(roc_auc, scores, labels, strata=labels, n_resamples=300)
    assert 0.0 <= lo <= roc_auc(scores, labels) <= hi <= 1.0


def test_paired_bootstrap_undefined_statistic() -> None:
    x = np.arange(10.0)

    def undefined_when_row_0_drawn(a: np.ndarray) -> float:
        if 0.0 in a:
            raise ValueError("undefined")
        return float(a.mean())

    # row 0 is in about 65% of resamples of 10 rows: too many undefined
    with pytest.raises(ValueError, match=r"undefined on \d+ of 200 bootstrap resamples"):
        paired_bootstrap_ci(undefined_when_row_0_drawn, x, n_resamples=200)
    # a statistic returning NaN is undefined too, never a NaN interval
    with pytest.raises(ValueError, match="undefined"):
        paired_bootstrap_ci(lambda a: float("nan"), x, n_resamples=50)
    # a few undefined resamples are skipped
    lo, hi = paired_bootstrap_ci(lambda a: 1.0 if a[0] != 0.0 else float("nan"), x, n_resamples=200)
    assert (lo, hi) == (1.0, 1.0)
    with pytest.raises(ValueError, match="at least one row"):
        paired_bootstrap_ci(kendall_tau_b, [], [])
    with pytest.raises(ValueError, match="every array"):
        paired_bootstrap_ci(kendall_tau_b, [1, 2], [1, 2, 3])


def test_fast_kendall_bootstrap_equals_generic() -> None:
    rng = np.random.default_rng(2)
    x = np.round(rng.random(70), 1)
    y = np.round(x + rng.random(70) * 0.5, 1)
    fast = kendall_tau_b_bootstrap_ci(x, y, n_resamples=400, seed=4)
    generic = paired_bootstrap_ci(kendall_tau_b, x, y, n_resamples=400, seed=4)
    assert fast == pytest.approx(generic, abs=1e-12)


def test_fast_kendall_bootstrap_is_fast_at_benchmark_size() -> None:
    rng = np.random.default_rng(2)
    x = rng.random(1300)
    y = np.round(x + rng.random(1300), 1)
    start = time.perf_counter()
    lo, hi = kendall_tau_b_bootstrap_ci(x, y)
    assert time.perf_counter() - start < 10
    assert lo < kendall_tau_b(x, y) < hi


def test_the_chunking_of_the_draws_does_not_change_the_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    import ragmeter.stats.bootstrap as bootstrap_module

    values = np.random.default_rng(3).random(5000)
    whole = bootstrap_ci(values, n_resamples=500, seed=0)
    for cells in (5000, 123_457, 10_000_000):  # one resample per chunk, uneven chunks, one chunk
        monkeypatch.setattr(bootstrap_module, "_CHUNK_CELLS", cells)
        assert bootstrap_ci(values, n_resamples=500, seed=0) == whole


def test_mean_cis_are_the_intervals_bootstrap_ci_gives_each_array() -> None:
    """The metrics of a run share index draws when they have as many scores: the same intervals."""
    from ragmeter.stats import mean_cis

    rng = np.random.default_rng(3)
    arrays = [rng.random(500), rng.random(500), rng.random(37), [0.25], rng.integers(0, 2, 500).astype(float)]
    got = mean_cis(arrays, n_resamples=300, seed=0)
    assert got == [bootstrap_ci(a, n_resamples=300, seed=0) for a in arrays]
    assert got[3] == (0.25, 0.25)
    with pytest.raises(ValueError, match="at least one value"):
        mean_cis([[]])
