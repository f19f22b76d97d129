"""Experiment (not shipped): can multilingual USE pair features carry entailment into Chinese?

A logistic classifier over (|u - v|, u * v, cosine) of USE multilingual v3 embeddings, trained on
6,000 English pairs of the verifier's training data (seed 0), scored on English held-out pairs and
on the plain cases of tests/local/data/plain_cases.jsonl (premise = the context sentence sharing
most characters with the claim). docs/local-judge.md ("The verifier", "Chinese") reports the
result: too weak to help, so the judge does not use it.

    python scripts/experiment_use_pair_entailment.py
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from pathlib import Path

import numpy as np

from ragmeter.local.embedders import default_embedder
from ragmeter.stats.rank import roc_auc
from ragmeter.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import verifier_data as vd  # noqa: E402

CASES = ROOT / "tests" / "local" / "data" / "plain_cases.jsonl"


async def features(pairs: list[vd.Pair]) -> np.ndarray:
    emb = default_embedder()
    u = np.asarray(await emb.embed([p.premise for p in pairs]))
    v = np.asarray(await emb.embed([p.hypothesis for p in pairs]))
    x = np.hstack([np.abs(u - v), u * v, (u * v).sum(1, keepdims=True)])
    return np.hstack([x, np.ones((len(x), 1))])


def fit(a: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 300) -> np.ndarray:
    w = np.zeros(a.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(a @ w)))
        w -= 2.0 * (a.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0] / len(y))
    return w


async def main() -> None:
    rng = random.Random(0)
    pairs = vd.load_nli(ROOT / "data" / "nli" / "pairs_en.jsonl.gz", vd.DEFAULT_CAPS, rng)
    pairs = pairs + vd.synthetic(pairs, 3000, rng)
    train = rng.sample([p for p in pairs if p.split == "train"], 6000)
    test = [p for p in pairs if p.split == "test"][:1500]
    w = fit(await features(train), np.array([p.entail for p in train], dtype=float))
    p_test = 1 / (1 + np.exp(-((await features(test)) @ w)))
    y_test = np.array([p.entail for p in test])
    print(f"English held-out pairs: AUC {roc_auc(p_test, y_test):.3f}, n {len(test)}")
    cases = [json.loads(line) for line in CASES.read_text("utf-8").splitlines() if line.strip()]
    for lang in ("en", "zh"):
        got = [c for c in cases if c["lang"] == lang]
        ps = [
            vd.Pair(
                max(split_sentences(c["context"]), key=lambda s, c=c: len(set(s) & set(c["claim"]))),
                c["claim"],
                int(c["expected"] == "supported"),
                "plain",
            )
            for c in got
        ]
        p = 1 / (1 + np.exp(-((await features(ps)) @ w)))
        print(f"{lang} plain cases: AUC {roc_auc(p, np.array([x.entail for x in ps])):.3f}, n {len(ps)}")


if __name__ == "__main__":
    asyncio.run(main())
