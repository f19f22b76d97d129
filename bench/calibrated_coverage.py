"""How well the calibrated (PPI++) interval covers the human mean, and how wide it is, by number of
labels: on synthetic judges of known bias, and on the labelled dev sets with the local judge.

    python bench/calibrated_coverage.py [--draws 2000] [--skip-dev] [--out FILE.json]

Synthetic: labels Bernoulli(p) (or graded), judges of three kinds (``tracks``: follows the label
with noise and a +0.1 lean; ``lenient``: weakly follows it, +0.3 lean; ``blind``: unrelated to it),
and a ``tracks`` judge whose score is invalid on 10% of the samples, mostly bad ones (an invalid
score enters as the judge's mean). Each draw makes a fresh population of 1,000 unlabelled samples
and n labelled ones; the target is p, known. Reported: coverage of the 95% interval (PPI++ and
labels alone) and the mean width of each.

Dev sets (docs/trust.md): each set is scored once with the local judge (``ragmeter.evaluate``);
then each draw labels n samples picked uniformly without replacement (ragmeter's draw is uniform;
a fresh random subset stands in for a fresh seed) and the rest are unlabelled, as in a run. The
target is the set's human mean (the mean label over all its samples). Point files are used as
they are; pair files become points by scoring each variant and labelling the preferred one 1 and
the other 0: in these sets the labels are by construction absolute (HaluEval: the right answer is
faithful to the knowledge, the hallucinated one is not; TruthfulQA and HalluQA: a correct answer
is correct, a wrong one is not), so the preferred variant is good and the other bad on the
metric's own scale. WikiEval's pairs are left out (an answer written without the context may
still be partly faithful, so "not preferred" is not "0").
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragmeter.stats.bootstrap import bootstrap_ci  # noqa: E402
from ragmeter.stats.ppi import ppi_mean  # noqa: E402

N_UNLABELLED = 1000
LABELS = (20, 50, 100, 200)
DEV_LABELS = (30, 60, 100, 200)


def judge_scores(kind: str, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = y.size
    if kind == "tracks":
        f = 0.6 * y + 0.3 + rng.normal(0, 0.15, n)
    elif kind == "lenient":
        f = 0.25 * y + 0.65 + rng.normal(0, 0.2, n)
    elif kind == "blind":
        f = 0.8 + rng.normal(0, 0.15, n)
    else:
        raise ValueError(kind)
    return np.clip(f, 0, 1)


def synthetic(draws: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    rows = []
    for p in (0.5, 0.75, 0.9):
        for kind in ("tracks", "lenient", "blind", "tracks+invalid"):
            for n in LABELS:
                cov = cov0 = 0
                width = width0 = 0.0
                judge_bias = 0.0
                for _ in range(draws):
                    y = (rng.random(n + N_UNLABELLED) < p).astype(float)
                    f = judge_scores(kind.split("+")[0], y, rng)
                    if kind.endswith("+invalid"):
                        bad = rng.random(y.size) < np.where(y == 0, 0.3, 0.05)
                        f = np.where(bad, f[~bad].mean(), f)  # an invalid score enters as the judge's mean
                    judge_bias += f.mean() - p
                    est = ppi_mean(y[:n], f[:n], f[n:])
                    lo, hi = max(0.0, est.ci[0]), min(1.0, est.ci[1])
                    lo0, hi0 = max(0.0, est.labels_only_ci[0]), min(1.0, est.labels_only_ci[1])
                    cov += lo <= p <= hi
                    cov0 += lo0 <= p <= hi0
                    width += hi - lo
                    width0 += hi0 - lo0
                rows.append(
                    {
                        "p": p, "judge": kind, "n_labels": n, "draws": draws,
                        "judge_bias": round(judge_bias / draws, 3),
                        "coverage": round(cov / draws, 3), "width": round(width / draws, 3),
                        "labels_only_coverage": round(cov0 / draws, 3), "labels_only_width": round(width0 / draws, 3),
                    }
                )  # fmt: skip
                print(json.dumps(rows[-1]), flush=True)
    return rows


def dev_points(out: Path) -> list[dict[str, Any]]:
    """(set, metric, scores, labels) of the dev sets, scored once with the local judge."""
    import ragmeter
    from ragmeter.dataset import load_judgements
    from ragmeter.judges.factory import make_judge
    from ragmeter.run.agreement import metric_for_aspect

    judge = make_judge("local")
    sets = []
    for name in ("begin_dev", "halueval_dev", "truthfulqa_dev", "halluqa_zh_dev"):
        js = list(load_judgements(ROOT / "data" / "dev" / f"{name}.jsonl"))
        metric = metric_for_aspect(js[0].aspect, None, judge)
        samples, labels = [], []
        for j in js:
            if j.kind == "point":
                samples.append(j.sample)
                labels.append(float(j.label))
            else:
                samples.extend([j.sample_a, j.sample_b])
                labels.extend([1.0, 0.0] if j.preferred == "a" else [0.0, 1.0])
        t0 = time.perf_counter()
        result = ragmeter.evaluate(samples, [metric.name], judge, out=out / name)
        scores = [None if s is None or not s.valid else s.value for s in result.scores(metric.name)]
        print(
            f"{name}: {len(samples)} samples scored with {metric.name} in {time.perf_counter() - t0:.1f}s",
            flush=True,
        )
        sets.append({"set": name, "metric": metric.name, "scores": scores, "labels": labels})
    return sets


def dev_coverage(sets: list[dict[str, Any]], draws: int, seed: int = 1) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    rows = []
    for s in sets:
        y = np.array(s["labels"])
        valid = [v for v in s["scores"] if v is not None]
        fill = float(np.mean(valid))
        f = np.array([fill if v is None else v for v in s["scores"]])
        target = float(y.mean())
        judge_lo, judge_hi = bootstrap_ci(valid, n_resamples=2000, seed=0)
        for n in DEV_LABELS:
            cov = cov0 = 0
            width = width0 = 0.0
            for _ in range(draws):
                idx = rng.permutation(y.size)
                lab, unl = idx[:n], idx[n:]
                est = ppi_mean(y[lab], f[lab], f[unl])
                lo, hi = max(0.0, est.ci[0]), min(1.0, est.ci[1])
                lo0, hi0 = max(0.0, est.labels_only_ci[0]), min(1.0, est.labels_only_ci[1])
                cov += lo <= target <= hi
                cov0 += lo0 <= target <= hi0
                width += hi - lo
                width0 += hi0 - lo0
            rows.append(
                {
                    "set": s["set"], "metric": s["metric"], "n_samples": int(y.size),
                    "n_invalid": sum(v is None for v in s["scores"]), "human_mean": round(target, 3),
                    "judge_mean": round(float(np.mean(valid)), 3),
                    "judge_ci95": [round(judge_lo, 3), round(judge_hi, 3)],
                    "judge_ci_covers": bool(judge_lo <= target <= judge_hi),
                    "n_labels": n, "draws": draws, "coverage": round(cov / draws, 3), "width": round(width / draws, 3),
                    "labels_only_coverage": round(cov0 / draws, 3), "labels_only_width": round(width0 / draws, 3),
                }
            )  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--skip-dev", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="write every figure as JSON here")
    args = ap.parse_args()
    import tempfile

    record: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()} {platform.processor() or ''} python {platform.python_version()}".strip(),
        "command": " ".join(sys.argv),
        "synthetic": synthetic(args.draws),
    }
    if not args.skip_dev:
        with tempfile.TemporaryDirectory() as tmp:
            record["dev"] = dev_coverage(dev_points(Path(tmp)), args.draws)
    if args.out is not None:
        args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
