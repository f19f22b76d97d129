"""Quality and speed of the local judge on the labelled dev files (data/dev).

Quality: each dev file is scored with the local judge's steps, the way the metrics use them
(faithfulness = supported / claims, and the mean support probability; answer relevance =
assess_relevance; context relevance = mean rate_sentences over all context sentences;
correctness = 0.75 * claim F1 against the reference + 0.25 * cosine similarity), and compared with
people's labels by :func:`ragmeter.stats.agreement.agreement_summary`, beside trivial baselines:
lexical overlap (share of the answer's tokens found in the contexts, or in the reference for
correctness), answer length, context length. Figures are given on all rows and on the held-out
part (ids whose split hash falls in the held-out 30%, never used to train the combiner).

Speed: faithfulness + answer relevance + context relevance on WikiEval-sized English samples
(and Chinese ones), samples/s, CPU time a sample and the share of time inside the embedding model,
the CPU time of the encoder's and the verifier's threads (a sample, a pair), with the packaged
verifier and without it (the features alone), interleaved in one run.

With ``--baseline SRC`` (another checkout's ``src``, e.g. ``/tmp/base/src``) the speed part runs
in child processes, that code and this one alternately, ``--rounds`` times each, and prints the
medians side by side with their ratio (the bench's own code is this file for both).

    python bench/local_judge.py [--data DIR] [--files GLOB] [--json] [--speed-only | --no-speed] [--limit N]
        [--baseline SRC [--rounds 3]]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from cli_runs import env_for, versions

from ragmeter.local import LocalJudge
from ragmeter.local.embedders import default_embedder
from ragmeter.local.support import VERIFY_BAND
from ragmeter.local.verifier import OnnxVerifier
from ragmeter.stats.agreement import agreement_summary
from ragmeter.text import split_sentences, tokenize

DATA = Path(__file__).resolve().parents[1] / "data" / "dev"
HELDOUT_SHARE = 0.3
SPLIT_SEED = "ragmeter-local-v1"


def is_heldout(record_id: str) -> bool:
    """The fixed held-out split: 30% of ids by a salted SHA-256 (the same in the training script)."""
    h = hashlib.sha256(f"{SPLIT_SEED}:{record_id}".encode()).digest()
    return int.from_bytes(h[:4], "big") / 2**32 < HELDOUT_SHARE


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def variants(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """The sample(s) of a record: [preferred, other] for pairs, [sample] for points."""
    shared = {k: v for k, v in rec.items() if k not in ("a", "b")}
    if rec["kind"] != "pair":
        return [shared]
    pa = {**shared, **rec["a"]}
    pb = {**shared, **rec["b"]}
    return [pa, pb] if rec["preferred"] == "a" else [pb, pa]


# ---------------------------------------------------------------------------- scorers


async def faithfulness(j: LocalJudge, s: dict[str, Any]) -> dict[str, float | None]:
    claims = await j.extract_claims(s["answer"], question=s.get("question"))
    if not claims:
        return {"count": None, "mean_p": None, "min_p": None}
    v = await j.verify_claims(claims, s["contexts"])
    ps = [x.confidence or 0.0 for x in v]
    return {
        "count": sum(x.supported for x in v) / len(v),
        "mean_p": float(np.mean(ps)),
        "min_p": float(np.min(ps)),
    }


async def answer_relevance(j: LocalJudge, s: dict[str, Any]) -> dict[str, float | None]:
    r = await j.assess_relevance(s["question"], s["answer"])
    return {"score": r.score}


async def context_relevance(j: LocalJudge, s: dict[str, Any]) -> dict[str, float | None]:
    sents = [x for c in s["contexts"] for x in split_sentences(c)]
    if not sents:
        return {"mean": None}
    ps = await j.rate_sentences(s["question"], sents)
    return {"mean": float(np.mean(ps))}


async def correctness(j: LocalJudge, s: dict[str, Any]) -> dict[str, float | None]:
    answer, ref = s["answer"], s["reference"]
    a_claims = await j.extract_claims(answer, question=s.get("question")) or [answer]
    r_claims = await j.extract_claims(ref, question=s.get("question")) or [ref]
    prec = [v.confidence or 0.0 for v in await j.verify_claims(a_claims, [ref])]
    rec = [v.confidence or 0.0 for v in await j.verify_claims(r_claims, [answer])]
    p, r = float(np.mean(prec)), float(np.mean(rec))
    f1 = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    emb = await j.embed([answer, ref])
    sim = float(emb[0] @ emb[1])
    tp = sum(v >= 0.5 for v in prec)
    fp = len(prec) - tp
    fn = sum(v < 0.5 for v in rec)
    f1_count = tp / (tp + 0.5 * (fp + fn)) if tp + fp + fn else 0.0
    return {"f1_p": 0.75 * f1 + 0.25 * sim, "f1_count": 0.75 * f1_count + 0.25 * sim, "similarity": sim}


SCORERS: dict[str, Callable[[LocalJudge, dict[str, Any]], Any]] = {
    "faithfulness": faithfulness,
    "answer_relevance": answer_relevance,
    "context_relevance": context_relevance,
    "correctness": correctness,
}


def baselines(aspect: str, s: dict[str, Any]) -> dict[str, float | None]:
    ans = tokenize(s.get("answer") or "")
    ctx_text = " ".join(s.get("contexts") or [])
    pool_text = s.get("reference") if aspect == "correctness" else ctx_text
    pool = set(tokenize(pool_text or ""))
    out: dict[str, float | None] = {
        "lexical_overlap": (sum(t in pool for t in ans) / len(ans)) if ans and pool else None,
        "answer_length": float(len(ans)) if ans else None,
        "context_length": float(len(tokenize(ctx_text))) if ctx_text else None,
    }
    if aspect == "context_relevance":
        q = set(tokenize(s["question"]))
        ct = tokenize(ctx_text)
        out["lexical_overlap"] = sum(t in q for t in ct) / len(ct) if ct else None
        out["context_length"] = -float(len(ct)) if ct else None  # shorter context = more focused
    return out


def summarize(kind: str, recs: list[dict[str, Any]], scores: list[list[float | None]]) -> dict[str, Any]:
    if kind == "pair":
        return agreement_summary("pair", preferred=[s[0] for s in scores], other=[s[1] for s in scores])
    labels = [float(r["label"]) for r in recs]
    return agreement_summary("point", recs[0]["label_kind"], scores=[s[0] for s in scores], labels=labels)


async def evaluate_file(j: LocalJudge, path: Path, limit: int | None) -> list[dict[str, Any]]:
    recs = load(path)[:limit] if limit else load(path)
    by_aspect: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        by_aspect.setdefault(r["aspect"], []).append(r)
    rows: list[dict[str, Any]] = []
    for aspect, items in by_aspect.items():
        kind = items[0]["kind"]
        local: list[list[dict[str, float | None]]] = []
        base: list[list[dict[str, float | None]]] = []
        for r in items:
            vs = variants(r)
            local.append([await SCORERS[aspect](j, v) for v in vs])
            base.append([baselines(aspect, v) for v in vs])
        names = list(local[0][0])
        for split in ("all", "heldout"):
            keep = [i for i, r in enumerate(items) if split == "all" or is_heldout(str(r["id"]))]
            sub = [items[i] for i in keep]
            if not sub:
                continue
            for name in names:
                sc = [[v[name] for v in local[i]] for i in keep]
                rows.append(_row(path.name, aspect, kind, split, f"local:{name}", summarize(kind, sub, sc)))
            for name in base[0][0]:
                sc = [[v[name] for v in base[i]] for i in keep]
                rows.append(
                    _row(path.name, aspect, kind, split, f"baseline:{name}", summarize(kind, sub, sc))
                )
    return rows


def _row(file: str, aspect: str, kind: str, split: str, scorer: str, stats: dict[str, Any]) -> dict[str, Any]:
    if kind == "pair":
        value, ci = stats["accuracy"], stats["ci95"]
        stat = "pair accuracy"
    else:
        value, ci = stats["auc"], stats["ci95"]["auc"]
        stat = "ROC AUC"
    return {
        "file": file,
        "aspect": aspect,
        "split": split,
        "scorer": scorer,
        "stat": stat,
        "value": value,
        "ci95": ci,
        "n": stats["n"],
        "n_invalid": stats["n_invalid"],
    }


def fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def fci(ci: Sequence[float] | None) -> str:
    """A 95% confidence interval as "low–high", or "—" when there is none."""
    return "—" if not ci else f"{ci[0]:.3f}–{ci[1]:.3f}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Print a Markdown table: the header, its rule, and one line a row."""
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    markdown_table(
        ("file", "aspect", "split", "scorer", "statistic", "value", "95% CI", "n", "invalid"),
        (
            (r["file"], r["aspect"], r["split"], r["scorer"], r["stat"], fmt(r["value"]), fci(r["ci95"]), r["n"], r["n_invalid"])
            for r in rows
        ),
    )


