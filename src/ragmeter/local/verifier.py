"""The local judge's entailment verifier: P(premise entails hypothesis) from a small cross-encoder.

Default: the packaged model (``weights/verifier/``): MiniLM-L6 fine-tuned as a binary entailment
cross-encoder by ``scripts/train_verifier.py`` and exported by ``scripts/export_verifier.py`` to
ONNX with int8 per-channel weights (the training record, with its data and held-out figures, is
``weights/verifier/training_record.json``). It runs on ``onnxruntime`` with the ``tokenizers``
library, no torch, no download. English only: its WordPiece vocabulary has no Chinese.

Any object with the :class:`Verifier` methods can take its place, such as
:class:`~ragmeter.local.cross_encoder.CrossEncoderSupport` (a user's Hugging Face NLI folder).

Calls are batched across samples: while one batch runs in the worker thread, the pairs of the
calls that arrive meanwhile (other samples in flight) wait and go together in the next batch.
Within a batch, pairs are sorted by length and padded per mini-batch. Results are cached per
(premise, hypothesis).
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragmeter.errors import ConfigError

MAX_LENGTH = 128
BATCH_SIZE = 32
CACHE_SIZE = 20_000
_INSTALL = "pip install onnxruntime tokenizers  (both are ragmeter dependencies: reinstall ragmeter)"


@runtime_checkable
class Verifier(Protocol):
    """Entailment probabilities for (premise, hypothesis) pairs."""

    name: str

    def entailment_sync(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]: ...

    async def entailment(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]: ...

    def describe(self) -> dict[str, Any]: ...


def require_modules(modules: Sequence[str], what: str, install: str) -> None:
    """A ConfigError naming the first of ``modules`` that is not installed."""
    for mod in modules:
        if importlib.util.find_spec(mod) is None:
            raise ConfigError(f"{what} needs the {mod} package: {install}")


def check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")


def packaged_model_dir() -> Path:
    """The folder of the packaged verifier (model.onnx, tokenizer.json, training_record.json)."""
    return Path(str(resources.files("ragmeter.local").joinpath("weights").joinpath("verifier")))


class OnnxVerifier:
    """A one-logit BERT-style cross-encoder exported to ONNX, read with onnxruntime.

    ``path``: a folder with ``model.onnx`` (inputs ``input_ids``, ``attention_mask``,
    ``token_type_ids``; output ``logits`` of shape (batch, 1)) and ``tokenizer.json``; default:
    the packaged verifier. ``threads``: onnxruntime intra-op threads (default 1: the judge reads few
    claims a sample and the embedder already keeps both cores busy; measured in docs/performance.md).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        batch_size: int = BATCH_SIZE,
        max_length: int = MAX_LENGTH,
        cache_size: int = CACHE_SIZE,
        threads: int | None = None,
    ) -> None:
        self.path = packaged_model_dir() if path is None else Path(path).expanduser()
        for name in ("model.onnx", "tokenizer.json"):
            if not (self.path / name).is_file():
                raise ConfigError(f"verifier folder {str(self.path)!r} has no {name}")
        require_modules(("onnxruntime", "tokenizers"), "the verifier", _INSTALL)
        check_batch_size(batch_size)
        if max_length < 8:
            raise ConfigError(f"max_length must be >= 8, got {max_length}")
        self.batch_size = batch_size
        self.max_length = max_length
        self.threads = threads
        self.packaged = path is None
        self.name = "verifier:minilm-l6-int8" if self.packaged else f"verifier:{self.path.name}"
        self._load_lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._cache_size = max(0, int(cache_size))
        self._cache_lock = threading.Lock()
        self._batcher = _Batcher(self.entailment_sync)

    def _load(self) -> tuple[Any, Any]:
        with self._load_lock:
            if self._session is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                try:
                    tok = Tokenizer.from_file(str(self.path / "tokenizer.json"))
                    opts = ort.SessionOptions()
                    opts.intra_op_num_threads = self.threads or 1
                    opts.inter_op_num_threads = 1
                    # spinning worker threads cost several times their work on a busy machine
                    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    session = ort.InferenceSession(
                        str(self.path / "model.onnx"), sess_options=opts, providers=["CPUExecutionProvider"]
                    )
                except Exception as exc:
                    raise ConfigError(f"cannot load the verifier from {str(self.path)!r}: {exc}") from exc
                tok.no_padding()
                tok.enable_truncation(max_length=self.max_length, strategy="longest_first")
                self._tokenizer = tok
                self._session = session
            return self._tokenizer, self._session

    def _run(self, pairs: list[tuple[str, str]]) -> list[float]:
        tok, session = self._load()
        # one pair at a time: encode_batch would start a thread pool that spins on a busy machine
        encs = [tok.encode(p, h) for p, h in pairs]
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        out = np.zeros(len(pairs), dtype=np.float64)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for r, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[r, :n] = encs[i].ids
                types[r, :n] = encs[i].type_ids
                mask[r, :n] = 1
            (logits,) = session.run(
                ["logits"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            )
            out[idx] = 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64)[:, 0]))
        return out.tolist()

    def entailment_sync(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        """P(entailed) for each (premise, hypothesis) pair, in [0, 1]."""
        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises for {len(hypotheses)} hypotheses")
        pairs = list(zip(premises, hypotheses, strict=True))
        found: list[float | None] = []
        with self._cache_lock:
            for pair in pairs:
                val = self._cache.get(pair)
                if val is not None:
                    self._cache.move_to_end(pair)
                found.append(val)
        missing = list(dict.fromkeys(p for p, v in zip(pairs, found, strict=True) if v is None))
        if missing:
            fresh = dict(zip(missing, self._run(missing), strict=True))
            with self._cache_lock:
                for pair, val in fresh.items():
                    self._cache[pair] = val
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            found = [fresh[p] if v is None else v for p, v in zip(pairs, found, strict=True)]
        return [float(v) for v in found if v is not None]

    async def entailment(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        """Async form of :meth:`entailment_sync`, batched with the other calls in flight."""
        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises for {len(hypotheses)} hypotheses")
        return await self._batcher.submit(list(premises), list(hypotheses))

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "path": "packaged" if self.packaged else str(self.path)}
        out["max_length"] = self.max_length
        return out

    def __repr__(self) -> str:
        return "OnnxVerifier(packaged)" if self.packaged else f"OnnxVerifier({str(self.path)!r})"


class _Batcher:
    """Runs one batch at a time in a worker thread; calls arriving meanwhile join the next batch."""

    def __init__(self, fn: Any) -> None:
        self._fn = fn
        self._pending: list[tuple[list[str], list[str], asyncio.Future[list[float]]]] = []
        self._running: dict[int, asyncio.Task[None]] = {}  # per event loop: its active drain task

    async def submit(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[float]] = loop.create_future()
        self._pending.append((premises, hypotheses, fut))
        if id(loop) not in self._running:
            self._running[id(loop)] = loop.create_task(self._drain(loop))
        return await fut

    async def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            await asyncio.sleep(0)  # let the calls of this tick join the first batch
            while True:
                batch = [p for p in self._pending if p[2].get_loop() is loop]
                if not batch:
                    return
                self._pending = [p for p in self._pending if p[2].get_loop() is not loop]
                prem = [x for p, _, _ in batch for x in p]
                hyp = [x for _, h, _ in batch for x in h]
                try:
                    probs = await asyncio.to_thread(self._fn, prem, hyp)
                except Exception as exc:
                    for _, _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc)
                    continue
                k = 0
                for p, _, fut in batch:
                    if not fut.done():
                        fut.set_result(probs[k : k + len(p)])
                    k += len(p)
        finally:
            self._running.pop(id(loop), None)


@lru_cache(maxsize=1)
def default_verifier() -> OnnxVerifier:
    """The packaged verifier, shared by every judge in the process (loaded on first use)."""
    return OnnxVerifier()
