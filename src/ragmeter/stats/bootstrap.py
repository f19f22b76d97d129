"""Percentile bootstrap confidence intervals (NumPy only).

Resampling is deterministic for a given ``seed``. Index draws come from one helper, so
:func:`paired_bootstrap_ci` and the fast Kendall path see the same resamples for the same seed.
A statistic that is undefined on a resample (it raises ``ValueError`` or returns a non-finite
value: e.g. a correlation on a resample where one variable is constant) skips that resample; when
more than half are undefined the interval itself is undefined and ``ValueError`` is raised.
Nothing here returns NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ragmeter.stats.rank import as_finite_1d, kendall_sign_matrix, kendall_tau_b, tie_group_ids

#: Resample draws are made in chunks of at most this many indices (bounds memory: the indices and
#: the values they pick, 8 MB a chunk; a run of 20,000 samples resamples 40 million of them per
#: metric). The chunking does not change the draws: they come from one generator in order.
_CHUNK_CELLS = 500_000


def _check_params(n_resamples: int, confidence: float) -> None:
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")


def resample_indices(n: int, n_resamples: int, seed: int | None, strata: Any = None) -> Iterator[np.ndarray]:
    """Yield (b, n) arrays of row indices, ``n_resamples`` rows in all.

    With ``strata`` (one label per row), each stratum is resampled within itself, so every
    resample keeps the stratum sizes (e.g. both classes present for ROC AUC).
    """
    rng = np.random.default_rng(seed)
    groups: list[np.ndarray] | None = None
    if strata is not None:
        st = np.asarray(strata)
        if st.shape != (n,):
            raise ValueError(f"strata must have one entry per row ({n}), got shape {st.shape}")
        _, inverse = np.unique(st, return_inverse=True)
        groups = [np.flatnonzero(inverse == g) for g in range(int(inverse.max()) + 1)] if n else []
    chunk = max(1, min(n_resamples, _CHUNK_CELLS // max(n, 1)))
    done = 0
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        if groups is None:
            yield rng.integers(0, n, size=(b, n))
        else:
            yield np.concatenate([g[rng.integers(0, g.size, size=(b, g.size))] for g in groups], axis=1)
        done += b


def _interval(stats: np.ndarray, n_resamples: int, confidence: float) -> tuple[float, float]:
    stats = stats[np.isfinite(stats)]
    if stats.size * 2 < n_resamples:
        raise ValueError(
            f"the statistic is undefined on {n_resamples - stats.size} of {n_resamples} bootstrap resamples"
        )
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(stats, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def _safe_call(fn: Callable[..., Any], *args: Any) -> float:
    try:
        value = float(fn(*args))
    except (ValueError, ZeroDivisionError, FloatingPointError):
        return float("nan")
    return value


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    statistic: Callable[..., Any] = np.mean,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(values)``.

    One value gives ``(v, v)``; no values is a ValueError. ``np.mean`` and ``np.median`` are
    computed vectorised; any other statistic is called once per resample with a 1-D array.
    """
    arr = as_finite_1d(values)
    _check_params(n_resamples, confidence)
    n = arr.size
    if n == 0:
        raise ValueError("bootstrap_ci needs at least one value, got none")
    if n == 1:
        v = float(statistic(arr))
        return v, v
    vectorised = statistic is np.mean or statistic is np.median
    parts: list[np.ndarray] = []
    for idx in resample_indices(n, n_resamples, seed):
        if vectorised:
            parts.append(np.asarray(statistic(arr[idx], axis=1), dtype=np.float64))
        else:
            parts.append(np.array([_safe_call(statistic, arr[row]) for row in idx], dtype=np.float64))
    return _interval(np.concatenate(parts), n_resamples, confidence)


