"""CrossEncoderSupport with a tiny randomly initialised model that the test creates (no download)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ragmeter.errors import ConfigError
from ragmeter.local import CrossEncoderSupport, LocalJudge, Verifier

HAVE_TORCH = (
    importlib.util.find_spec("torch") is not None and importlib.util.find_spec("transformers") is not None
)


def test_missing_folder_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        CrossEncoderSupport(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="not a folder"):
        CrossEncoderSupport(tmp_path / "file")
    with pytest.raises(ConfigError, match=r"config\.json"):
        CrossEncoderSupport(tmp_path)


@pytest.mark.skipif(HAVE_TORCH, reason="transformers and torch are installed")
def test_without_transformers_names_the_install(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"pip install 'ragmeter\[nli\]'"):
        CrossEncoderSupport(tmp_path)


def _tiny_nli(path: Path, labels: dict[int, str]) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "tower", "is", "in", "paris", "rome", "."]
    path.mkdir()
    vocab = path / "vocab.txt"
    vocab.write_text("\n".join(words) + "\n")
    BertTokenizer(str(vocab)).save_pretrained(str(path))
    config = BertConfig(
        vocab_size=len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=len(labels),
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    BertForSequenceClassification(config).save_pretrained(str(path))
    return path


@pytest.mark.skipif(not HAVE_TORCH, reason="needs transformers and torch")
async def test_tiny_random_nli_model(tmp_path: Path) -> None:
    folder = _tiny_nli(tmp_path / "nli", {0: "contradiction", 1: "entailment", 2: "neutral"})
    nli = CrossEncoderSupport(folder)
    probs = await nli.entailment(
        ["the tower is in paris ."] * 2, ["the tower is in paris .", "the tower is in rome ."]
    )
    assert len(probs) == 2 and all(0.0 <= p <= 1.0 for p in probs)
    assert nli.entailment_sync(["the tower ."], ["the tower ."]) == nli.entailment_sync(
        ["the tower ."], ["the tower ."]
    )
    assert isinstance(nli, Verifier)
    judge = LocalJudge(verifier=nli, verify_band=(0.0, 1.0))  # read every claim
    (v,) = await judge.verify_claims(["The tower is in Paris."], ["The tower is in Paris."])
    assert v.confidence is not None and 0.0 <= v.confidence <= 1.0
    assert judge.describe()["verifier"]["name"] == "cross-encoder:nli"
    assert "entailment" in v.reason
    # declared multilingual, it reads the Chinese claims too (the tiny vocabulary reads them as
    # unknown pieces: the plumbing, not the probability, is what is checked)
    assert "entail" not in (await judge.claim_features(["长江很长。"], ["长江很长。"]))[0]
    both = CrossEncoderSupport(folder, languages=("en", "zh"))
    assert both.describe()["languages"] == ["en", "zh"]
    zh = await LocalJudge(verifier=both).claim_features(["长江很长。"], ["长江很长。"])
    assert 0.0 <= zh[0]["entail"] <= 1.0


@pytest.mark.skipif(not HAVE_TORCH, reason="needs transformers and torch")
async def test_label_choice(tmp_path: Path) -> None:
    folder = _tiny_nli(tmp_path / "odd", {0: "yes", 1: "no"})
    with pytest.raises(ConfigError, match="entailment"):
        await CrossEncoderSupport(folder).entailment(["a"], ["b"])
    probs = await CrossEncoderSupport(folder, entailment_label="yes").entailment(["a"], ["b"])
    assert 0.0 <= probs[0] <= 1.0
    one = _tiny_nli(tmp_path / "one", {0: "score"})
    assert 0.0 <= (await CrossEncoderSupport(one).entailment(["a"], ["b"]))[0] <= 1.0
