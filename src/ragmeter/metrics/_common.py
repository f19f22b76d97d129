"""Small helpers shared by the built-in metrics (not public API)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError
from ragmeter.judges.base import Verdict
from ragmeter.metrics.base import Score
from ragmeter.text import detect_lang

if TYPE_CHECKING:
    import numpy as np

LANG_CHOICES: tuple[str, ...] = ("auto", "en", "zh")


def check_lang(lang: str) -> str:
    if lang not in LANG_CHOICES:
        raise ConfigError(f"lang must be one of {', '.join(LANG_CHOICES)}, not {lang!r}")
    return lang


def resolve_lang(lang: str, *texts: str | None) -> str:
    """The metric's ``lang`` parameter, with ``"auto"`` detected from ``texts`` joined."""
    if lang != "auto":
        return lang
    return detect_lang(" ".join(t for t in texts if t))


def blank(text: str | None) -> bool:
    return text is None or not text.strip()


def empty_input(field: str) -> Score:
    """The invalid score for a required field that is missing or whitespace only."""
    return Score.invalid("EmptyInput", f"{field} is empty: nothing to score")


def checked_contexts(sample: Sample, *text_fields: str) -> tuple[list[str], Score | None]:
    """The sample's non-blank contexts, stripped, after checking that ``text_fields`` are not
    blank; or the ``EmptyInput`` score for the first field (then the contexts) that is."""
    for f in text_fields:
        if blank(getattr(sample, f)):
            return [], empty_input(f)
    contexts = clean_texts(sample.contexts)
    if not contexts:
        return [], empty_input("contexts")
    return contexts, None


def clean_texts(texts: Sequence[str] | None) -> list[str]:
    """Drop missing and whitespace-only strings; strip the rest."""
    return [t.strip() for t in (texts or ()) if isinstance(t, str) and t.strip()]


def short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote_list(items: Sequence[str], *, limit: int = 3) -> str:
    shown = "; ".join(f'"{short(x)}"' for x in items[:limit])
    if len(items) > limit:
        shown += f"; and {len(items) - limit} more"
    return shown


def cosine_rows(embeddings: np.ndarray, n_expected: int) -> tuple[np.ndarray | None, str]:
    """Check an ``embed`` reply and return its rows L2-normalised, or ``(None, why)``.

    The Judge protocol promises normalised rows, but a metric does not rely on it: it normalises
    again and refuses a reply with the wrong shape, non-finite values or an all-zero row (whose
    cosine is undefined), so a bad embedding is an invalid score, never NaN.
    """
    import numpy as np

    arr = np.asarray(embeddings, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != n_expected or arr.shape[1] == 0:
        return None, f"embed returned an array of shape {arr.shape} for {n_expected} texts"
    if not np.all(np.isfinite(arr)):
        return None, "embed returned non-finite values"
    norms = np.linalg.norm(arr, axis=1)
    if np.any(norms == 0):
        return None, "embed returned an all-zero vector; cosine similarity is undefined"
    return arr / norms[:, None], ""


def support_probability(verdict: Verdict) -> float:
    """The probability that a verdict's claim (or chunk) holds: the judge's ``confidence`` when it
    gives one (the local judge always does), else 1.0 / 0.0 from ``supported``.

    Metrics that count supported claims sum these instead, so their value is the *expected* share
    of supported claims. With an LLM judge (confidence 1.0 or 0.0, or none) this is exactly the
    published count; with a judge that gives graded probabilities, no information is thrown away
    at a 0.5 cut (which, with one or two claims per answer, makes most scores 0, 0.5 or 1).
    """
    if verdict.confidence is not None:
        return min(max(float(verdict.confidence), 0.0), 1.0)
    return 1.0 if verdict.supported else 0.0
