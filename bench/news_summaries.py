"""News-summary consistency of the local judge, by language and by error type.

Data (data/README.md): ``data/dev/news_summaries_constructed.jsonl``, point judgements with binary
labels (1 = the summary is consistent with the article), and
``data/dev/news_summary_pairs_constructed.jsonl``, each erroneous summary of that file paired with
its twin that has the one error undone (preferred). Every record's ``lang`` is ``en`` or ``zh`` and
its ``note`` starts with the error type (``consistent`` for label 1).

Each summary is scored with the metric ``ragmeter agreement`` uses for its aspect (faithfulness),
through ``aevaluate``, once per judge setting:

- ``default``: ``LocalJudge()`` as shipped;
- ``band-0.3-0.7``: ``LocalJudge(verify_band=(0.3, 0.7))``, the default before 2026-12-01 (the
  verifier reads only the claims the features leave between 0.3 and 0.7);
- ``no-verifier``: ``LocalJudge(verifier=None)``, the features alone.

The statistics are :func:`ragmeter.stats.agreement.agreement_summary`'s (95% bootstrap CIs, 2000
resamples, seed 0). Points, on all rows and on each language's: ROC AUC, balanced accuracy at the
metric's threshold, and two baselines' ROC AUC (``bench/local_judge.py``'s lexical overlap and
answer length); by error type: how many of that type score on the right side of the threshold,
their mean score, and the ROC AUC of the same language's consistent summaries against them.
Pairs, by language and error type: pair accuracy (a tie counts one half), the mean score gap and
the baselines' pair accuracy. ``--json`` also gives every row's scores, for a change to be
compared row by row. Not a speed bench: the settings share the embedding cache.

    python bench/news_summaries.py [--points F] [--pairs F] [--settings default,band-0.3-0.7,no-verifier]
        [--concurrency 8] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from local_judge import baselines, fci, fmt, markdown_table

from ragmeter.dataset import load_judgements
from ragmeter.dataset.sample import Dataset
from ragmeter.local import LocalJudge
from ragmeter.run.agreement import metric_for_aspect
from ragmeter.run.config import RunConfig
from ragmeter.run.runner import aevaluate
from ragmeter.stats.agreement import agreement_summary

DEV = Path(__file__).resolve().parents[1] / "data" / "dev"
POINTS = DEV / "news_summaries_constructed.jsonl"
PAIRS = DEV / "news_summary_pairs_constructed.jsonl"
SETTINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "band-0.3-0.7": {"verify_band": (0.3, 0.7)},
    "no-verifier": {"verifier": None},
}
BASELINES = ("lexical_overlap", "answer_length")


def error_type(note: str | None) -> str:
    return (note or "").split(":", 1)[0].strip() or "?"


async def score_file(path: Path, setting: str, concurrency: int) -> tuple[list[dict[str, Any]], float]:
    """One row a judgement (points: ``score``; pairs: ``preferred`` and ``other``, the scores of the
    corrected and of the erroneous summary) under one judge setting, and the metric's threshold;
    each row also carries the baselines' scores under ``baseline``."""
    judgements = list(load_judgements(path))
    judge = LocalJudge(**SETTINGS[setting])
    metric = metric_for_aspect("faithfulness", None, judge)
    if any(j.aspect != "faithfulness" for j in judgements):
        raise SystemExit(f"{path}: every record must be a faithfulness judgement")
    samples = [
        s for j in judgements for s in ((j.sample,) if j.kind == "point" else (j.sample_a, j.sample_b))
    ]
    try:
        result = await aevaluate(
            Dataset(tuple(samples), source=str(path)),
            [metric],
            judge,
            config=RunConfig(concurrency=concurrency, progress=False),
        )
    finally:
        await judge.aclose()
    scores = {
        s.id: (None if v is None or not v.valid else float(v.value))
        for s, v in zip(samples, result.scores(metric.name), strict=True)
    }

    def base(s: Any) -> dict[str, float | None]:
        b = baselines("faithfulness", {"answer": s.answer, "contexts": list(s.contexts or ())})
        return {k: b[k] for k in BASELINES}

    rows: list[dict[str, Any]] = []
    for j in judgements:
        first = j.sample if j.kind == "point" else j.sample_a
        meta = first.metadata or {}
        row: dict[str, Any] = {
            "id": j.id,
            "lang": meta.get("lang", "?"),
            "type": error_type(meta.get("note")),
        }
        if j.kind == "point":
            row.update(label=float(j.label), score=scores[j.sample.id], baseline=base(j.sample))
        else:
            good, bad = (j.sample_a, j.sample_b) if j.preferred == "a" else (j.sample_b, j.sample_a)
            row.update(
                preferred=scores[good.id],
                other=scores[bad.id],
                baseline={"preferred": base(good), "other": base(bad)},
            )
        rows.append(row)
    threshold = 0.5 if metric.threshold is None else float(metric.threshold)
    return rows, threshold


