"""The local judge's entailment verifier: P(premise entails hypothesis) from a small cross-encoder.

Default: the packaged model (``weights/verifier/``): MiniLM-L6 fine-tuned as a binary entailment
cross-encoder by ``scripts/train_verifier.py`` and exported by ``scripts/export_verifier.py`` to
ONNX with int8 per-channel weights (the training record, with its data and held-out figures, is
``weights/verifier/training_record.json``). It runs on ``onnxruntime`` with the ``tokenizers``
library, no torch, no download. English only: its WordPiece vocabulary has no Chinese.

Any object with the :class:`Verifier` methods can take its place, such as
:class:`~ragmeter.local.cross_encoder.CrossEncoderSupport` (a user's Hugging Face NLI folder).

Calls are batched across samples (:class:`~ragmeter.local.batching.CallBatcher`): while a batch
runs in a worker thread (the packaged verifier runs up to two at once, one per core), the pairs of
the calls that arrive meanwhile (other samples in flight) wait and go together in the next batch,
one thread hop for all. The model then reads the pairs one
at a time (``batch_size=1``), unpadded: the packaged model quantises its activations per tensor at
run time (``DynamicQuantizeLinear``), so a pair read in a batch is quantised with its batch mates'
range and its padding, and its probability moves with them (by up to 0.2 on the WikiEval speed
set, 0.02 on average). Read alone, a pair's probability does not depend on what else is in flight,
and it is also cheaper: a padded batch spends more on padding than batching saves
(docs/performance.md, "Local judge speed"). Results are cached per (premise, hypothesis).

Since nothing is padded, the packaged graph has no attention mask: ``scripts/verifier_graph.py``
removed it from the exported graph, with the softmax guard that goes with it (the same logits bit
for bit, at about 14% less time a pair). A model without an ``attention_mask`` input is always
read one pair at a time.
"""

from __future__ import annotations

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
from ragmeter.local.batching import CallBatcher
from ragmeter.text import has_cjk

MAX_LENGTH = 128
#: pairs the model reads in one run: 1, so that a pair's probability does not depend on its batch
#: mates (the module docstring says why)
BATCH_SIZE = 1
CACHE_SIZE = 20_000
_INSTALL = "pip install onnxruntime tokenizers  (both are ragmeter dependencies: reinstall ragmeter)"


@runtime_checkable
class Verifier(Protocol):
    """Entailment probabilities for (premise, hypothesis) pairs. An optional ``languages``
    attribute (a set of ``"en"``, ``"zh"``) says what it reads; without it, English only
    (:func:`languages_of`): the judge gives it no Chinese claim."""

    name: str

    def entailment_sync(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]: ...

    async def entailment(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]: ...

    def describe(self) -> dict[str, Any]: ...


