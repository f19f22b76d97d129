"""Paired comparison of two systems scored on the same samples (NumPy only).

:func:`paired_difference` summarises per-sample differences ``d = b - a``:

- ``diff``: the mean difference (= mean B - mean A over the pairs);
- ``ci95``: a paired percentile bootstrap interval of the mean difference: pairs are resampled
  with replacement, the same draw for A and B, which is resampling ``d`` (so it is
  :func:`~ragmeter.stats.bootstrap.bootstrap_ci` of ``d``; seeded, deterministic);
- ``p_value``: a two-sided **paired permutation test** (sign-flip test) of "no difference": under
  the null hypothesis each pair's two scores are exchangeable, so each ``d_i`` is as likely to be
  ``-d_i``; the p-value is the share of the ``2^k`` sign assignments (``k`` = non-zero
  differences; zeros change nothing) whose ``|sum|`` is at least the observed ``|sum d|``. It is
  exact (every assignment enumerated) for ``k <= EXACT_MAX``; above that ``n_permutations``
  seeded random assignments estimate it as ``(1 + hits) / (1 + n_permutations)``, which never
  gives 0. It tests the mean difference (what ``diff`` reports), needs no normality, and is
  fine with the ties bounded 0-1 scores produce; no difference at all gives p = 1.

Nothing here returns NaN: no pairs is a ValueError.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.stats.bootstrap import bootstrap_ci
from ragmeter.stats.rank import as_finite_1d

#: Up to this many non-zero differences the permutation test enumerates every sign assignment.
EXACT_MAX = 20
#: Signs drawn per chunk when enumerating or sampling (bounds memory: rows x differences).
_CHUNK_CELLS = 1 << 22
#: Relative tolerance when comparing a permuted statistic with the observed one.
_RTOL = 1e-9

TEST_NAME = "paired permutation (sign-flip) test, two-sided"


@dataclass(frozen=True)
class PairedDifference:
    """Summary of paired differences ``b - a`` (see the module docstring)."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci95: tuple[float, float]
    p_value: float
    exact: bool
    n_permutations: int  # sign assignments used (2^k when exact)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "diff": self.diff,
            "ci95": [self.ci95[0], self.ci95[1]],
            "p_value": self.p_value,
            "test": TEST_NAME,
            "exact": self.exact,
            "n_permutations": self.n_permutations,
        }


def _at_least(stats: np.ndarray, observed: float) -> int:
    """How many permuted statistics reach the observed one (within rounding)."""
    return int(np.count_nonzero(stats >= observed - _RTOL * max(observed, 1.0)))


def sign_flip_test(
    differences: Sequence[float] | np.ndarray, *, n_permutations: int = 20_000, seed: int | None = 0
) -> tuple[float, bool, int]:
    """Two-sided paired permutation (sign-flip) test of mean difference zero.

    Returns ``(p_value, exact, n_assignments)``. Exact when at most :data:`EXACT_MAX` differences
    are non-zero, else a seeded Monte Carlo estimate from ``n_permutations`` random assignments."""
    d_all = as_finite_1d(differences, "differences")
    if d_all.size == 0:
        raise ValueError("a permutation test needs at least one pair, got none")
    if int(n_permutations) < 1:
        raise ValueError(f"n_permutations must be >= 1, got {n_permutations}")
    d = d_all[d_all != 0.0]
    k = d.size
    if k == 0:
        return 1.0, True, 1
    observed = abs(float(d.sum()))
    if k <= EXACT_MAX:
        total = 1 << k
        bits = np.arange(k, dtype=np.int64)
        chunk = max(1, _CHUNK_CELLS // k)
        hits = 0
        for start in range(0, total, chunk):
            codes = np.arange(start, min(total, start + chunk), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits[None, :]) & 1)
            hits += _at_least(np.abs(signs @ d), observed)
        return hits / total, True, total
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // k)
    hits = 0
    done = 0
    total_sum = float(d.sum())
    while done < n_permutations:
        b = min(chunk, n_permutations - done)
        # one random bit per difference (drawn as bytes): flipping the set ones gives sum - 2 * flipped
        flips = np.unpackbits(rng.integers(0, 256, size=(b, (k + 7) // 8), dtype=np.uint8), axis=1, count=k)
        hits += _at_least(np.abs(total_sum - 2.0 * (flips.astype(np.float64) @ d)), observed)
        done += b
    return (1 + hits) / (1 + n_permutations), False, int(n_permutations)


def paired_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 2000,
    n_permutations: int = 20_000,
    seed: int | None = 0,
) -> PairedDifference:
    """Mean difference ``b - a`` over pairs, its paired bootstrap 95% CI and a permutation p-value.

    ``a[i]`` and ``b[i]`` are the two systems' scores of sample ``i``; both must be finite (leave
    out a pair where either score is invalid)."""
    xa = as_finite_1d(a, "a")
    xb = as_finite_1d(b, "b")
    if xa.size != xb.size:
        raise ValueError(f"a and b differ in length ({xa.size} != {xb.size})")
    if xa.size == 0:
        raise ValueError("a paired comparison needs at least one pair, got none")
    d = xb - xa
    lo, hi = bootstrap_ci(d, n_resamples=n_resamples, seed=seed)
    p, exact, used = sign_flip_test(d, n_permutations=n_permutations, seed=seed)
    return PairedDifference(
        n=int(d.size),
        mean_a=float(xa.mean()),
        mean_b=float(xb.mean()),
        diff=float(d.mean()),
        ci95=(float(lo), float(hi)),
        p_value=float(p),
        exact=exact,
        n_permutations=used,
    )


__all__ = ["EXACT_MAX", "TEST_NAME", "PairedDifference", "paired_difference", "sign_flip_test"]
