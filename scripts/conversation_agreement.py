"""Agreement of the conversation steps and metrics with the labelled sets in data/conversations/.

    python scripts/conversation_agreement.py                       # the local judge
    python scripts/conversation_agreement.py --judge openai-compatible:MODEL --base-url URL

What it measures (docs/conversations.md, "How far to trust it"):

1. The standalone question against people's labels: TREC CAsT 2019 utterances, each labelled by
   Mele et al. (2021) as self-explanatory (SE) or depending on the first (FT) or the previous (PT)
   turn. "Rewritten" is the step changing the utterance; agreement with "depends" (FT or PT) as
   accuracy, precision, recall and balanced accuracy; and, for the dependent utterances it rewrites,
   whether the words it adds come from the turn the label names (the first utterance for FT, the
   previous one for PT). Conversations whose text carries the source's stray token
   ``rewrite_coref1`` are left out. 95% CIs: bootstrap over conversations.
2. The standalone question against constructed rewrites (English and Chinese): exact match (case,
   spaces and punctuation ignored) and token F1 per category. 95% CIs: bootstrap over rows.
3. knowledge_retention: the verdict on the last reply against its constructed label (kept /
   forgot), per category; conversation_relevancy and conversation_completeness: pair accuracy (the
   relevant / complete variant scores higher; a tie counts one half).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import ragmeter
from ragmeter.judges.factory import make_judge
from ragmeter.text import detect_lang, tokenize

DATA = Path(__file__).resolve().parents[1] / "data" / "conversations"
B = 2000


def _rows(name: str) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _ci(
    values: Sequence[float], groups: Sequence[Any] | None = None, seed: int = 0
) -> tuple[float, float, float]:
    """(mean, low, high): percentile bootstrap, resampling ``groups`` (clusters) when given."""
    v = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    if groups is None:
        idx = rng.integers(0, len(v), size=(B, len(v)))
        means = v[idx].mean(axis=1)
    else:
        keys = sorted(set(groups), key=str)
        members = [np.array([i for i, g in enumerate(groups) if g == k]) for k in keys]
        means = np.empty(B)
        for b in range(B):
            pick = rng.integers(0, len(keys), size=len(keys))
            chosen = np.concatenate([members[p] for p in pick])
            means[b] = v[chosen].mean()
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(v.mean()), float(lo), float(hi)


def _fmt(stat: tuple[float, float, float], n: int) -> str:
    return f"{stat[0]:.3f} [{stat[1]:.3f}, {stat[2]:.3f}] (n={n})"


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def _f1(a: str, b: str) -> float:
    ta, tb = tokenize(a), tokenize(b)
    if not ta or not tb:
        return float(ta == tb)
    common = sum(min(ta.count(t), tb.count(t)) for t in set(ta))
    if common == 0:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


async def _rewrite(judge: Any, question: str, history: list[tuple[str, str]]) -> str:
    return str(await judge.standalone_question(question, history, lang=detect_lang(question)))


async def cast(judge: Any) -> None:
    rows = [c for c in _rows("cast2019_followups.jsonl") if "rewrite_coref" not in json.dumps(c)]
    for split in ("train", "test", None):
        await _cast(judge, [c for c in rows if split is None or c["split"] == split], split or "all")


async def _cast(judge: Any, convs: list[dict[str, Any]], split: str) -> None:
    changed, dependent, groups, source_ok, source_groups, by_label = [], [], [], [], [], defaultdict(list)
    for c in convs:
        utts = c["utterances"]
        for k, u in enumerate(utts):
            if k == 0:
                continue
            history = [("user", x["text"]) for x in utts[:k]]
            out = await _rewrite(judge, u["text"], history)
            did = _norm(out) != _norm(u["text"])
            dep = u["label"] in ("FT", "PT")
            changed.append(float(did))
            dependent.append(float(dep))
            groups.append(c["id"])
            by_label[u["label"]].append(float(did))
            if did and dep:
                added = set(tokenize(out)) - set(tokenize(u["text"]))
                target = utts[0]["text"] if u["label"] == "FT" else utts[k - 1]["text"]
                words = set(tokenize(target))
                source_ok.append(float(bool(added) and len(added & words) >= max(1, len(added) / 2)))
                source_groups.append(c["id"])
    ch, dp = np.array(changed), np.array(dependent)
    correct = (ch == dp).astype(float)
    tp = ch * dp
    print(
        f"CAsT 2019 (people's labels), split {split}: {len(convs)} conversations, {len(ch)} follow-up utterances"
    )
    print(f"  labels: SE {int((dp == 0).sum())}, FT {len(by_label['FT'])}, PT {len(by_label['PT'])}")
    print(f"  rewritten when it depends (accuracy): {_fmt(_ci(correct, groups), len(ch))}")
    prec = [float(x) for x, c in zip(tp, ch, strict=True) if c]
    rec = [float(x) for x, d in zip(tp, dp, strict=True) if d]
    pg = [g for g, c in zip(groups, ch, strict=True) if c]
    rg = [g for g, d in zip(groups, dp, strict=True) if d]
    print(f"  precision (rewritten -> depends):   {_fmt(_ci(prec, pg), len(prec))}")
    print(f"  recall (depends -> rewritten):      {_fmt(_ci(rec, rg), len(rec))}")
    spec = [1.0 - c for c, d in zip(ch, dp, strict=True) if not d]
    sg = [g for g, d in zip(groups, dp, strict=True) if not d]
    bal = 0.5 * (np.mean(rec) + np.mean(spec))
    print(
        f"  specificity (SE left as it is):     {_fmt(_ci(spec, sg), len(spec))}; balanced accuracy {bal:.3f}"
    )
    for label in ("FT", "PT"):
        print(f"  rewritten, {label}: {np.mean(by_label[label]):.3f} (n={len(by_label[label])})")
    print(f"  words added from the labelled turn: {_fmt(_ci(source_ok, source_groups), len(source_ok))}")


async def followups(judge: Any, limit: int | None = None) -> None:
    rows = _spread(_rows("followups_constructed.jsonl"), limit)
    print(f"constructed follow-ups, {len(rows)} rows")
    per: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        out = await _rewrite(judge, r["question"], [tuple(m) for m in r["history"]])
        per[(r["lang"], r["category"])].append((float(_norm(out) == _norm(r["gold"])), _f1(out, r["gold"])))
        per[(r["lang"], "all")].append(per[(r["lang"], r["category"])][-1])
    for (lang, cat), vals in sorted(per.items()):
        em = _ci([v[0] for v in vals])
        f1 = _ci([v[1] for v in vals])
        print(
            f"  {lang} {cat:10s} exact {_fmt(em, len(vals))}  token F1 {f1[0]:.3f} [{f1[1]:.3f}, {f1[2]:.3f}]"
        )


def _spread(rows: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """``limit`` rows spread evenly over ``rows`` per language (all when ``limit`` is None)."""
    if limit is None:
        return rows
    out = []
    for lang in sorted({r.get("lang", "en") for r in rows}):
        mine = [r for r in rows if r.get("lang", "en") == lang]
        step = max(1, len(mine) // limit)
        out.extend(mine[::step][:limit])
    return out


def _evaluate(records: list[dict[str, Any]], metric: str, judge: Any) -> list[Any]:
    result = ragmeter.evaluate(records, [metric], judge, progress=False)
    by_id = {s.id: i for i, s in result.samples}
    return [result.score(by_id[r["id"]], metric) for r in records]


def retention(judge: Any, limit: int | None = None) -> None:
    rows = _spread(_rows("retention_constructed.jsonl"), limit)
    scores = _evaluate(
        [{"id": r["id"], "messages": r["messages"]} for r in rows], "knowledge_retention", judge
    )
    per: dict[str, list[float]] = defaultdict(list)
    kept, forgot, invalid = [], [], 0
    for r, s in zip(rows, scores, strict=True):
        if s is None or not s.valid:
            invalid += 1
            continue
        last = s.details["turns"][-1]
        ok = float(bool(last["ok"]) == bool(r["label"]))
        per[f"{r['lang']} {r['category']}"].append(ok)
        per[r["lang"]].append(ok)
        (kept if r["label"] else forgot).append(ok)
    print(f"knowledge_retention, constructed, {len(rows)} conversations ({invalid} invalid)")
    for key, vals in sorted(per.items()):
        print(f"  {key:14s} last-reply verdict right: {_fmt(_ci(vals), len(vals))}")
    if kept and forgot:
        k, f = float(np.mean(kept)), float(np.mean(forgot))
        print(f"  kept -> retained: {k:.3f} (n={len(kept)}); forgot -> forgotten: {f:.3f} (n={len(forgot)}); "
              f"balanced accuracy {0.5 * (k + f):.3f}")  # fmt: skip



def pairs(name: str, metric: str, judge: Any) -> None:
    rows = _rows(name)
    records = []
    for r in rows:
        records.append({"id": r["id"] + "/a", "messages": r["a"]})
        records.append({"id": r["id"] + "/b", "messages": r["b"]})
    scores = _evaluate(records, metric, judge)
    per: dict[str, list[float]] = defaultdict(list)
    invalid = 0
    for k, r in enumerate(rows):
        a, b = scores[2 * k], scores[2 * k + 1]
        if a is None or b is None or not a.valid or not b.valid:
            invalid += 1
            continue
        win = 1.0 if a.value > b.value else 0.5 if a.value == b.value else 0.0
        per[r["lang"]].append(win if r["preferred"] == "a" else 1.0 - win)
    print(f"{metric}, constructed pairs, {len(rows)} pairs ({invalid} invalid)")
    for lang, vals in sorted(per.items()):
        print(f"  {lang} pair accuracy {_fmt(_ci(vals), len(vals))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", default=None, help="a judge spec (default: the local judge)")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--only", choices=["cast", "followups", "retention", "relevancy", "completeness"])
    parser.add_argument(
        "--limit", type=int, default=None, help="constructed rows per language, spread evenly (a slow judge)"
    )
    args = parser.parse_args()
    judge = make_judge(args.judge, base_url=args.base_url) if args.judge else make_judge(None)
    print(f"judge: {judge.name}")
    steps = [args.only] if args.only else ["cast", "followups", "retention", "relevancy", "completeness"]
    if "cast" in steps:
        asyncio.run(cast(judge))
    if "followups" in steps:
        asyncio.run(followups(judge, args.limit))
    if "retention" in steps:
        retention(judge, args.limit)
    if "relevancy" in steps:
        pairs("relevancy_constructed.jsonl", "conversation_relevancy", judge)
    if "completeness" in steps:
        pairs("completeness_constructed.jsonl", "conversation_completeness", judge)


if __name__ == "__main__":
    main()