# ---------------------------------------------------------------------------- speed


class TimedEmbedder:
    """Wraps an embedder and adds up the time spent inside its encoder."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.seconds = 0.0
        self.texts = 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        t = time.perf_counter()
        out = await self.inner.embed(texts)
        self.seconds += time.perf_counter() - t
        self.texts += len(texts)
        return np.asarray(out)

    def describe(self) -> dict[str, Any]:
        return dict(self.inner.describe())


async def _one(judge: LocalJudge, s: dict[str, Any]) -> None:
    await faithfulness(judge, s)
    await answer_relevance(judge, s)
    await context_relevance(judge, s)


async def speed(
    samples: list[dict[str, Any]],
    label: str,
    repeats: int = 3,
    concurrency: int = 1,
    verifier: Literal["packaged", "every-claim"] | None = "packaged",
) -> dict[str, Any]:
    """faithfulness + answer relevance + context relevance per sample, ``repeats`` passes.

    Each sample gets a fresh embedding cache (its own :class:`USEEmbedder`; the model is shared),
    so nothing is reused across samples (see :func:`speed_sets` for the pair variants, which share
    their contexts); within a sample the three metrics share it, as they do in a run.
    ``concurrency`` > 1 scores that many samples at once, as the runner does: their calls to the
    models then go in shared batches. ``verifier``: the packaged verifier (loaded once, without its
    result cache, so no pair is reused either) or None (the features alone); "every-claim" reads
    every English claim (``verify_band=(0, 1)``). Texts and pairs are counted where they reach the
    models, and the CPU time of the threads that run them is added up there (``encoder_cpu_ms``
    a sample, ``verifier_cpu_ms`` a pair: per-thread CPU, so what the two models cost beside each
    other in the run; the rest of ``cpu_ms_per_sample`` is the judge's own Python)."""
    from ragmeter.local.embedders import USEEmbedder, load_use_model

    default_embedder()
    await LocalJudge().embed(["warm-up"])
    ver = OnnxVerifier(cache_size=0) if verifier is not None else None
    band = (0.0, 1.0) if verifier == "every-claim" else VERIFY_BAND
    for s in samples[:4]:  # warm-up, untimed: the verifier's first calls allocate its buffers
        await _one(LocalJudge(USEEmbedder(), verifier=ver, verify_band=band), s)
    timers: list[TimedEmbedder] = []
    sem = asyncio.Semaphore(concurrency)
    counts = {"texts": 0, "pairs": 0}
    cpu_in = {"encoder": 0.0, "verifier": 0.0}
    lock = threading.Lock()
    def counting(fn: Callable[[Any], Any], count: str, thread: str) -> Callable[[Any], Any]:
        """``fn`` that adds its items to ``counts[count]`` and its thread's CPU to ``cpu_in[thread]``."""

        def counted(items: Any) -> Any:
            t = time.thread_time()
            out = fn(items)
            with lock:
                counts[count] += len(items)
                cpu_in[thread] += time.thread_time() - t
            return out

        return counted

    model = load_use_model()
    encode = model.encode
    model.encode = counting(encode, "texts", "encoder")
    if ver is not None:
        ver._run = counting(ver._run, "pairs", "verifier")  # type: ignore[method-assign]

    async def job(s: dict[str, Any]) -> None:
        async with sem:
            timed = TimedEmbedder(USEEmbedder())
            timers.append(timed)
            await _one(LocalJudge(timed, verifier=ver, verify_band=band), s)  # type: ignore[arg-type]

    c0 = time.process_time()
    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(job(s) for _ in range(repeats) for s in samples))
    finally:
        model.encode = encode
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    n = len(samples) * repeats
    model_s = sum(t.seconds for t in timers)
    encoded = counts["texts"]
    return {
        "set": label,
        "verifier": verifier or "none",
        "concurrency": concurrency,
        "samples": n,
        "wall_s": round(wall, 3),
        "samples_per_s": round(n / wall, 1),
        "cpu_s": round(cpu, 3),
        "cpu_ms_per_sample": round(1000 * cpu / n, 1),
        "embed_share": round(model_s / wall, 3) if concurrency == 1 else None,
        "texts_encoded": encoded,
        "texts_encoded_per_sample": round(encoded / n, 1),
        "pairs_verified_per_sample": round(counts["pairs"] / n, 2),
        "encoder_cpu_ms": round(1000 * cpu_in["encoder"] / n, 1),
        "verifier_cpu_ms": round(1000 * cpu_in["verifier"] / counts["pairs"], 2) if counts["pairs"] else None,
        "load_average": [round(x, 2) for x in __import__("os").getloadavg()],
    }


