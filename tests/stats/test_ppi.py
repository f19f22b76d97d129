"""PPI++ (stats/ppi.py): equal to the authors' reference implementation, and a coverage simulation
with a deliberately biased judge."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.stats.ppi import power_tuning, ppi_mean, z_value


def _population(rng: np.random.Generator, size: int, p: float, graded: bool) -> tuple[np.ndarray, np.ndarray]:
    """Labels and a lenient, noisy judge's scores of them (the judge gives a 0 label about 0.5)."""
    if graded:
        y = np.clip(np.round(rng.beta(4 * p, 4 * (1 - p), size) * 4) / 4, 0, 1)
    else:
        y = (rng.random(size) < p).astype(float)
    f = np.clip(0.4 * y + 0.5 + rng.normal(0.0, 0.15, size), 0.0, 1.0)
    return y, f


@pytest.mark.slow  # importing ppi_py (numba) takes seconds; .ci/run runs it
@pytest.mark.parametrize("seed", range(6))
def test_equals_the_reference_implementation(seed: int) -> None:
    ppi_py = pytest.importorskip(
        "ppi_py", reason="the reference implementation (ppi-python, in the test extra)"
    )
    rng = np.random.default_rng(seed)
    n = (12, 30, 60, 150, 400, 1000)[seed]
    y, f = _population(rng, n + 2000, p=(0.3, 0.5, 0.7, 0.9, 0.6, 0.8)[seed], graded=seed % 2 == 1)
    y_l, f_l, f_u = y[:n], f[:n], f[n:]
    for lam in (None, 0.0, 0.5, 1.0):
        mine = ppi_mean(y_l, f_l, f_u, lam=lam)
        lo, hi = ppi_py.ppi_mean_ci(y_l, f_l, f_u, alpha=0.05, lam=lam)
        point = ppi_py.ppi_mean_pointestimate(y_l, f_l, f_u, lam=lam)
        assert mine.mean == pytest.approx(float(np.squeeze(point)), rel=1e-12, abs=1e-12)
        assert mine.ci[0] == pytest.approx(float(np.squeeze(lo)), rel=1e-12, abs=1e-12)
        assert mine.ci[1] == pytest.approx(float(np.squeeze(hi)), rel=1e-12, abs=1e-12)
    # the tuned lambda is the reference's: its point estimate at our lambda is its tuned one
    tuned = ppi_mean(y_l, f_l, f_u)
    at_ours = ppi_py.ppi_mean_pointestimate(y_l, f_l, f_u, lam=tuned.lam)
    assert float(np.squeeze(at_ours)) == pytest.approx(
        float(np.squeeze(ppi_py.ppi_mean_pointestimate(y_l, f_l, f_u)))
    )
    # lambda = 0 is the classical interval of the labels alone
    lo0, hi0 = ppi_py.ppi_mean_ci(y_l, f_l, f_u, alpha=0.05, lam=0)
    assert tuned.labels_only_ci == pytest.approx((float(np.squeeze(lo0)), float(np.squeeze(hi0))))


def test_coverage_with_a_biased_judge() -> None:
    """A judge that is lenient (about +0.3 on a bad sample) and noisy: its own mean is far from the
    human mean, and PPI++'s 95% interval still covers the human mean in >= 93% of 2000 draws; it
    is narrower than the labels alone, never meaningfully wider."""
    rng = np.random.default_rng(2023)
    p, n, big_n, draws = 0.6, 100, 1000, 2000
    covered = covered_only = 0
    widths, widths_only, judge_means = [], [], []
    for _ in range(draws):
        y, f = _population(rng, n + big_n, p, graded=False)
        est = ppi_mean(y[:n], f[:n], f[n:])
        covered += est.ci[0] <= p <= est.ci[1]
        covered_only += est.labels_only_ci[0] <= p <= est.labels_only_ci[1]
        widths.append(est.ci[1] - est.ci[0])
        widths_only.append(est.labels_only_ci[1] - est.labels_only_ci[0])
        judge_means.append(f.mean())
    assert abs(np.mean(judge_means) - p) > 0.1  # the judge alone is biased
    assert covered / draws >= 0.93
    assert covered_only / draws >= 0.93
    assert np.mean(widths) < 0.9 * np.mean(widths_only)  # a judge that tracks the labels buys width
    assert all(w <= wo * 1.05 for w, wo in zip(widths, widths_only, strict=True))


def test_an_uninformative_judge_costs_no_width() -> None:
    rng = np.random.default_rng(7)
    y = (rng.random(1100) < 0.5).astype(float)
    f = rng.random(1100)  # scores unrelated to the labels
    est = ppi_mean(y[:100], f[:100], f[100:])
    width, width_only = est.ci[1] - est.ci[0], est.labels_only_ci[1] - est.labels_only_ci[0]
    assert est.lam < 0.3 and width <= width_only * 1.02


def test_edges() -> None:
    assert z_value(0.95) == pytest.approx(1.959963984540054)
    assert power_tuning(np.array([0.0, 1.0]), np.array([0.5, 0.5]), np.array([0.5])) == 0.0  # constant judge
    with pytest.raises(ValueError, match="at least 2 labels"):
        ppi_mean([1.0], [0.5], [0.5, 0.2])
    with pytest.raises(ValueError, match="unlabelled"):
        ppi_mean([1.0, 0.0], [0.5, 0.2], [])
    with pytest.raises(ValueError, match="non-finite"):
        ppi_mean([1.0, float("nan")], [0.5, 0.2], [0.3])
    with pytest.raises(ValueError, match="differ in length"):
        ppi_mean([1.0, 0.0], [0.5], [0.3])
    est = ppi_mean([1.0, 0.0, 1.0], [0.9, 0.1, 0.8], [0.5, 0.7], lam=0.0)
    assert est.mean == pytest.approx(2 / 3) and est.lam == 0.0
    assert est.to_dict()["lambda"] == 0.0