def point_summary(rows: Sequence[dict[str, Any]], threshold: float, key: str | None = None) -> dict[str, Any]:
    return agreement_summary(
        "point",
        "binary",
        scores=[r["score"] if key is None else r["baseline"][key] for r in rows],
        labels=[r["label"] for r in rows],
        threshold=threshold,
        ids=[r["id"] for r in rows],
    )


def pair_summary(rows: Sequence[dict[str, Any]], key: str | None = None) -> dict[str, Any]:
    if key is None:
        return agreement_summary(
            "pair", preferred=[r["preferred"] for r in rows], other=[r["other"] for r in rows]
        )
    return agreement_summary(
        "pair",
        preferred=[r["baseline"]["preferred"][key] for r in rows],
        other=[r["baseline"]["other"][key] for r in rows],
    )


def _langs(rows: Sequence[dict[str, Any]]) -> list[str]:
    return ["all", *sorted({r["lang"] for r in rows})]


def analyse_points(rows: list[dict[str, Any]], thr: float, with_baselines: bool) -> dict[str, Any]:
    subsets: list[dict[str, Any]] = []
    for name in _langs(rows):
        sub = [r for r in rows if name == "all" or r["lang"] == name]
        s = point_summary(sub, thr)
        row = {
            "subset": name,
            "n": s["n"],
            "n_invalid": s["n_invalid"],
            "positives": s["confusion"]["tp"] + s["confusion"]["fn"],
            "auc": s["auc"],
            "auc_ci95": s["ci95"]["auc"],
            "balanced_accuracy": s["balanced_accuracy"],
            "balanced_accuracy_ci95": s["ci95"]["balanced_accuracy"],
            "tpr": s["tpr"],
            "tnr": s["tnr"],
        }
        if with_baselines:
            for key in BASELINES:
                b = point_summary(sub, thr, key)
                row[f"{key}_auc"], row[f"{key}_auc_ci95"] = b["auc"], b["ci95"]["auc"]
        subsets.append(row)
    by_type: list[dict[str, Any]] = []
    for lang in _langs(rows):
        in_lang = [r for r in rows if lang == "all" or r["lang"] == lang]
        consistent = [r for r in in_lang if r["label"] == 1.0]
        for t in sorted({r["type"] for r in in_lang}):
            of_type = [r for r in in_lang if r["type"] == t and r["score"] is not None]
            if not of_type:
                continue
            positive = t == "consistent"
            typed: dict[str, Any] = {
                "lang": lang,
                "type": t,
                "n": len(of_type),
                "right": sum((r["score"] >= thr) == positive for r in of_type),
                "mean_score": round(statistics.fmean(r["score"] for r in of_type), 3),
                "auc_vs_consistent": None,
                "auc_ci95": None,
            }
            if not positive:
                s = point_summary(consistent + of_type, thr)
                typed["auc_vs_consistent"], typed["auc_ci95"] = s["auc"], s["ci95"]["auc"]
            by_type.append(typed)
    return {"subsets": subsets, "by_type": by_type}


