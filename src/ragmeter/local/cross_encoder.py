"""A user's own NLI / cross-encoder model (a local folder) in place of the packaged verifier.

The local judge ships its own verifier (:mod:`ragmeter.local.verifier`); this class lets a user
put a bigger model in its place: a folder with a Hugging Face sequence-classification model
(``config.json``, weights, tokenizer files), e.g. a DeBERTa or MiniLM cross-encoder fine-tuned on
MNLI, downloaded by the user beforehand. Needs ``pip install 'ragmeter[nli]'`` (transformers and
torch); nothing is downloaded. ``LocalJudge(verifier=CrossEncoderSupport(folder))``.

The entailment probability of (premise = a best-aligned context window, hypothesis = claim) is
read from the label whose name contains "entail" (``config.id2label``), or, for a one-logit
cross-encoder, the sigmoid of its score; ``entailment_label`` overrides the choice. It feeds the
combiner's ``entail`` feature exactly as the packaged verifier's probability does (the combiner's
weights were fitted to the packaged verifier, so a model with a different calibration shifts the
support probabilities). ``languages``: what the model reads, ``("en",)`` by default; a multilingual
NLI model given ``languages=("en", "zh")`` also reads the Chinese claims.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.local.verifier import BatchedEntailment, check_batch_size, check_languages, require_modules

_INSTALL = "pip install 'ragmeter[nli]'  (transformers and torch)"


class CrossEncoderSupport(BatchedEntailment):
    """Entailment probabilities from a local sequence-classification model folder."""

    def __init__(
        self,
        path: str | Path,
        *,
        entailment_label: str | int | None = None,
        device: str = "cpu",
        batch_size: int = 16,
        max_length: int = 512,
        languages: Sequence[str] = ("en",),
    ) -> None:
        self.path = Path(path).expanduser()
        self.languages = check_languages(languages)
        if not self.path.exists():
            raise ConfigError(f"NLI / cross-encoder model folder {str(self.path)!r} does not exist")
        if not self.path.is_dir():
            raise ConfigError(f"NLI / cross-encoder model path {str(self.path)!r} is not a folder")
        if not (self.path / "config.json").is_file():
            raise ConfigError(f"{str(self.path)!r} has no config.json: not a Hugging Face model folder")
        require_modules(("transformers", "torch"), "an NLI / cross-encoder model", _INSTALL)
        check_batch_size(batch_size)
        self.entailment_label = entailment_label
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self.name = f"cross-encoder:{self.path.name}"
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        self._column: int | None = None  # None: one-logit model (sigmoid)

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._model is None:
                try:
                    from transformers import AutoModelForSequenceClassification, AutoTokenizer
                except ImportError as exc:  # pragma: no cover - checked in __init__
                    raise ConfigError(f"an NLI / cross-encoder model needs transformers: {_INSTALL}") from exc
                try:
                    tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
                    model = AutoModelForSequenceClassification.from_pretrained(
                        str(self.path), local_files_only=True
                    )
                except Exception as exc:
                    raise ConfigError(
                        f"cannot load an NLI / cross-encoder model from {str(self.path)!r}: {exc}"
                    ) from exc
                model.eval()
                model.to(self.device)
                self._column = self._entailment_column(model.config)
                self._tokenizer, self._model = tokenizer, model
            return self._tokenizer, self._model

    def _entailment_column(self, config: Any) -> int | None:
        n = int(getattr(config, "num_labels", 0))
        id2label = {int(k): str(v) for k, v in (getattr(config, "id2label", None) or {}).items()}
        if isinstance(self.entailment_label, int):
            if not 0 <= self.entailment_label < n:
                raise ConfigError(
                    f"entailment_label {self.entailment_label} is not a label index of a {n}-label model"
                )
            return self.entailment_label
        if isinstance(self.entailment_label, str):
            for i, name in id2label.items():
                if name.lower() == self.entailment_label.lower():
                    return i
            raise ConfigError(
                f"the model has no label {self.entailment_label!r}; its labels: {sorted(id2label.values())}"
            )
        if n == 1:
            return None
        for i, name in id2label.items():
            if "entail" in name.lower():
                return i
        raise ConfigError(
            f"cannot tell which label of {str(self.path)!r} means entailment (labels: "
            f"{sorted(id2label.values())}); pass entailment_label="
        )

    def entailment_sync(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        """P(entailment) for each (premise, hypothesis) pair, in [0, 1]."""
        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises for {len(hypotheses)} hypotheses")
        tokenizer, model = self._load()
        import torch

        out: list[float] = []
        with torch.no_grad():
            for start in range(0, len(premises), self.batch_size):
                p = list(premises[start : start + self.batch_size])
                h = list(hypotheses[start : start + self.batch_size])
                enc = tokenizer(
                    p, h, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
                ).to(self.device)
                logits = model(**enc).logits.float()
                if self._column is None:
                    probs = torch.sigmoid(logits[:, 0])
                else:
                    probs = torch.softmax(logits, dim=-1)[:, self._column]
                out.extend(min(max(float(x), 0.0), 1.0) for x in probs.cpu().tolist())
        return out

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "path": str(self.path), "device": self.device}
        if self.languages != {"en"}:
            out["languages"] = sorted(self.languages)
        return out

    def __repr__(self) -> str:
        return f"CrossEncoderSupport({str(self.path)!r})"