def mean_cis(
    arrays: Sequence[Sequence[float] | np.ndarray],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> list[tuple[float, float]]:
    """``[bootstrap_ci(a, n_resamples=..., confidence=..., seed=...) for a in arrays]`` (the mean's
    interval), with one set of index draws for all the arrays of one length: the draws depend on
    the length and the seed only, so each interval is the one :func:`bootstrap_ci` gives, and a
    run's metrics (most scored on every sample) share the cost of drawing. Every array needs at
    least one value."""
    _check_params(n_resamples, confidence)
    arrs = [as_finite_1d(a) for a in arrays]
    out: list[tuple[float, float] | None] = [None] * len(arrs)
    by_length: dict[int, list[int]] = {}
    for k, arr in enumerate(arrs):
        if arr.size == 0:
            raise ValueError("bootstrap_ci needs at least one value, got none")
        if arr.size == 1:
            out[k] = (float(arr[0]), float(arr[0]))
        else:
            by_length.setdefault(arr.size, []).append(k)
    for n, members in by_length.items():
        parts: dict[int, list[np.ndarray]] = {k: [] for k in members}
        for idx in resample_indices(n, n_resamples, seed):
            for k in members:
                parts[k].append(np.asarray(np.mean(arrs[k][idx], axis=1), dtype=np.float64))
        for k in members:
            out[k] = _interval(np.concatenate(parts[k]), n_resamples, confidence)
    return [ci for ci in out if ci is not None]


def paired_bootstrap_ci(
    fn: Callable[..., Any],
    *arrays: Sequence[float] | np.ndarray,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
    strata: Any = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``fn(*arrays)``, resampling rows (the same indices for every
    array), e.g. ``paired_bootstrap_ci(roc_auc, scores, labels, strata=labels)``.

    One row gives ``(v, v)``; no rows is a ValueError.
    """
    if not arrays:
        raise ValueError("paired_bootstrap_ci needs at least one array")
    arrs = [np.asarray(a) for a in arrays]
    n = len(arrs[0])
    for i, a in enumerate(arrs):
        if a.ndim != 1 or len(a) != n:
            raise ValueError(f"array {i} has shape {a.shape}; every array must be 1-D with {n} rows")
    _check_params(n_resamples, confidence)
    if n == 0:
        raise ValueError("paired_bootstrap_ci needs at least one row, got none")
    if n == 1:
        v = float(fn(*arrs))
        return v, v
    parts: list[np.ndarray] = []
    for idx in resample_indices(n, n_resamples, seed, strata):
        parts.append(np.array([_safe_call(fn, *(a[row] for a in arrs)) for row in idx], dtype=np.float64))
    return _interval(np.concatenate(parts), n_resamples, confidence)


def kendall_tau_b_bootstrap_ci(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Same interval as ``paired_bootstrap_ci(kendall_tau_b, x, y)`` (same resamples for the same
    seed), computed from resample counts: with ``w`` the number of times each row is drawn,
    the resample's concordance sum is ``w' M w / 2`` where ``M[i, j] = sign(x_i - x_j) sign(y_i - y_j)``,
    and its tie counts come from per-group sums of ``w``. Cost: one (b x n) @ (n x n) product per
    chunk instead of an O(n^2) pass per resample."""
    xa = as_finite_1d(x, "x")
    ya = as_finite_1d(y, "y")
    if xa.size != ya.size:
        raise ValueError(f"x and y differ in length ({xa.size} != {ya.size})")
    _check_params(n_resamples, confidence)
    n = xa.size
    if n < 2:
        kendall_tau_b(xa, ya)  # raises: undefined for fewer than two rows
    m = kendall_sign_matrix(xa, ya)
    gx, kx = tie_group_ids(xa)
    gy, ky = tie_group_ids(ya)
    n0 = n * (n - 1) / 2.0
    parts: list[np.ndarray] = []
    for idx in resample_indices(n, n_resamples, seed):
        b = idx.shape[0]
        w = np.zeros((b, n), dtype=np.float64)
        np.add.at(w, (np.repeat(np.arange(b), n), idx.ravel()), 1.0)
        s = 0.5 * np.einsum("ij,ij->i", w @ m, w)
        tx = np.zeros((kx, b))
        ty = np.zeros((ky, b))
        np.add.at(tx, gx, w.T)
        np.add.at(ty, gy, w.T)
        n1 = 0.5 * ((tx**2).sum(axis=0) - n)
        n2 = 0.5 * ((ty**2).sum(axis=0) - n)
        denom = np.sqrt(np.clip(n0 - n1, 0, None) * np.clip(n0 - n2, 0, None))
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = np.where(denom > 0, s / np.where(denom > 0, denom, 1.0), np.nan)
        parts.append(tau)
    return _interval(np.concatenate(parts), n_resamples, confidence)
