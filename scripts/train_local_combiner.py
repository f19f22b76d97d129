"""Train the local judge's claim-support combiners (logistic regression, NumPy only).

Rows of (named features, label), each made by the judge's own feature pipeline
(:meth:`ragmeter.local.judge.LocalJudge.claim_features`: embedder, text features and, for English
claims, the packaged verifier on every claim), from:

- data/dev, training split only (the held-out 30% of ids, chosen by ``bench/local_judge.is_heldout``,
  is never read for fitting):
  - begin_dev.jsonl (dialogue responses with a knowledge snippet, label 1 = fully attributable):
    every claim of a label-1 response is a positive; of a label-0 response only its weakest claim
    (lowest probability under the hand-set prior) is a negative (the label says at least one claim
    is unsupported, not which);
  - halueval_dev.jsonl (right answer vs hallucinated answer over the same knowledge): claims of the
    right answer are positives, the weakest claim of the hallucinated one a negative;
- perturbations of the positive claims (seeded): a negation inserted or removed, a number changed,
  a capitalised name swapped for one from another record; negatives that teach the number / name /
  negation features what the dev files rarely show;
- templates (``scripts/combiner_templates.py``): plain cases and hedges written for the purpose,
  English and Chinese: paraphrases the verifier entails with few shared words (positives), copied
  wording with one fact swapped (negatives), hedged forms of both.

Two combiners are fitted by :func:`ragmeter.local.calibration.fit_combiner` (standardised features,
L2-regularised logistic regression by Newton's method, classes weighted equally):

- ``weights/support.json``: :data:`ragmeter.local.support.SUPPORT_FEATURES` plus ``entail`` (the
  English claims, which the verifier reads);
- ``weights/support_plain.json``: the same features without ``entail`` (Chinese claims, and a judge
  without the verifier), on every row. Written only with ``--refit-plain``.

Each is written with its training record (files, split, seed, date, sizes, held-out metrics).
``--rows FILE`` also writes the rows (JSON lines: source, features, label), and ``--from-rows FILE``
fits on such a file instead of computing them again: the rows are all a refit needs.

    python scripts/train_local_combiner.py [--data DIR] [--seed 0] [--l2 1.0] [--dry-run] [--refit-plain]
        [--rows FILE | --from-rows FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "src" / "ragmeter" / "local" / "weights"

_spec = importlib.util.spec_from_file_location("bench_local_judge", ROOT / "bench" / "local_judge.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_local_judge"] = bench
_spec.loader.exec_module(bench)
sys.path.insert(0, str(ROOT / "scripts"))
from combiner_templates import TEMPLATES_EN, TEMPLATES_ZH  # noqa: E402

from ragmeter.local import LocalJudge  # noqa: E402
from ragmeter.local.calibration import Combiner, fit_combiner, fixed  # noqa: E402
from ragmeter.local.claims import extract_claims  # noqa: E402
from ragmeter.local.support import ENTAIL, SUPPORT_FEATURES  # noqa: E402
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


FEATURES = (*SUPPORT_FEATURES, ENTAIL)
Row = tuple[str, dict[str, float], float]  # (source, features, label)


async def build(data: Path, seed: int, augment_share: float) -> list[Row]:
    judge = LocalJudge()
    rng = random.Random(seed)
    rows: list[Row] = []
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
        if not claims:
            continue
        feats = await judge.claim_features(claims, contexts)
        if label == 1.0:
            for c, row in zip(claims, feats, strict=True):
                rows.append((f"{source}_pos", row, 1.0))
                if rng.random() < augment_share:
                    bad = perturb(c, names, rng)
                    if bad and bad != c:
                        rows.append(("perturbed_neg", (await judge.claim_features([bad], contexts))[0], 0.0))
        else:
            rows.append((f"{source}_neg", min(feats, key=PRIOR.probability), 0.0))
    for lang, templates in (("en", TEMPLATES_EN), ("zh", TEMPLATES_ZH)):
        for tpl in templates:
            context = str(tpl["context"])
            for key, label in (("supported", 1.0), ("contradicted", 0.0)):
                claims = [str(c) for c in tpl[key]]  # type: ignore[attr-defined]
                for row in await judge.claim_features(claims, [context]):
                    rows.append((f"template_{lang}_{key}", row, label))
    return rows


def counts(rows: list[Row]) -> dict[str, int]:
    out: dict[str, int] = {}
    for source, _, _ in rows:
        out[source] = out.get(source, 0) + 1
    return out


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
    if args.from_rows:
        rows = [
            (str(d["source"]), {k: float(v) for k, v in d["features"].items()}, float(d["label"]))
            for d in map(json.loads, Path(args.from_rows).read_text("utf-8").splitlines())  # noqa: ASYNC240
        ]
    else:
        rows = await build(data, args.seed, args.augment)
        if args.rows:
            with open(args.rows, "w", encoding="utf-8") as fh:  # noqa: ASYNC230 - a script
                for source, row, label in rows:
                    fh.write(json.dumps({"source": source, "features": row, "label": label}) + "\n")
    verifier = default_verifier()
    fits = [("support", FEATURES)] + ([("support_plain", SUPPORT_FEATURES)] if args.refit_plain else [])
    for name, feats in fits:
        use = [r for r in rows if all(f in r[1] for f in feats)]  # support: the claims the verifier read
        record = {
            "kind": "trained",
            "version": "3",
            "script": "scripts/train_local_combiner.py",
            "data": ["data/dev/begin_dev.jsonl", "data/dev/halueval_dev.jsonl", "scripts/combiner_templates.py"],
            "split": f"training ids only: bench/local_judge.is_heldout (salt {bench.SPLIT_SEED!r}, "
            f"{bench.HELDOUT_SHARE:.0%} held out)",
            "seed": args.seed,
            "augment_share": args.augment,
            "date": time.strftime("%Y-%m-%d"),
            "examples": counts(use),
            "embedder": "use-multilingual-v3",
            "verifier": verifier.name if ENTAIL in feats else None,
            "premises": "best-aligned sentence; unless entailed >= 0.9, its two-sentence windows and the "
            "second-best sentence",
        }
        combiner = fit_combiner(
            [r[1] for r in use], [r[2] for r in use], feats, name=name, l2=args.l2, record=record
        )
        record = {**combiner.record, "heldout": await heldout_metrics(data, combiner)}
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
    ap.add_argument("--rows", help="also write the feature rows to this JSON-lines file")
    ap.add_argument("--from-rows", help="fit on the rows of this file (written by --rows) instead")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
