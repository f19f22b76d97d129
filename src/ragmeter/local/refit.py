"""Refit the support combiners on labels of whole samples (multiple-instance learning, NumPy only).

A person labels a *sample* ("is everything the answer states supported by the contexts?"), while
the support combiner scores *claims*, and faithfulness is the share of supported claims. So each
labelled sample is a *bag* of claim feature rows with one label, and the combiners' weights are
fitted so that the bag's probability under them matches the label:

- **binary labels** (1: every claim is supported, 0: at least one is not): the probability that
  every claim is supported, ``prod_i p_i`` (claims independent given their features). A bag
  labelled 1 makes every claim a positive, ``sum_i log p_i``; a bag labelled 0 says that some
  claim is unsupported without saying which, ``log(1 - prod_i p_i)``, which puts the blame mostly
  on the claims the combiner already doubts. (``scripts/train_local_combiner.py`` makes the hard
  form of the same choice for BEGIN: every claim of a label-1 response is a positive, the weakest
  claim of a label-0 one a negative.) With one claim per sample this is plain logistic
  regression.
- **graded labels** (a share in [0, 1]): the expected share of supported claims, the metric's own
  value ``mean_i p_i``, against the label by cross-entropy (learning from label proportions).

Each claim is scored by the combiner that would score it in the judge
(:func:`~ragmeter.local.support.support_probability`: the one that reads ``entail`` when the
verifier read the claim, else the plain one), and the combiners' features are the names they
declare, read from each row. Weights are fitted in the packaged combiner's standardised space
(its ``mean`` and ``scale`` are kept) with a Gaussian prior centred on its weights and bias:
``- l2 / 2 * |theta - theta_packaged|^2``. With few labels the fit stays near the packaged
combiner; with many, the labels decide. Maximised by damped Newton steps (Levenberg-Marquardt),
deterministic; a combiner no claim reads keeps its packaged weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError
from ragmeter.local.calibration import Combiner
from ragmeter.local.support import after_rules, reads_entail

#: the two kinds of sample label and the link each is fitted with (see the module docstring)
LINKS: dict[str, str] = {"binary": "all supported", "graded": "mean support"}
#: default strength of the prior towards the packaged weights (docs/trust.md, "Adapting the judge")
DEFAULT_L2 = 4.0
_MAX_ITER = 200


@dataclass(frozen=True)
class Bag:
    """One labelled sample: the feature rows of its claims (each a mapping of feature names to
    values, as :func:`~ragmeter.local.support.claim_support` makes them) and its label."""

    rows: tuple[Mapping[str, float], ...]
    label: float

    def __post_init__(self) -> None:
        if not self.rows:
            raise ConfigError("a bag needs at least one claim")
        if not 0.0 <= float(self.label) <= 1.0:
            raise ConfigError(f"a bag's label must be in [0, 1], got {self.label!r}")


def scorer_of(row: Mapping[str, float], support: Combiner, plain: Combiner) -> str:
    """Which combiner scores a claim, as the judge decides
    (:func:`~ragmeter.local.support.reads_entail`): ``"support"`` or ``"plain"``."""
    return "support" if reads_entail(row, support) else "plain"


class _Design:
    """The bags as one design matrix: a column block (standardised features + bias) per combiner,
    a claim's row filled in its combiner's block only."""

    def __init__(self, bags: Sequence[Bag], combiners: Mapping[str, Combiner]) -> None:
        self.names = list(combiners)
        self.offsets: dict[str, int] = {}
        width = 0
        for name in self.names:
            self.offsets[name] = width
            width += len(combiners[name].features) + 1
        self.width = width
        rows: list[np.ndarray] = []
        owner: list[int] = []
        used: set[str] = set()
        for b, bag in enumerate(bags):
            for values in bag.rows:
                name = scorer_of(values, combiners["support"], combiners["plain"])
                comb = combiners[name]
                missing = [f for f in comb.features if f not in values]
                if missing:
                    raise ConfigError(
                        f"combiner {comb.name!r} reads feature(s) {', '.join(missing)}, which a claim "
                        "row lacks (the rows were made by another version of the judge?)"
                    )
                x = np.array([float(values[f]) for f in comb.features], dtype=np.float64)
                a = np.zeros(width)
                off = self.offsets[name]
                a[off : off + len(x)] = (x - np.array(comb.mean)) / np.array(comb.scale)
                a[off + len(x)] = 1.0
                rows.append(a)
                owner.append(b)
                used.add(name)
        self.a = np.array(rows, dtype=np.float64).reshape(len(rows), width)
        self.bag = np.array(owner, dtype=np.int64)
        self.n_bags = len(bags)
        self.used = used
        self.size = np.bincount(self.bag, minlength=self.n_bags).astype(np.float64)

    def theta(self, combiners: Mapping[str, Combiner]) -> np.ndarray:
        out = np.zeros(self.width)
        for name in self.names:
            c = combiners[name]
            off = self.offsets[name]
            out[off : off + len(c.weights)] = c.weights
            out[off + len(c.weights)] = c.bias
        return out

    def combiners(
        self, theta: np.ndarray, like: Mapping[str, Combiner], record: Mapping[str, Any]
    ) -> dict[str, Combiner]:
        out: dict[str, Combiner] = {}
        for name in self.names:
            c = like[name]
            if name not in self.used:
                out[name] = c
                continue
            off = self.offsets[name]
            n = len(c.features)
            out[name] = Combiner(
                name=c.name,
                features=c.features,
                weights=tuple(round(float(v), 6) for v in theta[off : off + n]),
                bias=round(float(theta[off + n]), 6),
                mean=c.mean,
                scale=c.scale,
                record=dict(record),
            )
        return out

    def bag_means(self, theta: np.ndarray) -> np.ndarray:
        p = _sigmoid(self.a @ theta)
        return np.bincount(self.bag, weights=p, minlength=self.n_bags) / self.size


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -z))


def _objective(
    d: _Design, y: np.ndarray, link: str, theta: np.ndarray, theta0: np.ndarray, l2: float, derivs: bool
) -> tuple[float, np.ndarray | None, np.ndarray | None]:
    """Log posterior (up to a constant) and, with ``derivs``, its gradient and Hessian."""
    z = d.a @ theta
    p = _sigmoid(z)
    q = 1.0 - p
    logp = -np.logaddexp(0.0, -z)
    yb = y[d.bag]
    if link == "all supported":
        s = np.bincount(d.bag, weights=logp, minlength=d.n_bags)  # log P(every claim supported)
        s = np.minimum(s, -1e-12)
        pos = y >= 0.5
        ll = float(s[pos].sum() + np.log(-np.expm1(s[~pos])).sum())
        if not derivs:
            return ll - 0.5 * l2 * float(np.sum((theta - theta0) ** 2)), None, None
        r = 1.0 / np.expm1(-s)  # P / (1 - P)
        r_claim = r[d.bag]
        positive = yb >= 0.5
        gz = np.where(positive, q, -r_claim * q)
        hdiag = np.where(positive, -p * q, r_claim * p * q)
        u = np.zeros((d.n_bags, d.width))
        np.add.at(u, d.bag, d.a * q[:, None])
        rank1 = np.where(pos, 0.0, -r * (1.0 + r))
    else:  # "mean support": cross-entropy of the bag's mean probability against a graded label
        m = np.clip(np.bincount(d.bag, weights=p, minlength=d.n_bags) / d.size, 1e-9, 1 - 1e-9)
        ll = float(np.sum(y * np.log(m) + (1 - y) * np.log(1 - m)))
        if not derivs:
            return ll - 0.5 * l2 * float(np.sum((theta - theta0) ** 2)), None, None
        d1 = y / m - (1 - y) / (1 - m)
        d2 = -y / m**2 - (1 - y) / (1 - m) ** 2
        ds = p * q / d.size[d.bag]
        gz = d1[d.bag] * ds
        hdiag = d1[d.bag] * ds * (1 - 2 * p)
        u = np.zeros((d.n_bags, d.width))
        np.add.at(u, d.bag, d.a * ds[:, None])
        rank1 = d2
    grad = d.a.T @ gz - l2 * (theta - theta0)
    hess = (d.a * hdiag[:, None]).T @ d.a + (u * rank1[:, None]).T @ u - l2 * np.eye(d.width)
    return ll - 0.5 * l2 * float(np.sum((theta - theta0) ** 2)), grad, hess


def refit(
    bags: Sequence[Bag],
    support: Combiner,
    plain: Combiner,
    *,
    label_kind: str,
    l2: float = DEFAULT_L2,
    record: Mapping[str, Any] | None = None,
) -> tuple[Combiner, Combiner]:
    """The support and plain combiners refitted on ``bags`` (``label_kind``: ``"binary"`` or
    ``"graded"``, see the module docstring), each with ``record`` as its record. A combiner that
    scores no claim of the bags is returned unchanged."""
    if label_kind not in LINKS:
        raise ConfigError(f"label_kind must be one of {', '.join(LINKS)}, got {label_kind!r}")
    if l2 <= 0:
        raise ConfigError(
            f"l2 must be positive (the prior keeps the fit near the packaged weights), got {l2}"
        )
    if not bags:
        raise ConfigError("refit needs at least one labelled sample")
    y = np.array([float(b.label) for b in bags], dtype=np.float64)
    if label_kind == "binary" and not set(np.unique(y)) <= {0.0, 1.0}:
        raise ConfigError("binary labels must be 0 or 1")
    link = LINKS[label_kind]
    like = {"support": support, "plain": plain}
    d = _Design(bags, like)
    theta0 = d.theta(like)
    theta = theta0.copy()
    f, g, h = _objective(d, y, link, theta, theta0, l2, True)
    mu = 0.0
    for _ in range(_MAX_ITER):
        assert g is not None and h is not None
        step = None
        while step is None:
            try:
                np.linalg.cholesky(-h + mu * np.eye(d.width))
                candidate = np.linalg.solve(-h + mu * np.eye(d.width), g)
            except np.linalg.LinAlgError:
                mu = max(mu * 10.0, 1e-4)
                continue
            f_new, _, _ = _objective(d, y, link, theta + candidate, theta0, l2, False)
            if f_new >= f - 1e-12:
                step = candidate
            else:
                mu = max(mu * 10.0, 1e-4)
                if mu > 1e12:
                    step = np.zeros(d.width)
        theta = theta + step
        f_old = f
        f, g, h = _objective(d, y, link, theta, theta0, l2, True)
        mu = mu / 10.0 if mu > 1e-4 else 0.0
        if np.max(np.abs(step)) < 1e-9 or abs(f - f_old) < 1e-12 * max(1.0, abs(f)):
            break
    rec = {**dict(record or {}), "l2": float(l2), "link": link}
    out = d.combiners(theta, like, rec)
    return out["support"], out["plain"]


def bag_scores(bags: Sequence[Bag], support: Combiner, plain: Combiner) -> np.ndarray:
    """Each bag's metric value under the combiners: the mean support probability of its claims,
    after the judge's rules (:func:`~ragmeter.local.support.after_rules`; the fit itself reads the
    combiners' probabilities, which the rules only cap or floor)."""
    if not bags:
        return np.zeros(0)
    like = {"support": support, "plain": plain}
    d = _Design(bags, like)
    p = _sigmoid(d.a @ d.theta(like))
    rows = [values for bag in bags for values in bag.rows]
    ruled = np.array(
        [after_rules(values, float(q), scorer_of(values, support, plain) == "support") for values, q in zip(rows, p, strict=True)]
    )
    return np.bincount(d.bag, weights=ruled, minlength=d.n_bags) / d.size


__all__ = ["DEFAULT_L2", "LINKS", "Bag", "bag_scores", "refit", "scorer_of"]
