"""The question a conversation's turn is scored with: the user's message made standalone.

A turn sample (:mod:`ragmeter.dataset.conversations`) holds the user's message as written ("How
tall is it?") and the earlier messages (``history``). Before a metric that reads the question scores
it, the runner asks the judge's ``standalone_question`` step for the message rewritten with that
history ("How tall is the Eiffel Tower?": one LLM call per turn, shared by the turn's metrics through
the judge's step memo and cached like every call; the local judge's rule) and hands the metric the
sample with that question. The stored sample keeps the message as written; each score of the turn
records the question it was scored with in ``details["standalone_question"]``.

A metric reads the question when it ``requires`` it or asks the judge any step but ``embed`` (claim
extraction reads the question, for instance); judge-free metrics and embedding similarity do not,
and cost no rewrite. A turn without history (the first) is scored with its message as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ragmeter.errors import UnsupportedStepError
from ragmeter.text import detect_lang

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.metrics.base import Metric, Score

#: the details key under which a turn's score records the question it was scored with
DETAILS_KEY = "standalone_question"
#: steps that never read the question
_QUESTION_FREE_STEPS = frozenset({"embed"})


def reads_question(metric: Metric) -> bool:
    """Whether ``metric`` reads the sample's question (see the module docstring)."""
    return "question" in metric.requires or any(s not in _QUESTION_FREE_STEPS for s in metric.steps)


def history_pairs(sample: Sample) -> list[tuple[str, str]]:
    """A turn's earlier user and assistant messages as ``(role, text)`` pairs."""
    return [(m.role, m.content) for m in sample.history or () if m.role in ("user", "assistant") and m.content.strip()]


def needs_rewrite(sample: Sample, metric: Metric) -> bool:
    """A turn sample with history, scored by a metric that reads the question."""
    return sample.turn is not None and bool(history_pairs(sample)) and reads_question(metric)


async def standalone_question(sample: Sample, judge: Any) -> str:
    """The judge's standalone form of a turn's question (language: that of the message)."""
    pairs = history_pairs(sample)
    lang = detect_lang(sample.question)
    return str(await judge.standalone_question(sample.question, pairs, lang=lang))


async def scoring_sample(sample: Sample, metric: Metric, judge: Any) -> tuple[Sample, str | None]:
    """(the sample ``metric`` scores, the standalone question or None when it was not rewritten)."""
    if not needs_rewrite(sample, metric):
        return sample, None
    question = await standalone_question(sample, judge)
    return dataclasses.replace(sample, question=question), question


def with_question(score: Score, question: str) -> Score:
    """``score`` with the standalone question recorded in its details."""
    return dataclasses.replace(score, details={**score.details, DETAILS_KEY: question})


def check_rewrite_support(jobs: Iterable[Any], judge: Any) -> None:
    """Refuse, before any call, a run with turns to rewrite and a judge without the step."""
    supports = getattr(judge, "supports", None)
    if callable(supports) and supports("standalone_question"):
        return
    needing = sorted({job.metric.name for job in jobs if needs_rewrite(job.sample, job.metric)})
    if needing:
        raise UnsupportedStepError(
            getattr(judge, "name", "judge"),
            "standalone_question",
            f"conversation turns need their question made standalone for {', '.join(needing)}; use the "
            "local judge or an LLM judge, or a judge that implements standalone_question",
        )


__all__ = [
    "DETAILS_KEY",
    "check_rewrite_support",
    "history_pairs",
    "needs_rewrite",
    "reads_question",
    "scoring_sample",
    "standalone_question",
    "with_question",
]
