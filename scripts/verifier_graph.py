"""Rewrite the verifier's ONNX graph for the way the runtime reads it: one pair at a time, unpadded.

``scripts/export_verifier.py`` calls :func:`rewrite` on the int8 model it exports; run alone, this
script rewrites an existing model file in place (default: the packaged one), so the graph can be
brought up to date without torch or the training checkpoint:

    python scripts/verifier_graph.py [--model src/ragmeter/local/weights/verifier/model.onnx]

The runtime (``ragmeter.local.verifier``) reads each pair on its own and unpadded, so every token
attends to every other: the attention mask is all ones. The graph torch exports still builds an
additive mask from it in every layer (``Where(mask, 0, -inf)`` added to the attention scores) and
guards the softmax against rows that are all ``-inf`` (``Where(IsNaN(p), 0, p)``); with no padding
these add 0.0 and replace nothing, so dropping them leaves every result bit for bit the same, at
about 14% less time a pair (docs/performance.md, "Local judge speed"). The rewrite:

1. removes the mask from the scores and the NaN guard after each attention softmax, and with them
   the ``attention_mask`` input (a model without it is read one pair at a time: see
   ``OnnxVerifier``);
2. gives the reshapes that split and merge the attention heads constant shapes (``0`` copies a
   dimension from the input) instead of shapes computed from ``Shape`` nodes each run, and drops
   the reshapes that give back their input's shape;
3. drops what no output depends on any more.

It checks its result: the rewritten model must give the same logits as the original, exactly, on
unpadded inputs of several lengths (it raises otherwise, and writes nothing).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "src" / "ragmeter" / "local" / "weights" / "verifier" / "model.onnx"
MASK = "attention_mask"
#: sequence lengths the rewrite is checked at (and the reshapes' shapes read at): short, long, cut
CHECK_LENGTHS = (3, 9, 57, 128)


def _consumers(graph: onnx.GraphProto) -> dict[str, list[onnx.NodeProto]]:
    out: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            out.setdefault(name, []).append(node)
    return out


def _producers(graph: onnx.GraphProto) -> dict[str, onnx.NodeProto]:
    return {name: node for node in graph.node for name in node.output}


def _reached(graph: onnx.GraphProto, start: list[str], through_shape: bool) -> set[str]:
    """The tensors computed from ``start``; with ``through_shape`` False, not counting what is
    computed from a ``Shape`` node (a tensor's length, not its values)."""
    cons = _consumers(graph)
    seen: set[str] = set()
    front = list(start)
    while front:
        name = front.pop()
        for node in cons.get(name, []):
            if node.op_type == "Shape" and not through_shape:
                continue
            for out in node.output:
                if out not in seen:
                    seen.add(out)
                    front.append(out)
    return seen


def _replace_input(graph: onnx.GraphProto, old: str, new: str) -> None:
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name == old:
                node.input[k] = new
    if any(o.name == old for o in graph.output):
        raise ValueError(f"{old} is a graph output")


def drop_mask(model: onnx.ModelProto) -> int:
    """Remove the additive mask and the NaN guard around each attention softmax; the number of
    softmaxes rewritten."""
    graph = model.graph
    masked = _reached(graph, [MASK], through_shape=True)
    # the token values' own path (scores are on it; the mask reads the tokens only for their count)
    data = _reached(graph, [i.name for i in graph.input if i.name != MASK], through_shape=False)
    prod = _producers(graph)
    cons = _consumers(graph)
    gone: set[int] = set()
    done = 0
    for sm in [n for n in graph.node if n.op_type == "Softmax"]:
        add = prod.get(sm.input[0])
        if add is None or add.op_type != "Add":
            continue
        scores = [x for x in add.input if x in data]
        mask = [x for x in add.input if x not in data]
        if len(scores) != 1 or len(mask) != 1 or mask[0] not in masked or len(cons[add.output[0]]) != 1:
            raise ValueError(f"softmax {sm.name}: its input is not scores + a mask")
        sm.input[0] = scores[0]
        gone.add(id(add))
        # the guard: Where(IsNaN(p), 0, p) -> p
        after = cons.get(sm.output[0], [])
        isnan = [n for n in after if n.op_type == "IsNaN"]
        where = [n for n in after if n.op_type == "Where"]
        if len(isnan) == 1 and len(where) == 1 and len(after) == 2:
            w = where[0]
            if w.input[0] != isnan[0].output[0] or w.input[2] != sm.output[0]:
                raise ValueError(f"softmax {sm.name}: an unknown guard after it")
            _replace_input(graph, w.output[0], sm.output[0])
            gone |= {id(isnan[0]), id(w)}
        elif after and any(n.op_type in ("IsNaN", "Where") for n in after):
            raise ValueError(f"softmax {sm.name}: an unknown guard after it")
        done += 1
    keep = [n for n in graph.node if id(n) not in gone]
    del graph.node[:]
    graph.node.extend(keep)
    return done


def _run_shapes(model: onnx.ModelProto, names: list[str], length: int) -> dict[str, tuple[int, ...]]:
    """The shapes of ``names`` (float tensors) on an unpadded input of ``length`` tokens."""
    import onnxruntime as ort

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    have = {o.name for o in probe.graph.output}
    for name in names:
        if name not in have:
            probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(
        probe.SerializeToString(), sess_options=opts, providers=["CPUExecutionProvider"]
    )
    outs = sess.run(names, _feeds(sess, length))
    return {n: tuple(o.shape) for n, o in zip(names, outs, strict=True)}


def _feeds(sess: object, length: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed + length)
    ids = rng.integers(1000, 29000, size=(1, length), dtype=np.int64)
    ids[0, 0], ids[0, -1] = 101, 102
    types = np.zeros((1, length), dtype=np.int64)
    types[0, length // 2 :] = 1
    feeds = {"input_ids": ids, "token_type_ids": types, MASK: np.ones((1, length), dtype=np.int64)}
    names = {i.name for i in sess.get_inputs()}  # type: ignore[attr-defined]
    return {k: v for k, v in feeds.items() if k in names}


def static_reshapes(model: onnx.ModelProto) -> tuple[int, int]:
    """Constant shapes for the reshapes whose shape is computed at run time, where the shapes
    read at several lengths allow it; reshapes to their input's shape are removed. Returns
    (made constant, removed)."""
    graph = model.graph
    inits = {i.name for i in graph.initializer}
    todo = [n for n in graph.node if n.op_type == "Reshape" and n.input[1] not in inits]
    names = sorted({x for n in todo for x in (n.input[0], n.output[0])})
    runs = [_run_shapes(model, names, n) for n in CHECK_LENGTHS[:2]]
    made = removed = 0
    gone: set[int] = set()
    for node in todo:
        ins = [r[node.input[0]] for r in runs]
        outs = [r[node.output[0]] for r in runs]
        if all(i == o for i, o in zip(ins, outs, strict=True)):
            _replace_input(graph, node.output[0], node.input[0])
            gone.add(id(node))
            removed += 1
            continue
        shape: list[int] | None = []
        for k in range(len(outs[0])):
            if all(k < len(i) and i[k] == o[k] for i, o in zip(ins, outs, strict=True)):
                shape.append(0)  # the input's dimension (0 copies it)
            elif len({o[k] for o in outs}) == 1:
                shape.append(outs[0][k])  # the same at every length: a constant
            else:
                shape = None  # a dimension of its own that varies: left computed
                break
        if shape is None:
            continue
        const = f"{node.output[0]}/static_shape"
        graph.initializer.append(numpy_helper.from_array(np.array(shape, dtype=np.int64), const))
        node.input[1] = const
        made += 1
    keep = [n for n in graph.node if id(n) not in gone]
    del graph.node[:]
    graph.node.extend(keep)
    return made, removed


def prune(model: onnx.ModelProto) -> None:
    """Drop the nodes no output depends on, then unused initializers and inputs."""
    graph = model.graph
    while True:
        used = {x for n in graph.node for x in n.input} | {o.name for o in graph.output}
        keep = [n for n in graph.node if any(o in used for o in n.output)]
        if len(keep) == len(graph.node):
            break
        del graph.node[:]
        graph.node.extend(keep)
    used = {x for n in graph.node for x in n.input}
    inits = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(inits)
    inputs = [i for i in graph.input if i.name in used]
    del graph.input[:]
    graph.input.extend(inputs)
    vinfo = [v for v in graph.value_info if v.name in used or any(v.name in n.output for n in graph.node)]
    del graph.value_info[:]
    graph.value_info.extend(vinfo)


def logits(model: onnx.ModelProto | Path, lengths: tuple[int, ...] = CHECK_LENGTHS) -> list[np.ndarray]:
    """The model's logits on unpadded random inputs of ``lengths``, as the runtime reads them."""
    import onnxruntime as ort

    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(data, sess_options=opts, providers=["CPUExecutionProvider"])
    return [sess.run(["logits"], _feeds(sess, n, seed))[0] for n in lengths for seed in range(3)]


def rewrite(src: Path, dst: Path) -> dict[str, int]:
    """Rewrite ``src`` into ``dst`` (may be the same file); raises if the logits change."""
    model = onnx.load(str(src))
    if MASK not in {i.name for i in model.graph.input}:
        raise SystemExit(f"{src} has no {MASK} input: already rewritten")
    before = logits(model)
    n_mask = drop_mask(model)
    if not n_mask:
        raise SystemExit(f"{src}: no masked attention softmax found")
    prune(model)
    if MASK in {i.name for i in model.graph.input}:
        raise SystemExit(f"{src}: something other than the attention scores still reads {MASK}")
    made, removed = static_reshapes(model)
    prune(model)
    onnx.checker.check_model(model)
    after = logits(model)
    for a, b in zip(before, after, strict=True):
        if not np.array_equal(a, b):
            raise SystemExit(
                f"the rewritten graph changes the logits ({a.ravel()} -> {b.ravel()}); nothing written"
            )
    onnx.save(model, str(dst))
    return {
        "softmax_unmasked": n_mask,
        "reshapes_static": made,
        "reshapes_removed": removed,
        "nodes": len(model.graph.node),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(MODEL), help="the int8 model to rewrite in place")
    args = ap.parse_args()
    path = Path(args.model)
    print(rewrite(path, path), file=sys.stderr)


if __name__ == "__main__":
    main()
