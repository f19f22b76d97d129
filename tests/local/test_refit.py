"""Refitting the support combiners on sample labels (ragmeter.local.refit), on synthetic bags."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import ConfigError
from ragmeter.local.calibration import Combiner, load_combiner
from ragmeter.local.refit import Bag, _Design, _objective, bag_scores, refit, scorer_of
from ragmeter.local.support import ENTAIL
from ragmeter.stats.rank import roc_auc

SUPPORT = load_combiner("support")
PLAIN = load_combiner("support_plain")


def _row(rng: np.random.Generator, entail: bool = True) -> dict[str, float]:
    row = {f: float(rng.random()) for f in SUPPORT.features}
    # no sign of the judge's rules (support.after_rules, which bag_scores applies): a random
    # antonym value would cap every claim at 0.3
    row["antonym"] = 0.0
    if not entail:
        del row[ENTAIL]
    return row


def _bags(n: int, seed: int = 0, graded: bool = False) -> list[Bag]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        rows = tuple(_row(rng, entail=bool(rng.random() < 0.7)) for _ in range(int(rng.integers(1, 4))))
        out.append(Bag(rows, float(rng.random()) if graded else float(i % 2)))
    return out


@pytest.mark.parametrize("kind", ["binary", "graded"])
def test_gradient_and_hessian_match_finite_differences(kind: str) -> None:
    bags = _bags(30, graded=kind == "graded")
    d = _Design(bags, {"support": SUPPORT, "plain": PLAIN})
    y = np.array([b.label for b in bags])
    link = {"binary": "all supported", "graded": "mean support"}[kind]
    theta0 = d.theta({"support": SUPPORT, "plain": PLAIN})
    theta = theta0 + np.random.default_rng(1).normal(0, 0.3, d.width)
    _, g, h = _objective(d, y, link, theta, theta0, 2.0, True)
    assert g is not None and h is not None
    eps = 1e-6
    for j in range(d.width):
        e = np.zeros(d.width)
        e[j] = eps
        fp, gp, _ = _objective(d, y, link, theta + e, theta0, 2.0, True)
        fm, gm, _ = _objective(d, y, link, theta - e, theta0, 2.0, True)
        assert gp is not None and gm is not None
        assert (fp - fm) / (2 * eps) == pytest.approx(g[j], abs=1e-5)
        np.testing.assert_allclose((gp - gm) / (2 * eps), h[:, j], atol=1e-4)


def test_one_claim_bags_are_logistic_regression_on_claims() -> None:
    """With one claim per sample, the 'all supported' link is the claim's own likelihood: the bag
    scores after the refit are the claim probabilities of the refitted combiner."""
    rng = np.random.default_rng(3)
    bags = [Bag((_row(rng),), float(i % 2)) for i in range(40)]
    s, p = refit(bags, SUPPORT, PLAIN, label_kind="binary")
    assert bag_scores(bags, s, p) == pytest.approx([s.probability(b.rows[0]) for b in bags])
    assert p == PLAIN  # no claim without `entail`: the plain combiner is untouched


def test_scorer_follows_the_judge() -> None:
    rng = np.random.default_rng(0)
    assert scorer_of(_row(rng), SUPPORT, PLAIN) == "support"
    assert scorer_of(_row(rng, entail=False), SUPPORT, PLAIN) == "plain"
    assert scorer_of(_row(rng), PLAIN, PLAIN) == "plain"  # a support combiner without `entail`


def test_labels_against_the_packaged_weights_move_the_scores_towards_them() -> None:
    """Labels that say the opposite of the packaged combiner about one feature: the refit scores
    agree with them better, and more so with a weaker prior."""
    rng = np.random.default_rng(7)
    bags = []
    for _ in range(120):
        row = _row(rng)
        # the packaged weight of cov_all is negative (the other coverage features carry it); these
        # labels say that a claim is supported exactly when most of its terms are in the contexts
        bags.append(Bag((row,), 1.0 if row["cov_all"] > 0.5 else 0.0))
    y = np.array([b.label for b in bags])
    before = bag_scores(bags, SUPPORT, PLAIN)
    errors = [float(np.mean(np.abs(before - y)))]
    aucs = [roc_auc(before, y == 1)]
    for l2 in (16.0, 4.0, 1.0):
        s, p = refit(bags, SUPPORT, PLAIN, label_kind="binary", l2=l2)
        after = bag_scores(bags, s, p)
        errors.append(float(np.mean(np.abs(after - y))))
        aucs.append(roc_auc(after, y == 1))
        assert s.mean == SUPPORT.mean and s.scale == SUPPORT.scale  # the packaged standardisation
        assert s.features == SUPPORT.features
    assert errors == sorted(errors, reverse=True) and errors[-1] < errors[0] - 0.1
    assert aucs[-1] > aucs[0] + 0.1


def test_a_strong_prior_keeps_the_packaged_weights() -> None:
    bags = _bags(40)
    s, _ = refit(bags, SUPPORT, PLAIN, label_kind="binary", l2=1e6)
    np.testing.assert_allclose(s.weights, SUPPORT.weights, atol=1e-3)
    assert s.bias == pytest.approx(SUPPORT.bias, abs=1e-3)


def test_the_combiners_declared_features_are_read() -> None:
    """The fit follows the names a combiner declares, whatever they are."""
    small = Combiner("support", ("sim_max", ENTAIL), (1.0, 2.0), -1.0, record={"version": "x"})
    plain = Combiner("support_plain", ("cov_all",), (1.5,), -0.5, record={"version": "y"})
    rng = np.random.default_rng(0)
    bags = [Bag((_row(rng, entail=i % 3 != 0),), float(i % 2)) for i in range(30)]
    s, p = refit(bags, small, plain, label_kind="binary")
    assert s.features == ("sim_max", ENTAIL) and p.features == ("cov_all",)
    bad = [Bag(({"sim_max": 0.3},), 1.0)]  # no cov_all for the plain combiner
    with pytest.raises(ConfigError, match="cov_all"):
        refit(bad, small, plain, label_kind="binary")


def test_refit_is_deterministic_and_checks_its_input() -> None:
    bags = _bags(40, graded=True)
    a = refit(bags, SUPPORT, PLAIN, label_kind="graded")
    b = refit(bags, SUPPORT, PLAIN, label_kind="graded")
    assert a == b
    with pytest.raises(ConfigError, match="binary labels"):
        refit(bags, SUPPORT, PLAIN, label_kind="binary")
    with pytest.raises(ConfigError, match="l2"):
        refit(bags, SUPPORT, PLAIN, label_kind="graded", l2=0)
    with pytest.raises(ConfigError, match="at least one claim"):
        Bag((), 1.0)
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        Bag(({"x": 1.0},), 2.0)
