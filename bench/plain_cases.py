"""Plain cases on the local judge: how many read right (supported >= 0.7, contradicted <= 0.3).

Scores each case file of ``tests/local/data`` (``plain_cases.jsonl``, the cases the tests hold the
judge to, partly used to tune it, and ``plain_cases_heldout.jsonl``, written apart and never tuned
on), or any file given by its path: ``data/dev/textbook_dev.jsonl`` and
``data/dev/textbook_heldout.jsonl`` hold in-context hallucinations and their supported twins as
one-claim judgements (:func:`as_case`), with ``LocalJudge.verify_claims`` and prints, per file
and language, the cases right and each wrong one with its probability and features (``--features``), and the cases right by kind
(``--kinds``). ``--json`` prints the counts and the
probabilities instead.

    python bench/plain_cases.py [--files NAME ...] [--features] [--json] [--no-verifier]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
from pathlib import Path
from typing import Any

from ragmeter.local import LocalJudge

DATA = Path(__file__).resolve().parents[1] / "tests" / "local" / "data"
FILES = ("plain_cases.jsonl", "plain_cases_heldout.jsonl")


def as_case(row: dict[str, Any]) -> dict[str, Any]:
    """A case of a plain-case file as it is; a one-claim judgement of ``data/dev`` (its ``answer``
    the claim, ``label`` 1 supported and 0 contradicted, ``note`` the kind) as such a case."""
    if "claim" in row:
        return row
    return {
        "lang": row.get("lang", "en"),
        "context": " ".join(row["contexts"]),
        "claim": row["answer"],
        "expected": "supported" if float(row["label"]) >= 0.5 else "contradicted",
        "kind": row.get("note", ""),
    }


def load(path: Path) -> list[dict[str, Any]]:
    return [as_case(json.loads(line)) for line in path.read_text("utf-8").splitlines() if line.strip()]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, mid - half), min(1.0, mid + half)


def right(case: dict[str, str], p: float) -> bool:
    return p >= 0.7 if case["expected"] == "supported" else p <= 0.3


async def score(judge: LocalJudge, cases: list[dict[str, str]]) -> list[float]:
    out = []
    for case in cases:
        (v,) = await judge.verify_claims([case["claim"]], [case["context"]])
        assert v.confidence is not None
        out.append(v.confidence)
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    judge = LocalJudge(verifier=None) if args.no_verifier else LocalJudge()
    report: dict[str, Any] = {}
    for name in args.files:
        path = Path(name) if Path(name).exists() else DATA / name  # noqa: ASYNC240 - a benchmark
        cases = load(path)
        got = await score(judge, cases)
        per: dict[str, list[int]] = {}
        kinds: dict[str, list[int]] = {}
        wrong = []
        for case, p in zip(cases, got, strict=True):
            ok = right(case, p)
            n = per.setdefault(case["lang"], [0, 0])
            n[0] += ok
            n[1] += 1
            k = kinds.setdefault(f"{case['expected'][:4]} {case['kind']}", [0, 0])
            k[0] += ok
            k[1] += 1
            if not ok:  # the features of the wrong cases only (claim_features reads the claim again)
                (values,) = await judge.claim_features([case["claim"]], [case["context"]])
                wrong.append({**case, "p": round(p, 3), "features": {k: round(v, 3) for k, v in values.items()}})
        report[name] = {
            "right": sum(r for r, _ in per.values()),
            "n": len(cases),
            "per_lang": {k: {"right": r, "n": t} for k, (r, t) in per.items()},
            "per_kind": {k: {"right": r, "n": t} for k, (r, t) in sorted(kinds.items())},
            "wrong": wrong,
            "p": [round(p, 4) for p in got],
        }
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="+", default=list(FILES))
    ap.add_argument("--features", action="store_true", help="print the features of each wrong case")
    ap.add_argument("--kinds", action="store_true", help="print the cases right by kind")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-verifier", action="store_true", help="score with the features alone")
    args = ap.parse_args()
    report = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return
    for name, r in report.items():
        langs = ", ".join(f"{k} {v['right']}/{v['n']}" for k, v in r["per_lang"].items())
        lo, hi = wilson(r["right"], r["n"])
        print(f"{name}: {r['right']}/{r['n']} right ({r['right'] / r['n']:.0%}, 95% CI {lo:.0%}-{hi:.0%}; {langs})")
        if args.kinds:
            print("  " + ", ".join(f"{k} {v['right']}/{v['n']}" for k, v in r["per_kind"].items()))
        for w in r["wrong"]:
            print(f"  {w['lang']} {w['expected'][:4]} {w['kind']:<10} {w['p']:.2f}  {w['claim']}")
            if args.features:
                print("      " + " ".join(f"{k}={v:g}" for k, v in w["features"].items()))


if __name__ == "__main__":
    main()