class BatchedEntailment:
    """:meth:`entailment` for a verifier with a blocking ``entailment_sync``: it runs in a worker
    thread, in one batch with the calls of the other samples in flight
    (:mod:`ragmeter.local.batching`)."""

    _batcher: CallBatcher[tuple[str, str], float] | None = None
    #: batches that may run at once (worker threads); 1 for a model that is not thread-safe
    workers: int = 1

    def entailment_sync(
        self, premises: Sequence[str], hypotheses: Sequence[str]
    ) -> list[float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _entail_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        return self.entailment_sync([p for p, _ in pairs], [h for _, h in pairs])

    async def entailment(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        """Async form of :meth:`entailment_sync`, batched with the other calls in flight."""
        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises for {len(hypotheses)} hypotheses")
        if self._batcher is None:  # made on first use, one per verifier
            # each pair is read on its own, so dividing pairs between free workers costs nothing
            self._batcher = CallBatcher(self._entail_pairs, workers=self.workers, share=1)
        return await self._batcher.submit(list(zip(premises, hypotheses, strict=True)))


def require_modules(modules: Sequence[str], what: str, install: str) -> None:
    """A ConfigError naming the first of ``modules`` that is not installed."""
    for mod in modules:
        if importlib.util.find_spec(mod) is None:
            raise ConfigError(f"{what} needs the {mod} package: {install}")


#: the languages the local judge reads
LANGUAGES = ("en", "zh")


def check_languages(languages: Sequence[str]) -> frozenset[str]:
    """The languages a verifier is declared to read, checked: English ``"en"``, Chinese ``"zh"``."""
    out = frozenset(languages)
    unknown = sorted(out - set(LANGUAGES))
    if not out or unknown:
        raise ConfigError(f"a verifier's languages must be among {list(LANGUAGES)}, got {list(languages)!r}")
    return out


def check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")


def packaged_model_dir() -> Path:
    """The folder of the packaged verifier (model.onnx, tokenizer.json, training_record.json)."""
    return Path(str(resources.files("ragmeter.local").joinpath("weights").joinpath("verifier")))


class OnnxVerifier(BatchedEntailment):
    """A one-logit BERT-style cross-encoder exported to ONNX, read with onnxruntime.

    ``path``: a folder with ``model.onnx`` (inputs ``input_ids``, ``token_type_ids`` and, for a
    model that can read padded batches, ``attention_mask``; output ``logits`` of shape (batch, 1))
    and ``tokenizer.json``; default: the packaged verifier (no ``attention_mask``: it reads one pair
    at a time). ``threads``: onnxruntime intra-op threads (default 1: the judge reads few
    claims a sample and the embedder already keeps both cores busy; measured in docs/performance.md).
    ``batch_size``: pairs per model run (default 1; more only for a model with an
    ``attention_mask`` input and without dynamic quantisation, whose probabilities do not depend on
    the batch: pairs are then sorted by length and padded per run). ``languages``: what the model
    reads (``("en",)``; a multilingual model: ``("en", "zh")``, and it reads the Chinese claims too).
    """

    #: two batches at once, one per core: an onnxruntime session may run in several threads, and
    #: the verifier reads every English claim, so one thread would cap a run's rate
    workers = 2

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        batch_size: int = BATCH_SIZE,
        max_length: int = MAX_LENGTH,
        cache_size: int = CACHE_SIZE,
        threads: int | None = None,
        languages: Sequence[str] = ("en",),
    ) -> None:
        self.path = packaged_model_dir() if path is None else Path(path).expanduser()
        self.languages = check_languages(languages)
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
        self._masked = True  # whether the model takes an attention_mask (read when it loads)
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._cache_size = max(0, int(cache_size))
        self._cache_lock = threading.Lock()

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
                    # the same probabilities on every x86-64 CPU: without VNNI, the int8 kernels
                    # (uint8 activations x int8 weights) add products in int16 and saturate, which
                    # moved the packaged model's probabilities by up to 0.1 on an AVX2-only CPU;
                    # with this, onnxruntime reads those CPUs' weights as uint8, in exact integer
                    # arithmetic (VNNI CPUs have no saturation and keep their kernels)
                    opts.add_session_config_entry("session.x64quantprecision", "1")
                    session = ort.InferenceSession(
                        str(self.path / "model.onnx"), sess_options=opts, providers=["CPUExecutionProvider"]
                    )
                except Exception as exc:
                    raise ConfigError(f"cannot load the verifier from {str(self.path)!r}: {exc}") from exc
                names = {i.name for i in session.get_inputs()}
                missing = sorted({"input_ids", "token_type_ids"} - names)
                if missing:
                    raise ConfigError(f"the verifier in {str(self.path)!r} has no {missing[0]} input")
                if "attention_mask" not in names and self.batch_size > 1:
                    raise ConfigError(
                        f"the verifier in {str(self.path)!r} has no attention_mask input, so it reads one "
                        f"pair at a time: batch_size must be 1, got {self.batch_size}"
                    )
                self._masked = "attention_mask" in names
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
            lengths = np.array([len(encs[i].ids) for i in idx])
            width = int(lengths.max())
            ids = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for r, i in enumerate(idx):
                ids[r, : lengths[r]] = encs[i].ids
                types[r, : lengths[r]] = encs[i].type_ids
            feeds = {"input_ids": ids, "token_type_ids": types}
            if self._masked:  # 1 over each pair's tokens, 0 over its padding
                feeds["attention_mask"] = (np.arange(width) < lengths[:, None]).astype(np.int64)
            (logits,) = session.run(["logits"], feeds)
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

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "path": "packaged" if self.packaged else str(self.path)}
        out["max_length"] = self.max_length
        if self.languages != {"en"}:
            out["languages"] = sorted(self.languages)
        return out

    def __repr__(self) -> str:
        return "OnnxVerifier(packaged)" if self.packaged else f"OnnxVerifier({str(self.path)!r})"


def languages_of(verifier: Verifier) -> frozenset[str]:
    """The languages a verifier reads: its ``languages`` attribute, else English only (a user's
    NLI cross-encoder is English unless it says otherwise)."""
    return frozenset(getattr(verifier, "languages", ("en",)))


class ByLanguage:
    """Two verifiers as one: a pair with Chinese on either side goes to ``multilingual``, the others
    to ``english``. Each keeps its own batching and cache."""

    languages = frozenset({"en", "zh"})

    def __init__(self, english: Verifier, multilingual: Verifier) -> None:
        self.english = english
        self.multilingual = multilingual
        self.name = f"{english.name}+{multilingual.name}"

    def _route(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[tuple[list[int], Verifier]]:
        """Each verifier with the indices of the pairs it reads (none without any)."""
        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises for {len(hypotheses)} hypotheses")
        chinese = [has_cjk(p) or has_cjk(h) for p, h in zip(premises, hypotheses, strict=True)]
        parts = (
            ([i for i, zh in enumerate(chinese) if not zh], self.english),
            ([i for i, zh in enumerate(chinese) if zh], self.multilingual),
        )
        return [(idx, model) for idx, model in parts if idx]

    def entailment_sync(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        out = [0.0] * len(premises)
        for idx, model in self._route(premises, hypotheses):
            got = model.entailment_sync([premises[i] for i in idx], [hypotheses[i] for i in idx])
            for i, v in zip(idx, got, strict=True):
                out[i] = v
        return out

    async def entailment(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        out = [0.0] * len(premises)
        for idx, model in self._route(premises, hypotheses):
            got = await model.entailment([premises[i] for i in idx], [hypotheses[i] for i in idx])
            for i, v in zip(idx, got, strict=True):
                out[i] = v
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "english": self.english.describe(),
            "chinese": self.multilingual.describe(),
        }

    def __repr__(self) -> str:
        return f"ByLanguage({self.english!r}, {self.multilingual!r})"


@lru_cache(maxsize=1)
def default_verifier() -> OnnxVerifier:
    """The packaged verifier, shared by every judge in the process (loaded on first use)."""
    return OnnxVerifier()