def analyse_pairs(rows: list[dict[str, Any]], with_baselines: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for lang in _langs(rows):
        in_lang = [r for r in rows if lang == "all" or r["lang"] == lang]
        for t in ("all", *sorted({r["type"] for r in in_lang})):
            sub = [r for r in in_lang if t == "all" or r["type"] == t]
            s = pair_summary(sub)
            row: dict[str, Any] = {
                "lang": lang,
                "type": t,
                "n": s["n"],
                "n_invalid": s["n_invalid"],
                "accuracy": s["accuracy"],
                "ci95": s["ci95"],
                "mean_gap": round(
                    statistics.fmean(
                        r["preferred"] - r["other"]
                        for r in sub
                        if r["preferred"] is not None and r["other"] is not None
                    ),
                    3,
                )
                if s["n"]
                else None,
            }
            if with_baselines:
                for key in BASELINES:
                    row[f"{key}_accuracy"] = pair_summary(sub, key)["accuracy"]
            out.append(row)
    return out


def print_report(out: dict[str, Any]) -> None:
    print(f"{out['machine']}, Python {out['python']}, {out['date']}, load average {out['load_average']}\n")
    if out["points"]:
        print(
            f"{out['points']['file']} (points; each setting's ROC AUC and balanced accuracy at the threshold)\n"
        )
        markdown_table(
            ("setting", "subset", "n (invalid)", "label 1", "ROC AUC", "95% CI", "balanced acc.", "95% CI", "TPR", "TNR"),
            (
                (
                    a["setting"], s["subset"], f"{s['n']} ({s['n_invalid']})", s["positives"], fmt(s["auc"]),
                    fci(s["auc_ci95"]), fmt(s["balanced_accuracy"]), fci(s["balanced_accuracy_ci95"]),
                    fmt(s["tpr"]), fmt(s["tnr"]),
                )
                for a in out["points"]["settings"]
                for s in a["subsets"]
            ),
        )
        print("\nBaselines (ROC AUC):\n")
        for s in out["points"]["settings"][0]["subsets"]:
            print(
                "- "
                + s["subset"]
                + ": "
                + "; ".join(f"{k} {fmt(s[k + '_auc'])} ({fci(s[k + '_auc_ci95'])})" for k in BASELINES)
            )
        print()
        markdown_table(
            ("setting", "language", "type", "n", "right at the threshold", "mean score", "AUC vs consistent", "95% CI"),
            (
                (
                    a["setting"], t["lang"], t["type"], t["n"], f"{t['right']} of {t['n']}", f"{t['mean_score']:.3f}",
                    fmt(t["auc_vs_consistent"]), fci(t["auc_ci95"]),
                )
                for a in out["points"]["settings"]
                for t in a["by_type"]
            ),
        )
    if out["pairs"]:
        print(f"\n{out['pairs']['file']} (pairs: the corrected summary against the erroneous one)\n")
        markdown_table(
            (
                "setting", "language", "type", "n (invalid)", "pair accuracy", "95% CI", "mean gap",
                "lexical overlap", "answer length",
            ),
            (
                (
                    a["setting"], t["lang"], t["type"], f"{t['n']} ({t['n_invalid']})", fmt(t["accuracy"]),
                    fci(t["ci95"]), fmt(t["mean_gap"]), fmt(t.get("lexical_overlap_accuracy")),
                    fmt(t.get("answer_length_accuracy")),
                )
                for a in out["pairs"]["settings"]
                for t in a["by_type"]
            ),
        )


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} cores",
        "python": sys.version.split()[0],
        "date": time.strftime("%Y-%m-%d"),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "points": None,
        "pairs": None,
    }
    settings = args.settings.split(",")
    for s in settings:
        if s not in SETTINGS:
            raise SystemExit(f"unknown setting {s!r}; one of {', '.join(SETTINGS)}")
    for part, name in (("points", args.points), ("pairs", args.pairs)):
        if not name:
            continue
        path = Path(name)
        done: dict[str, Any] = {"file": path.name, "settings": [], "rows": {}}
        for k, setting in enumerate(settings):
            rows, thr = await score_file(path, setting, args.concurrency)
            done["rows"][setting] = rows
            if part == "points":
                done["settings"].append(
                    {"setting": setting, "threshold": thr, **analyse_points(rows, thr, k == 0)}
                )
            else:
                done["settings"].append({"setting": setting, "by_type": analyse_pairs(rows, k == 0)})
        out[part] = done
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", default=str(POINTS), help="point judgement file ('' to skip)")
    ap.add_argument("--pairs", default=str(PAIRS), help="pair judgement file ('' to skip)")
    ap.add_argument(
        "--settings", default=",".join(SETTINGS), help=f"comma-separated, of: {', '.join(SETTINGS)}"
    )
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--json", action="store_true", help="the figures and every row's scores as JSON")
    args = ap.parse_args()
    out = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print_report(out)


if __name__ == "__main__":
    main()
