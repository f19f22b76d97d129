"""The local judge adapted to a few labels (``ragmeter calibrate``), measured on the dev sets.

For each set, the features of every sample's claims are computed once, the way ``ragmeter
calibrate`` computes them (:func:`ragmeter.run.calibrate.claim_rows`: the claims faithfulness
verifies, with the packaged judge's features). Then, ``--draws`` times per number of labels:

1. n samples are drawn uniformly without replacement from the set's **held-out** ids
   (``bench/local_judge.is_heldout``: 30% of ids, never used to fit the packaged combiner, which
   was trained on the other 70% of BEGIN and HaluEval);
2. the combiners are refitted on the drawn samples that have claims to check (those without are
   left out, as ``calibrate`` does), with the defaults (``l2`` 4, the link of binary labels);
3. the packaged and the adapted judge are compared on the **other** held-out samples: ROC AUC and
   balanced accuracy at 0.5 against the labels (:func:`ragmeter.stats.agreement.agreement_summary`),
   and the judge's mean minus the human mean over them (the judge's bias in level);
4. beside it, the gain in ROC AUC that ``calibrate`` would print for those n labels (5-fold
   cross-validation, seed 0), to see how well it foretells the gain on the other samples.

Sets, as point labels: BEGIN (dialogue responses, label 1 = fully attributable to the knowledge),
HaluEval (each pair: the right answer labelled 1, the hallucinated one 0; drawn by pair, n labels
= n/2 pairs, so both answers to a question are on the same side). Results: mean, standard
deviation and 2.5-97.5 percentiles over the draws, and the share of draws where the adapted judge
did better; they are in docs/trust.md ("Adapting the judge to your labels").

    python bench/calibrate_local.py [--draws 200] [--labels 30,50,100,200] [--json]
    python bench/calibrate_local.py --choose-l2 0.25,1,4,16,64 [--draws 200]   # how l2 4 was chosen
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_local_judge", ROOT / "bench" / "local_judge.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_local_judge"] = bench
_spec.loader.exec_module(bench)
_tspec = importlib.util.spec_from_file_location(
    "train_local_combiner", ROOT / "scripts" / "train_local_combiner.py"
)
assert _tspec and _tspec.loader
train = importlib.util.module_from_spec(_tspec)
_tspec.loader.exec_module(train)

from ragmeter.dataset import Sample  # noqa: E402
from ragmeter.local import LocalJudge  # noqa: E402
from ragmeter.local.refit import DEFAULT_L2, Bag, bag_scores, refit  # noqa: E402
from ragmeter.run.calibrate import claim_rows, cross_validated_scores  # noqa: E402
from ragmeter.stats.rank import balanced_accuracy, roc_auc  # noqa: E402


async def featurise(judge: LocalJudge, data: Path) -> dict[str, list[dict[str, Any]]]:
    """Per set, every sample: ``{"group", "label", "heldout", "rows"}`` (rows None: no claim)."""
    out: dict[str, list[dict[str, Any]]] = {"begin": [], "halueval": []}
    for r in bench.load(data / "begin_dev.jsonl"):
        s = Sample(question=r.get("question") or "", contexts=r["contexts"], answer=r["answer"], id=r["id"])
        out["begin"].append(
            {
                "group": r["id"],
                "label": float(r["label"]),
                "heldout": bench.is_heldout(str(r["id"])),
                "rows": await claim_rows(judge, s, "faithfulness"),
            }
        )
    for r in bench.load(data / "halueval_dev.jsonl"):
        good, bad = bench.variants(r)
        for v, label in ((good, 1.0), (bad, 0.0)):
            s = Sample(question=v.get("question") or "", contexts=v["contexts"], answer=v["answer"])
            out["halueval"].append(
                {
                    "group": r["id"],
                    "label": label,
                    "heldout": bench.is_heldout(str(r["id"])),
                    "rows": await claim_rows(judge, s, "faithfulness"),
                }
            )
    return out


def unseen_judge(samples: list[dict[str, Any]], support: Any, plain: Any) -> tuple[Any, Any]:
    """Combiners fitted as the packaged ones were (scripts/train_local_combiner.py: every claim of
    a label-1 sample a positive, the weakest claim of a label-0 one a negative, by its PRIOR;
    :func:`~ragmeter.local.calibration.fit_combiner`, l2 1), on the *training* ids of one set only,
    without the perturbed claims and templates: a judge that has not seen the other set's kind of
    data."""
    from ragmeter.local.calibration import fit_combiner

    rows: list[dict[str, float]] = []
    labels: list[float] = []
    for s in samples:
        if s["heldout"] or s["rows"] is None:
            continue
        chosen = s["rows"] if s["label"] == 1.0 else [min(s["rows"], key=train.PRIOR.probability)]
        rows.extend(chosen)
        labels.extend([s["label"]] * len(chosen))
    out = []
    for comb in (support, plain):
        use = [k for k, row in enumerate(rows) if all(f in row for f in comb.features)]
        out.append(
            fit_combiner(
                [rows[k] for k in use],
                [labels[k] for k in use],
                comb.features,
                name=comb.name,
                record={"kind": "trained", "version": "bench-unseen"},
            )
        )
    return out[0], out[1]


def _summary(values: list[float]) -> dict[str, float]:
    a = np.array(values, dtype=np.float64)
    return {
        "mean": float(a.mean()),
        "sd": float(a.std(ddof=1)) if len(a) > 1 else 0.0,
        "p2.5": float(np.percentile(a, 2.5)),
        "p97.5": float(np.percentile(a, 97.5)),
    }


def measure(
    samples: list[dict[str, Any]], n_labels: int, draws: int, seed: int, support: Any, plain: Any
) -> dict[str, Any]:
    groups = sorted({s["group"] for s in samples})
    per_group = len(samples) // len(groups)
    n_groups = n_labels // per_group
    if n_groups >= len(groups):
        raise ValueError(f"{n_labels} labels leave no held-out sample to measure on ({len(samples)} in all)")
    rng = np.random.default_rng(seed)
    rec: dict[str, list[float]] = {k: [] for k in ("auc_before", "auc_after", "bal_before", "bal_after")}
    rec.update({k: [] for k in ("bias_before", "bias_after", "cv_gain", "n_fit", "n_eval")})
    for _ in range(draws):
        chosen = {groups[i] for i in rng.choice(len(groups), size=n_groups, replace=False)}
        fit = [s for s in samples if s["group"] in chosen and s["rows"] is not None]
        rest = [s for s in samples if s["group"] not in chosen and s["rows"] is not None]
        bags = [Bag(tuple(s["rows"]), s["label"]) for s in fit]
        ys = np.array([s["label"] for s in fit])
        if min(int((ys == 0).sum()), int((ys == 1).sum())) < 2:
            continue  # a draw with one class only: calibrate refuses it
        s_fit, p_fit = refit(bags, support, plain, label_kind="binary", l2=DEFAULT_L2)
        test = [Bag(tuple(s["rows"]), s["label"]) for s in rest]
        y = np.array([s["label"] for s in rest]) == 1.0
        before, after = bag_scores(test, support, plain), bag_scores(test, s_fit, p_fit)
        rec["auc_before"].append(roc_auc(before, y))
        rec["auc_after"].append(roc_auc(after, y))
        rec["bal_before"].append(balanced_accuracy(before, y, 0.5))
        rec["bal_after"].append(balanced_accuracy(after, y, 0.5))
        rec["bias_before"].append(float(before.mean() - y.mean()))
        rec["bias_after"].append(float(after.mean() - y.mean()))
        cv = cross_validated_scores(bags, [s["group"] for s in fit], support, plain, label_kind="binary")
        cv_before = bag_scores(bags, support, plain)
        rec["cv_gain"].append(float(roc_auc(cv, ys == 1) - roc_auc(cv_before, ys == 1)))
        rec["n_fit"].append(len(fit))
        rec["n_eval"].append(len(rest))
    gains = np.array(rec["auc_after"]) - np.array(rec["auc_before"])
    return {
        "labels": n_labels,
        "draws": len(rec["auc_before"]),
        "n_fit_mean": float(np.mean(rec["n_fit"])),
        "n_eval_mean": float(np.mean(rec["n_eval"])),
        **{k: _summary(v) for k, v in rec.items() if k not in ("n_fit", "n_eval")},
        "auc_gain": _summary(gains.tolist()),
        "share_better": float(np.mean(gains > 0)),
    }


def choose_l2(
    samples: list[dict[str, Any]],
    grid: list[float],
    n_labels: int,
    draws: int,
    seed: int,
    support: Any,
    plain: Any,
) -> dict[str, Any]:
    """How the default prior was chosen: on a set's *training* ids (which the packaged combiner was
    fitted on, so no held-out sample is read), the ROC AUC gain of the refit with each ``l2`` in
    ``grid`` on n labels, measured on the other training ids, the same draws for every ``l2``."""
    train_ids = [s for s in samples if not s["heldout"]]
    groups = sorted({s["group"] for s in train_ids})
    per_group = len(train_ids) // len(groups)
    rng = np.random.default_rng(seed)
    gains: dict[float, list[float]] = {l2: [] for l2 in grid}
    for _ in range(draws):
        chosen = {groups[i] for i in rng.choice(len(groups), size=n_labels // per_group, replace=False)}
        fit = [
            Bag(tuple(s["rows"]), s["label"])
            for s in train_ids
            if s["group"] in chosen and s["rows"] is not None
        ]
        test = [
            Bag(tuple(s["rows"]), s["label"])
            for s in train_ids
            if s["group"] not in chosen and s["rows"] is not None
        ]
        y = np.array([b.label for b in test]) == 1.0
        base = roc_auc(bag_scores(test, support, plain), y)
        for l2 in grid:
            s_fit, p_fit = refit(fit, support, plain, label_kind="binary", l2=l2)
            gains[l2].append(float(roc_auc(bag_scores(test, s_fit, p_fit), y) - base))
    return {"labels": n_labels, "draws": draws, "gain_by_l2": {str(k): _summary(v) for k, v in gains.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(bench.DATA))
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--labels", default="30,50,100,200")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--choose-l2",
        default=None,
        metavar="GRID",
        help="instead: the AUC gain of each l2 in GRID (e.g. 0.25,1,4,16,64) on the training ids, 100 labels",
    )
    args = ap.parse_args()
    judge = LocalJudge()
    t0 = time.perf_counter()
    sets = asyncio.run(featurise(judge, Path(args.data)))
    t_feat = time.perf_counter() - t0
    out: dict[str, Any] = {
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "command": "python bench/calibrate_local.py " + " ".join(sys.argv[1:]),
        "featurise_s": round(t_feat, 1),
        "sets": {},
    }
    if args.choose_l2:
        grid = [float(x) for x in args.choose_l2.split(",")]
        for name, everything in sets.items():
            out["sets"][name] = choose_l2(
                everything, grid, 100, args.draws, args.seed, judge.support, judge.support_plain
            )
        print(json.dumps(out, indent=1))
        return
    for name, everything in sets.items():
        samples = [s for s in everything if s["heldout"]]
        n_valid = sum(1 for s in samples if s["rows"] is not None)
        other = "halueval" if name == "begin" else "begin"
        priors = {
            "packaged": (judge.support, judge.support_plain),
            f"trained on {other} only": unseen_judge(sets[other], judge.support, judge.support_plain),
        }
        scenarios: dict[str, list[dict[str, Any]]] = {}
        for label, (support, plain) in priors.items():
            rows = []
            for n in (int(x) for x in args.labels.split(",")):
                try:
                    rows.append(measure(samples, n, args.draws, args.seed, support, plain))
                except ValueError:
                    continue
            scenarios[label] = rows
        out["sets"][name] = {"n_heldout": len(samples), "n_with_claims": n_valid, "judges": scenarios}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{out['date']} {out['machine']}; features of the samples in {t_feat:.0f} s")
    print(
        "\n| set | judge before | labels | draws | samples measured | ROC AUC before -> adapted | gain (sd; 2.5-97.5%) "
        "| better | balanced acc. before -> adapted | judge - human mean before -> adapted | CV gain calibrate prints |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, s in out["sets"].items():
        for judge_name, rows in s["judges"].items():
            for r in rows:
                g = r["auc_gain"]
                print(
                    f"| {name} | {judge_name} | {r['labels']} | {r['draws']} | {r['n_eval_mean']:.0f} "
                    f"| {r['auc_before']['mean']:.3f} -> {r['auc_after']['mean']:.3f} "
                    f"| {g['mean']:+.4f} ({g['sd']:.4f}; {g['p2.5']:+.4f} to {g['p97.5']:+.4f}) "
                    f"| {r['share_better']:.2f} | {r['bal_before']['mean']:.3f} -> {r['bal_after']['mean']:.3f} "
                    f"| {r['bias_before']['mean']:+.3f} -> {r['bias_after']['mean']:+.3f} | {r['cv_gain']['mean']:+.4f} |"
                )


if __name__ == "__main__":
    main()
