"""Export a trained verifier checkpoint to the packaged ONNX model (int8, per-channel weights).

Reads a checkpoint folder written by ``scripts/train_verifier.py`` (default ``.train/verifier/best``)
and writes into ``src/ragmeter/local/weights/verifier/``:

- ``model.onnx``: the classifier exported from torch (dynamic batch and sequence axes; inputs
  ``input_ids``, ``attention_mask``, ``token_type_ids``; output ``logits`` of shape (batch, 1)),
  then quantised by ``onnxruntime.quantization.quantize_dynamic`` to int8 with per-channel
  weights (per-tensor scales lose several points of agreement with fp32), then rewritten for
  unpadded one-pair reading by ``scripts/verifier_graph.py`` (no attention mask, constant head
  reshapes: the same logits, bit for bit; inputs ``input_ids`` and ``token_type_ids``);
- ``tokenizer.json``: the base model's WordPiece tokenizer (read with the ``tokenizers`` library);
- ``training_record.json``: the training record, plus an ``export`` section: file size, and how
  closely the int8 model follows torch on the training run's test split (decision agreement at
  0.5, mean and max absolute probability difference).

It also prints the torch probabilities of the fixed pairs in ``REFERENCE_PAIRS`` (they go into
tests/local/test_verifier.py, which checks the packaged ONNX model against them).

    python scripts/export_verifier.py [--checkpoint .train/verifier/best] [--record .train/verifier/training_record.json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from transformers import BertForSequenceClassification

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train_verifier as tv
import verifier_data as vd
import verifier_graph

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "src" / "ragmeter" / "local" / "weights" / "verifier"
# the multilingual model is not packaged: its export stays outside the package, to be named as a
# verifier folder (OnnxVerifier(folder, languages=("en", "zh")), docs/local-judge.md, "Chinese")
TARGET_E5 = ROOT / ".train" / "verifier_e5_onnx"
MAX_BYTES = {"minilm": 25 * 1024 * 1024, "e5": 32 * 1024 * 1024}

REFERENCE_PAIRS: list[tuple[str, str]] = [
    (
        "The Eiffel Tower was designed by the engineering company of Gustave Eiffel.",
        "Gustave Eiffel's company designed the tower.",
    ),
    (
        "The Eiffel Tower was designed by the engineering company of Gustave Eiffel.",
        "The tower was designed by Thomas Edison.",
    ),
    ("The Eiffel Tower is a wrought-iron lattice tower in Paris.", "The tower is made of concrete."),
    ("The company was founded in 1998 and employs 300 people.", "The company was founded in 1998."),
    ("The company was founded in 1998 and employs 300 people.", "The company was founded in 2005."),
    ("The bridge is not open to cars.", "Cars can use the bridge."),
    ("Photosynthesis converts light energy into chemical energy.", "The museum opens at nine."),
    ("She won the race in March.", "She did not win the race."),
]


class _Wrapped(torch.nn.Module):
    def __init__(self, model: BertForSequenceClassification) -> None:
        super().__init__()
        self.model = model

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        return self.model(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).logits


def export_fp32(model: BertForSequenceClassification, path: Path) -> None:
    model.eval()
    ids = torch.tensor([[101, 2023, 2003, 102, 2009, 102]])
    dyn = {0: "batch", 1: "sequence"}
    torch.onnx.export(
        _Wrapped(model),
        (ids, torch.ones_like(ids), torch.zeros_like(ids)),
        str(path),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "token_type_ids": dyn, "logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )


def quantize(src: Path, dst: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        quantize_dynamic(str(pre), str(dst), weight_type=QuantType.QInt8, per_channel=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", default=str(ROOT / ".train" / "verifier" / "best"))
    ap.add_argument("--record", default=str(ROOT / ".train" / "verifier" / "training_record.json"))
    ap.add_argument(
        "--target", default=None, help="default: weights/verifier (minilm), .train/verifier_e5_onnx (e5)"
    )
    ap.add_argument(
        "--base",
        choices=("minilm", "e5"),
        default="minilm",
        help="the checkpoint's base (train_verifier.py --base); an e5 checkpoint's tokenizer.json is in its parent folder",
    )
    ap.add_argument(
        "--check-pairs", type=int, default=1000, help="test-split pairs to compare torch and int8 on"
    )
    args = ap.parse_args()
    torch.set_num_threads(2)
    target = Path(args.target or (TARGET if args.base == "minilm" else TARGET_E5))
    tokenizer_file = (
        tv.base_model_dir() / "tokenizer.json"
        if args.base == "minilm"
        else Path(args.checkpoint).parent / "tokenizer.json"
    )
    target.mkdir(parents=True, exist_ok=True)
    model = BertForSequenceClassification.from_pretrained(args.checkpoint)
    model.eval()
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        export_fp32(model, fp32)
        quantize(fp32, target / "model.onnx")
    graph = verifier_graph.rewrite(target / "model.onnx", target / "model.onnx")
    shutil.copy(tokenizer_file, target / "tokenizer.json")
    size = (target / "model.onnx").stat().st_size
    if size > MAX_BYTES[args.base]:
        raise SystemExit(
            f"model.onnx is {size / 2**20:.1f} MiB, over the {MAX_BYTES[args.base] / 2**20:.0f} MiB limit"
        )

    # the int8 model against torch, through the runtime that ships
    from ragmeter.local.verifier import OnnxVerifier

    onnx = OnnxVerifier(target)
    record = json.loads(Path(args.record).read_text("utf-8")) if Path(args.record).is_file() else {}
    rng = random.Random(record.get("hyperparameters", {}).get("seed", 0))
    test = [p for p in vd.load_nli(tv.NLI, {}, random.Random(0)) if p.split == "test"]
    if args.base == "e5":  # the Chinese and cross-lingual test pairs too
        from hsk_sentences_audio import load_sentences  # type: ignore[import-not-found]

        test += [p for p in vd.chinese_pairs(load_sentences(), random.Random(0)) if p.split == "test"]
    test = rng.sample(test, min(args.check_pairs, len(test)))
    tok = tv.load_tokenizer(tokenizer_file.parent, onnx.max_length)
    p_torch = tv.predict(model, tv.encode(tok, test))
    t = time.perf_counter()
    p_onnx = np.array(onnx.entailment_sync([p.premise for p in test], [p.hypothesis for p in test]))
    onnx_s = time.perf_counter() - t
    y = np.array([p.entail for p in test])
    record["export"] = {
        "script": "scripts/export_verifier.py",
        "checkpoint": Path(args.checkpoint).name,
        "format": "ONNX opset 17, onnxruntime quantize_dynamic: int8 weights, per-channel, uint8 activations",
        "graph_rewrite": {"script": "scripts/verifier_graph.py", **graph},
        "bytes": size,
        "check": {
            "pairs": len(test),
            "what": "natural NLI pairs of the test split (no synthetic rows)"
            + ("; and the Chinese and cross-lingual pairs of the test split" if args.base == "e5" else ""),
            "decision_agreement_at_0.5": float(((p_torch >= 0.5) == (p_onnx >= 0.5)).mean()),
            "mean_abs_diff": float(np.abs(p_torch - p_onnx).mean()),
            "max_abs_diff": float(np.abs(p_torch - p_onnx).max()),
            "torch": tv.metrics(p_torch, y),
            "int8_onnx": tv.metrics(p_onnx, y),
            "int8_pairs_per_s": round(len(test) / onnx_s, 1),
        },
        "date": time.strftime("%Y-%m-%d"),
    }
    (target / "training_record.json").write_text(json.dumps(record, indent=1) + "\n", "utf-8")
    print(json.dumps(record["export"], indent=1))
    ref_tok = tv.load_tokenizer(tokenizer_file.parent, onnx.max_length)
    refs = tv.predict(model, tv.encode(ref_tok, [vd.Pair(a, b, 0, "") for a, b in REFERENCE_PAIRS]))
    ref_onnx = onnx.entailment_sync([a for a, _ in REFERENCE_PAIRS], [b for _, b in REFERENCE_PAIRS])
    print("REFERENCE (premise, hypothesis, torch probability, int8 onnx probability):")
    for (a, b), pt, po in zip(REFERENCE_PAIRS, refs, ref_onnx, strict=True):
        print(f"    ({a!r}, {b!r}, {pt:.4f}),  # onnx {po:.4f}")


if __name__ == "__main__":
    main()