def speed_sets(data: Path) -> dict[str, list[dict[str, Any]]]:
    """English: the WikiEval faithfulness rows (question, contexts, answer), both variants.
    Chinese: HalluQA rows with the reference as the context (short samples).

    The two variants of a record share their contexts; a real dataset's samples do not. Every
    record's first variant comes before any second one, so that the two are never in flight
    together (their texts would be encoded once for both in a shared batch): the sets have more
    records than the highest concurrency timed."""
    wiki = [variants(r) for r in load(data / "wikieval_dev.jsonl") if r["aspect"] == "faithfulness"]
    zh = [
        [{"question": v["question"], "contexts": [v["reference"]], "answer": v["answer"]} for v in variants(r)]
        for r in load(data / "halluqa_zh_dev.jsonl")[:30]
    ]
    return {
        "en (WikiEval)": [vs[k] for k in (0, 1) for vs in wiki],
        "zh (HalluQA, reference as context)": [vs[k] for k in (0, 1) for vs in zh],
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {
        "machine": f"{platform.machine()} {platform.system()}, {__import__('os').cpu_count()} cores",
        "python": sys.version.split()[0],
        "date": time.strftime("%Y-%m-%d"),
    }
    data = Path(args.data)
    if not args.speed_only:
        j = LocalJudge()
        rows: list[dict[str, Any]] = []
        for f in sorted(data.glob(args.files)):  # noqa: ASYNC240 - a benchmark, not served code
            if "aspect" not in json.loads(f.read_text("utf-8").split("\n", 1)[0]):
                continue  # cases of another shape: bench/plain_cases.py, bench/short_references.py
            rows.extend(await evaluate_file(j, f, args.limit))
        out["quality"] = rows
    if not args.no_speed:
        sets = speed_sets(data)
        # with and without the verifier, interleaved, so a ratio inside one run compares them
        out["speed"] = [
            await speed(s, k, concurrency=c, verifier=v)
            for k, s in sets.items()
            for c in (1, 8)
            for v in ("packaged", None, *(("every-claim",) if args.verify_every_claim else ()))
        ]
    return out


def compare(baseline: str, rounds: int, data: str) -> dict[str, Any]:
    """The speed part for the ``baseline`` code and this one, alternately, in child processes."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--speed-only", "--json", "--data", data]
    runs: dict[str, list[dict[str, Any]]] = {}
    for k in range(rounds):
        for label, src in versions(baseline):
            done = subprocess.run(cmd, env=env_for(src), capture_output=True, text=True, check=True)
            out = json.loads(done.stdout)
            runs.setdefault(label, []).append(out)
            print(f"round {k + 1} {label}: load average {out['speed'][0]['load_average']}", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    for i, first in enumerate(runs["this"][0]["speed"]):
        row: dict[str, Any] = {k: first[k] for k in ("set", "verifier", "concurrency")}
        for label in ("baseline", "this"):
            got = [r["speed"][i] for r in runs[label]]
            assert all((g["set"], g["verifier"], g["concurrency"]) == (row["set"], row["verifier"],
                       row["concurrency"]) for g in got), "the two versions timed different sets"
            row[label] = {
                "samples_per_s": round(statistics.median(g["samples_per_s"] for g in got), 1),
                "cpu_ms_per_sample": round(statistics.median(g["cpu_ms_per_sample"] for g in got), 1),
                "pairs_verified_per_sample": got[0]["pairs_verified_per_sample"],
                "encoder_cpu_ms": _median([g.get("encoder_cpu_ms") for g in got]),
                "verifier_cpu_ms": _median([g.get("verifier_cpu_ms") for g in got]),
            }
        row["rate_ratio"] = round(row["this"]["samples_per_s"] / row["baseline"]["samples_per_s"], 2)
        row["cpu_ratio"] = round(row["this"]["cpu_ms_per_sample"] / row["baseline"]["cpu_ms_per_sample"], 2)
        rows.append(row)
    loads = [r["speed"][0]["load_average"][0] for v in runs.values() for r in v]
    return {
        "machine": runs["this"][0]["machine"],
        "date": runs["this"][0]["date"],
        "baseline": baseline,
        "rounds": rounds,
        "load_average_1min": [min(loads), max(loads)],
        "compare": rows,
    }


def _median(values: Sequence[float | None]) -> float | None:
    """The median of the values given (None where a run has none: no pairs, or an older bench)."""
    have = [v for v in values if v is not None]
    return round(statistics.median(have), 2) if have else None


def print_compare(out: dict[str, Any]) -> None:
    print(
        f"machine: {out['machine']}, {out['date']}; baseline {out['baseline']}, {out['rounds']} rounds "
        f"alternately, medians; load average (1 min) {out['load_average_1min'][0]}-{out['load_average_1min'][1]}\n"
    )
    markdown_table(
        (
            "set", "verifier", "in flight", "samples/s before", "after", "ratio", "CPU ms a sample before", "after",
            "ratio", "pairs a sample before", "after", "encoder CPU ms a sample before", "after",
            "verifier CPU ms a pair before", "after",
        ),
        (
            (
                r["set"], r["verifier"], r["concurrency"], b["samples_per_s"], t["samples_per_s"], r["rate_ratio"],
                b["cpu_ms_per_sample"], t["cpu_ms_per_sample"], r["cpu_ratio"], b["pairs_verified_per_sample"],
                t["pairs_verified_per_sample"], b["encoder_cpu_ms"], t["encoder_cpu_ms"], _dash(b["verifier_cpu_ms"]),
                _dash(t["verifier_cpu_ms"]),
            )
            for r in out["compare"]
            for b, t in [(r["baseline"], r["this"])]
        ),
    )


def _dash(x: float | None) -> str:
    return "—" if x is None else str(x)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--files", default="*.jsonl", help="glob of dev files to score (default: all)")
    ap.add_argument("--speed-only", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument(
        "--verify-every-claim", action="store_true", help="also time the verifier reading every English claim"
    )
    ap.add_argument("--baseline", metavar="SRC", help="also time this checkout's src/, alternately (speed only)")
    ap.add_argument("--rounds", type=int, default=3, help="with --baseline: runs of each version (default 3)")
    args = ap.parse_args()
    if args.baseline:
        cmp = compare(args.baseline, args.rounds, args.data)
        if args.json:
            print(json.dumps(cmp, indent=1))
        else:
            print_compare(cmp)
        return
    out = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"machine: {out['machine']}, Python {out['python']}, {out['date']}\n")
    if "quality" in out:
        print_table(out["quality"])
    for s in out.get("speed", []):
        share = "" if s["embed_share"] is None else f", {s['embed_share']:.0%} of the time in the embedder"
        print(
            f"\nspeed {s['set']}, verifier {s['verifier']}, concurrency {s['concurrency']}: {s['samples']} "
            f"samples, {s['wall_s']} s, {s['samples_per_s']} samples/s, {s['cpu_s']} CPU-s "
            f"({s['cpu_ms_per_sample']} ms a sample){share}; "
            f"{s['texts_encoded_per_sample']} texts encoded and {s['pairs_verified_per_sample']} pairs "
            f"verified a sample; CPU in the encoder {s['encoder_cpu_ms']} ms a sample, in the verifier "
            f"{_dash(s['verifier_cpu_ms'])} ms a pair; load average {s['load_average']}"
        )


if __name__ == "__main__":
    main()
