"""How many labels an interval of a given width needs (the labelling page's progress)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from ragmeter.stats.sample_size import PPI_METHOD, labels_needed, ppi_labels_needed

Z = NormalDist().inv_cdf(0.975)


def test_no_label_yet_is_the_worst_case() -> None:
    got = labels_needed([])
    assert got.p == 0.5 and got.n_needed == math.ceil(Z * Z * 0.25 / 0.01) == 97 and got.more == 97
    assert labels_needed([], half_width=0.05).n_needed == math.ceil(Z * Z * 0.25 / 0.0025) == 385


def test_the_formula_and_the_count_still_to_give() -> None:
    labels = [1.0] * 20 + [0.0] * 3
    p = (20 + Z * Z / 2) / (23 + Z * Z)
    got = labels_needed(labels)
    assert got.p == pytest.approx(p)
    assert got.n_needed == math.ceil(Z * Z * p * (1 - p) / 0.01)
    assert got.more == got.n_needed - 23 > 0
    enough = labels_needed([1.0] * 300 + [0.0] * 10)
    assert enough.more == 0 and enough.n_needed < 310


def test_many_labels_approach_the_plain_binomial_count() -> None:
    labels = [1.0] * 7000 + [0.0] * 3000
    assert labels_needed(labels).n_needed == pytest.approx(Z * Z * 0.21 / 0.01, rel=0.01)


def test_graded_labels_use_an_upper_bound_on_their_variance() -> None:
    rng = np.random.default_rng(3)
    labels = list(rng.uniform(0.3, 0.9, size=40))
    got = labels_needed(labels)
    # with the labels' own variance the interval at n_needed is no wider than asked
    assert Z * np.std(labels, ddof=1) / math.sqrt(got.n_needed) <= 0.10


def test_labelling_until_none_more_is_needed_gives_the_width() -> None:
    """A labeller who goes on while the page says more are needed (binary labels, true mean 0.8,
    200 simulated labellers) stops with a labels-only 95% interval of at most ±0.10, near the
    count the true mean would give (z² 0.16 / 0.01 = 62)."""
    rng = np.random.default_rng(11)
    stops = []
    for _ in range(200):
        labels: list[float] = []
        while labels_needed(labels).more > 0:
            labels.append(float(rng.random() < 0.8))
        m, n = float(np.mean(labels)), len(labels)
        assert Z * math.sqrt(m * (1 - m) / n) <= 0.10
        stops.append(n)
    assert abs(np.median(stops) - Z * Z * 0.16 / 0.01) <= 10


def test_a_population_smaller_than_the_count() -> None:
    got = labels_needed([1.0, 0.0], n_population=12)
    assert not got.reachable and got.n_needed == 97 and got.more == 10
    assert labels_needed([1.0] * 40, n_population=500).reachable


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [({"half_width": 0}, "half_width"), ({"confidence": 1.0}, "confidence"), ({"labels": [1.5]}, "[0, 1]")],
)
def test_bad_arguments(kwargs: dict, words: str) -> None:
    args = {"labels": [1.0], **kwargs}
    with pytest.raises(ValueError) as err:
        labels_needed(**args)
    assert words in str(err.value)


def _synthetic(rng: np.random.Generator, n: int, tracks: float) -> tuple[np.ndarray, np.ndarray]:
    """Binary labels of base rate 0.6 and a judge's scores that follow them by ``tracks``."""
    y = (rng.random(n) < 0.6).astype(float)
    f = np.clip(tracks * y + (1 - tracks) * 0.7 + rng.normal(0, 0.15, n), 0, 1)
    return y, f


def test_the_ppi_projection_starts_from_the_interval_there_is() -> None:
    """With n labels, the projection says 'none more' exactly when the PPI++ interval of those
    labels is already as narrow as asked."""
    from ragmeter.stats.ppi import ppi_mean

    y, f = _synthetic(np.random.default_rng(5), 1000, tracks=0.6)
    n = 60
    est = ppi_mean(y[:n], f[:n], f[n:])
    half = (est.ci[1] - est.ci[0]) / 2
    assert ppi_labels_needed(y[:n], f[:n], f[n:], half_width=half * 1.001).more == 0
    later = ppi_labels_needed(y[:n], f[:n], f[n:], half_width=half * 0.9)
    assert later.more > 0 and later.method == PPI_METHOD and later.reachable


def test_a_judge_that_tracks_the_labels_needs_fewer() -> None:
    rng = np.random.default_rng(9)
    y, f = _synthetic(rng, 1000, tracks=0.8)
    ppi = ppi_labels_needed(y[:40], f[:40], f[40:])
    alone = labels_needed(y[:40])
    assert ppi.n_needed < 0.6 * alone.n_needed
    y, f = _synthetic(rng, 1000, tracks=0.0)  # a blind judge: PPI++ is the labels alone
    blind = ppi_labels_needed(y[:40], f[:40], f[40:])
    assert blind.n_needed == pytest.approx(Z * Z * np.var(y[:40]) / 0.01, rel=0.1)


def test_labelling_until_the_ppi_projection_says_enough() -> None:
    """Each step's count is the calibrated interval's own: a labeller who stops when it says 0 more
    stops with a PPI++ interval of at most ±0.10, and the count said at 20 labels was close."""
    from ragmeter.stats.ppi import ppi_mean

    rng = np.random.default_rng(13)
    y, f = _synthetic(rng, 1000, tracks=0.6)
    said = ppi_labels_needed(y[:20], f[:20], f[20:]).n_needed
    n = 20
    while ppi_labels_needed(y[:n], f[:n], f[n:]).more > 0:
        n += 1
    est = ppi_mean(y[:n], f[:n], f[n:])
    assert (est.ci[1] - est.ci[0]) / 2 <= 0.10 and abs(n - said) <= 0.5 * said
