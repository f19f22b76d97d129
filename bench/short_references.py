"""Correctness metrics against short references on the local judge: correct answers >= 0.7, wrong
ones <= 0.3.

``data/dev/short_reference_dev.jsonl``: questions whose reference is a short answer ("Canberra.",
"1989", "北京。"), each with a correct answer in a full sentence (label 1) and a wrong one (label 0),
as correctness judgements; in English and Chinese. Prints factual_correctness and
answer_correctness of each row and the rows read right.

    python bench/short_references.py [--file PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragmeter import Sample, evaluate

DATA = Path(__file__).resolve().parents[1] / "data" / "dev" / "short_reference_dev.jsonl"
METRICS = ("factual_correctness", "answer_correctness")


def right(label: float, value: float | None) -> bool:
    return value is not None and (value >= 0.7 if label == 1.0 else value <= 0.3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=str(DATA))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.file).read_text("utf-8").splitlines() if line.strip()]
    samples = [Sample(question=r["question"], answer=r["answer"], reference=r["reference"]) for r in rows]
    result = evaluate(samples, metrics=list(METRICS), progress=False)
    report: dict[str, Any] = {}
    for metric in METRICS:
        values = [s.value for s in result.scores(metric)]
        per: dict[str, list[int]] = {}
        for r, v in zip(rows, values, strict=True):
            for key in (r["lang"], f"{r['lang']} {'correct' if r['label'] == 1.0 else 'wrong'}"):
                n = per.setdefault(key, [0, 0])
                n[0] += right(r["label"], v)
                n[1] += 1
        report[metric] = {
            "per_lang": {k: {"right": a, "n": b} for k, (a, b) in per.items()},
            "values": values,
        }
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return
    for metric, r in report.items():
        print(f"{metric}: " + ", ".join(f"{k} {v['right']}/{v['n']}" for k, v in r["per_lang"].items()))
        for row, v in zip(rows, r["values"], strict=True):
            mark = " " if right(row["label"], v) else "x"
            shown = "invalid" if v is None else f"{v:.2f}"
            said = "correct" if row["label"] == 1.0 else "wrong"
            print(f"  {mark} {said:<7} {shown:>7}  {row['answer']}  [ref: {row['reference']}]")


if __name__ == "__main__":
    main()
