"""Paired difference: bootstrap CI and sign-flip permutation test against reference computations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from ragmeter.stats import bootstrap_ci, paired_difference, sign_flip_test
from ragmeter.stats.paired import EXACT_MAX


def _brute_force_p(d: np.ndarray) -> float:
    """Every sign assignment of the non-zero differences, by itertools."""
    nz = d[d != 0]
    observed = abs(nz.sum())
    hits = total = 0
    for signs in itertools.product((1.0, -1.0), repeat=nz.size):
        total += 1
        hits += abs(float(np.dot(signs, nz))) >= observed - 1e-12
    return hits / total


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_exact_p_value_equals_brute_force_and_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 1, 12).round(2)
    b = np.clip(a + rng.normal(-0.1, 0.2, 12), 0, 1).round(2)
    res = paired_difference(a, b)
    d = b - a
    assert res.exact
    assert res.p_value == pytest.approx(_brute_force_p(d), abs=1e-12)
    ref = sps.permutation_test(
        (d[d != 0],), np.mean, permutation_type="samples", alternative="two-sided", n_resamples=np.inf
    )
    assert res.p_value == pytest.approx(ref.pvalue, abs=1e-9)
    assert res.diff == pytest.approx(d.mean()) == pytest.approx(b.mean() - a.mean())
    assert res.mean_a == pytest.approx(a.mean()) and res.mean_b == pytest.approx(b.mean())


def test_ci_is_the_paired_bootstrap_of_the_differences() -> None:
    rng = np.random.default_rng(7)
    a = rng.uniform(0, 1, 40)
    b = a - 0.1 + rng.normal(0, 0.05, 40)
    res = paired_difference(a, b, n_resamples=3000, seed=5)
    # Reference: resample pairs by hand with the same generator stream, mean of b - a per resample.
    ref_rng = np.random.default_rng(5)
    idx = ref_rng.integers(0, 40, size=(3000, 40))
    means = (b[idx] - a[idx]).mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    assert res.ci95 == pytest.approx((lo, hi))
    assert res.ci95 == bootstrap_ci(b - a, n_resamples=3000, seed=5)
    assert res.ci95[1] < 0  # a clear drop
    assert paired_difference(a, b, n_resamples=3000, seed=5) == res  # deterministic


def test_monte_carlo_p_value_above_exact_limit_is_close_to_scipy() -> None:
    rng = np.random.default_rng(11)
    d = rng.normal(0.05, 0.3, EXACT_MAX + 30)
    p, exact, used = sign_flip_test(d, n_permutations=20_000, seed=3)
    assert not exact and used == 20_000
    ref = sps.permutation_test(
        (d,), np.mean, permutation_type="samples", alternative="two-sided", n_resamples=20_000, random_state=0
    )
    assert p == pytest.approx(ref.pvalue, abs=0.02)
    assert p > 0  # (1 + hits) / (1 + n): never zero
    assert sign_flip_test(d, n_permutations=20_000, seed=3) == (p, exact, used)


def test_identical_scores_give_zero_difference_and_p_one() -> None:
    a = [0.2, 0.5, 0.9, 1.0]
    res = paired_difference(a, a)
    assert res.diff == 0.0 and res.ci95 == (0.0, 0.0) and res.p_value == 1.0 and res.exact


def test_bad_input_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="at least one pair"):
        paired_difference([], [])
    with pytest.raises(ValueError, match="differ in length"):
        paired_difference([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="None"):
        paired_difference([1.0, None], [1.0, 2.0])  # type: ignore[list-item]
