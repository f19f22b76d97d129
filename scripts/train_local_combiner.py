"""Train the local judge's claim-support combiner (logistic regression, NumPy only).

Data: data/dev only, training split only (the held-out 30% of ids, chosen by
``bench/local_judge.is_heldout``, is never read for fitting):

- begin_dev.jsonl (dialogue responses with a knowledge snippet, label 1 = fully attributable):
  every claim of a label-1 response is a positive; of a label-0 response only its weakest claim
  (lowest probability under the hand-set prior) is a negative (the label says at least one claim
  is unsupported, not which).
- halueval_dev.jsonl (right answer vs hallucinated answer over the same knowledge): claims of the
  right answer are positives, the weakest claim of the hallucinated one a negative.
- Perturbations of the positive claims (seeded): a negation inserted or removed, a number changed,
  a capitalised name swapped for one from another record. These are negatives; they teach the
  number / name / negation features what the dev files rarely show.

Two combiners are fitted on the same examples, standardised features, L2-regularised logistic
regression by Newton's method:

- ``weights/support.json``: :data:`ragmeter.local.support.SUPPORT_FEATURES` plus ``entail``, the
  packaged entailment verifier's probability (what the judge uses for English claims);
- ``weights/support_plain.json``: the same features without ``entail`` (Chinese claims, claims the
  verifier does not read, or a judge without the verifier). Written only with ``--refit-plain``:
  the committed one is the combiner as it was before the verifier (record version 1), kept so that
  everything the verifier does not read scores exactly as before.

Each is written with its training record (files, split, seed, date, sizes, held-out metrics).

    python scripts/train_local_combiner.py [--data DIR] [--seed 0] [--l2 1.0] [--dry-run] [--refit-plain]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "src" / "ragmeter" / "local" / "weights"

_spec = importlib.util.spec_from_file_location("bench_local_judge", ROOT / "bench" / "local_judge.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_local_judge"] = bench
_spec.loader.exec_module(bench)

from ragmeter.local import LocalJudge  # noqa: E402
from ragmeter.local.calibration import Combiner, fixed  # noqa: E402
from ragmeter.local.claims import extract_claims  # noqa: E402
from ragmeter.local.support import ENTAIL, SUPPORT_FEATURES, claim_support, index_contexts  # noqa: E402
from ragmeter.local.verifier import default_verifier  # noqa: E402
from ragmeter.stats.agreement import agreement_summary  # noqa: E402

PRIOR = fixed(
    "prior",
    {"sim_max": 4.0, "cov_best": 4.0, "cov_all": 2.0, "num_missing": -3.0, "ent_novel": -3.0},
    bias=-6.0,
    note="chooses the weakest claim of a negative answer",
)
_AUX_RE = re.compile(r"\b(is|are|was|were|can|will|does|did|has|have)\b")
_NOT_RE = re.compile(r"\b(is|are|was|were|can|will|does|did|has|have) not\b")
_NUM_RE = re.compile(r"\b\d{1,4}\b")
_CAP_RE = re.compile(r"(?<=\s)[A-Z][a-z]{2,}\b")


def perturb(claim: str, names: list[str], rng: random.Random) -> str | None:
    kinds = ["neg", "num", "name"]
    rng.shuffle(kinds)
    for kind in kinds:
        if kind == "neg":
            if _NOT_RE.search(claim):
                return _NOT_RE.sub(lambda m: m.group(1), claim, count=1)
            if _AUX_RE.search(claim):
                return _AUX_RE.sub(lambda m: m.group(1) + " not", claim, count=1)
        if kind == "num":
            m = _NUM_RE.search(claim)
            if m:
                n = int(m.group(0))
                new = n + rng.choice([-3, -2, -1, 1, 2, 3, 10]) if n > 20 else n + rng.choice([1, 2, 3])
                return claim[: m.start()] + str(max(new, 0)) + claim[m.end() :]
        if kind == "name":
            caps = list(_CAP_RE.finditer(claim))
            if caps and names:
                m = rng.choice(caps)
                other = rng.choice(names)
                if other.lower() != m.group(0).lower():
                    return claim[: m.start()] + other + claim[m.end() :]
    return None


async def feature_rows(judge: LocalJudge, claims: list[str], contexts: list[str]) -> list[dict[str, float]]:
    ctx = index_contexts(contexts)
    if not ctx.sentences or not claims:
        return []
    emb = await judge.embed([*claims, *ctx.sentences])
    sims = emb[: len(claims)] @ emb[len(claims) :].T
    return [f.values for f in await claim_support(claims, ctx, sims, default_verifier())]


FEATURES = (*SUPPORT_FEATURES, ENTAIL)


async def build(data: Path, seed: int, augment_share: float) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    judge = LocalJudge()
    rng = random.Random(seed)
    xs: list[list[float]] = []
    ys: list[float] = []
    counts = {"begin_pos": 0, "begin_neg": 0, "halueval_pos": 0, "halueval_neg": 0, "perturbed_neg": 0}
    names: list[str] = []
    samples: list[tuple[str, list[str], str, float]] = []  # (source, contexts, answer, label)
    for r in bench.load(data / "begin_dev.jsonl"):
        if not bench.is_heldout(str(r["id"])):
            samples.append(("begin", r["contexts"], r["answer"], float(r["label"])))
    for r in bench.load(data / "halueval_dev.jsonl"):
        if not bench.is_heldout(str(r["id"])):
            good, bad = bench.variants(r)
            samples.append(("halueval", r["contexts"], good["answer"], 1.0))
            samples.append(("halueval", r["contexts"], bad["answer"], 0.0))
    for _, contexts, _, _ in samples:
        names.extend(m.group(0) for c in contexts for m in _CAP_RE.finditer(c))
    names = sorted(set(names))
    for source, contexts, answer, label in samples:
        claims = extract_claims(answer)
        rows = await feature_rows(judge, claims, contexts)
        if not rows:
            continue
        if label == 1.0:
            for c, row in zip(claims, rows, strict=True):
                xs.append([row.get(f, math.nan) for f in FEATURES])
                ys.append(1.0)
                counts[f"{source}_pos"] += 1
                if rng.random() < augment_share:
                    bad = perturb(c, names, rng)
                    if bad and bad != c:
                        prow = (await feature_rows(judge, [bad], contexts))[0]
                        xs.append([prow.get(f, math.nan) for f in FEATURES])
                        ys.append(0.0)
                        counts["perturbed_neg"] += 1
        else:
            weakest = min(rows, key=PRIOR.probability)
            xs.append([weakest.get(f, math.nan) for f in FEATURES])
            ys.append(0.0)
            counts[f"{source}_neg"] += 1
    return np.array(xs), np.array(ys), counts


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    z = (x - mean) / scale
    a = np.hstack([z, np.ones((len(z), 1))])
    w = np.zeros(a.shape[1])
    # class weights: both classes count equally
    cw = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    reg = np.full(a.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(a @ w)))
        g = a.T @ (cw * (p - y)) + reg * w
        h = (a * (cw * p * (1 - p))[:, None]).T @ a + np.diag(reg)
        step = np.linalg.solve(h, g)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w[:-1], float(w[-1]), mean, scale


async def heldout_metrics(data: Path, combiner: Combiner) -> dict[str, Any]:
    judge = LocalJudge(support=combiner, verifier="packaged" if ENTAIL in combiner.features else None)
    out: dict[str, Any] = {}
    scores: list[float | None] = []
    counts: list[float | None] = []
    labels: list[float] = []
    for r in bench.load(data / "begin_dev.jsonl"):
        if bench.is_heldout(str(r["id"])):
            f = await bench.faithfulness(judge, r)
            scores.append(f["mean_p"])
            counts.append(f["count"])
            labels.append(float(r["label"]))
    s = agreement_summary("point", "binary", scores=scores, labels=labels)
    c = agreement_summary("point", "binary", scores=counts, labels=labels)
    out["begin_heldout_auc_mean_p"] = s["auc"]
    out["begin_heldout_auc_count"] = c["auc"]
    out["begin_heldout_n"] = s["n"]
    pref: list[float | None] = []
    oth: list[float | None] = []
    pref_c: list[float | None] = []
    oth_c: list[float | None] = []
    for r in bench.load(data / "halueval_dev.jsonl"):
        if bench.is_heldout(str(r["id"])):
            good, bad = bench.variants(r)
            fg, fb = await bench.faithfulness(judge, good), await bench.faithfulness(judge, bad)
            pref.append(fg["mean_p"])
            oth.append(fb["mean_p"])
            pref_c.append(fg["count"])
            oth_c.append(fb["count"])
    h = agreement_summary("pair", preferred=pref, other=oth)
    hc = agreement_summary("pair", preferred=pref_c, other=oth_c)
    out["halueval_heldout_pair_accuracy_mean_p"] = h["accuracy"]
    out["halueval_heldout_pair_accuracy_count"] = hc["accuracy"]
    out["halueval_heldout_n"] = h["n"]
    return out


async def main_async(args: argparse.Namespace) -> None:
    data = Path(args.data)
    x, y, counts = await build(data, args.seed, args.augment)
    read = ~np.isnan(x).any(axis=1)  # claims the verifier read (it skips Chinese text)
    verifier = default_verifier()
    fits = [("support", FEATURES)] + ([("support_plain", SUPPORT_FEATURES)] if args.refit_plain else [])
    for name, feats in fits:
        cols = [FEATURES.index(f) for f in feats]
        rows = read if ENTAIL in feats else np.ones(len(y), dtype=bool)
        w, b, mean, scale = fit(x[rows][:, cols], y[rows], args.l2)
        record = {
            "kind": "trained",
            "version": "2",
            "script": "scripts/train_local_combiner.py",
            "data": ["data/dev/begin_dev.jsonl", "data/dev/halueval_dev.jsonl"],
            "split": f"training ids only: bench/local_judge.is_heldout (salt {bench.SPLIT_SEED!r}, "
            f"{bench.HELDOUT_SHARE:.0%} held out)",
            "seed": args.seed,
            "l2": args.l2,
            "augment_share": args.augment,
            "date": time.strftime("%Y-%m-%d"),
            "examples": {**counts, "total": int(rows.sum()), "positives": int(y[rows].sum())},
            "embedder": "use-multilingual-v3",
            "verifier": verifier.name if ENTAIL in feats and verifier is not None else None,
        }
        combiner = Combiner(
            name=name,
            features=feats,
            weights=tuple(round(float(v), 6) for v in w),
            bias=round(b, 6),
            mean=tuple(round(float(v), 6) for v in mean),
            scale=tuple(round(float(v), 6) for v in scale),
            record=record,
        )
        record["heldout"] = await heldout_metrics(data, combiner)
        combiner = Combiner.from_dict({**combiner.to_dict(), "record": record})
        print(json.dumps(combiner.to_dict(), indent=1))
        if not args.dry_run:
            path = WEIGHTS / f"{name}.json"
            path.write_text(json.dumps(combiner.to_dict(), indent=1) + "\n", "utf-8")
            print(f"wrote {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(bench.DATA))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--augment", type=float, default=0.5, help="share of positives that get a perturbed twin")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--refit-plain", action="store_true", help="also rewrite support_plain.json (see above)")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
