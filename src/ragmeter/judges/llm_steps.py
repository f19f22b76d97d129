"""The LLM judge's context, grading and comparison steps, and its two combined steps.

Mixed into :class:`ragmeter.judges.llm.LLMJudge` (which supplies ``_memo_ask``, ``_lang`` and the
memo). Each step is ONE call whatever the number of sentences, chunks or texts:

- ``rate_sentences(question, sentences)`` -> 1.0 / 0.0 per sentence (sentences numbered; the reply
  lists the numbers of the needed ones).
- ``rate_chunks(question, chunks, target)`` -> one :class:`Verdict` per chunk (``supported`` = useful).
- ``grade(rubric, inputs)`` -> :class:`Grade` on the rubric's scale (G-Eval: criteria, evaluation
  steps, optional levels); a score outside the scale is an output error.
- ``compare(question, a, b)`` -> :class:`Preference` (the metric asks both orders).

Combined steps (same results as the separate steps, fewer calls; see ``metrics/_shared.py``):

- ``extract_claims_many(texts, question=)`` -> one claim list per text (answer and reference).
- ``analyse_contexts(question, chunks, target)`` -> (chunk verdicts as ``rate_chunks``, per-chunk
  sentence ratings as ``rate_sentences`` over :func:`ragmeter.text.split_sentences` of each chunk).
- ``check_contexts(question, chunks, claims, target)`` -> :class:`ContextCheck`: the contexts sent
  ONCE for the verdicts on all claims (as ``verify_claims``; the evidence is a sentence number, so
  it is always a real context sentence), the chunk verdicts for ``target`` and the sentence ratings
  for ``question`` (as ``analyse_contexts``). The core metrics' one call on the contexts.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ragmeter.errors import (
    CountMismatch,
    DuplicateIndex,
    IndexOutOfRange,
    JudgeOutputError,
    ScoreOutOfScale,
    UnsupportedStepError,
)
from ragmeter.judges.base import Grade, Preference, RelevanceAssessment, Rubric, Verdict
from ragmeter.judges.prompts import Untrusted, fence, fence_id
from ragmeter.judges.replies import match_verdicts, needed_indices
from ragmeter.statements import short_answer_claim
from ragmeter.text import split_sentences

T = TypeVar("T")

_LABELS = {
    "en": {
        "question": "Question",
        "answer": "Answer",
        "reference": "Reference",
        "contexts": "Contexts",
        "answer_b": "Answer B",
        "levels": "Score levels:",
        "steps": (
            "1. Read the inputs carefully.",
            "2. Check them against the criteria, point by point.",
            "3. Decide the score on the scale.",
        ),
        "no_reference": "",
        "reference_line": "Reference answer (correct): {reference}",
        "criteria": "correctness, relevance to the question and helpfulness",
        "passage": "Passage {i}:",
        "text": "[{i}] {text}",
        "none": "(none)",
    },
    "zh": {
        "question": "问题",
        "answer": "回答",
        "reference": "参考答案",
        "contexts": "上下文",
        "answer_b": "回答 B",
        "levels": "分数等级：",
        "steps": ("1. 仔细阅读输入。", "2. 逐条对照评分标准进行检查。", "3. 在分数范围内确定分数。"),
        "no_reference": "",
        "reference_line": "参考答案（正确）：{reference}",
        "criteria": "正确性、与问题的相关性以及有用程度",
        "passage": "段落 {i}：",
        "text": "[{i}] {text}",
        "none": "（无）",
    },
}


def _labels(lang: str) -> Mapping[str, Any]:
    return _LABELS.get(lang, _LABELS["en"])


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def numbered_passages(per_chunk: Sequence[Sequence[str]], lab: Mapping[str, Any]) -> str:
    """"Passage i:" lines, each followed by its sentences numbered across all passages: "(k) ..."."""
    lines: list[str] = []
    k = 0
    for i, sents in enumerate(per_chunk, 1):
        lines.append(lab["passage"].format(i=i))
        for sentence in sents:
            k += 1
            lines.append(f"({k}) {_one_line(sentence)}")
    return "\n".join(lines)


def _useful_as_supported(items: Any) -> list[Any]:
    if not isinstance(items, list):
        raise JudgeOutputError("'verdicts' must be a list")
    out = []
    for v in items:
        if not isinstance(v, dict) or "useful" not in v:
            raise JudgeOutputError(f"a chunk verdict lacks 'useful': {v!r}")
        out.append({"index": v.get("index"), "reason": v.get("reason"), "supported": v["useful"]})
    return out


@dataclass(frozen=True)
class ContextCheck:
    """What ``check_contexts`` returns: ``verdicts`` (one per claim, in order; ``evidence`` is the
    deciding context sentence), ``chunks`` (one per chunk: useful for the target; None without a
    target) and ``ratings`` (per chunk, 1.0/0.0 per sentence of :func:`split_sentences`: needed for
    the question; None without a question)."""

    verdicts: list[Verdict]
    chunks: list[Verdict] | None
    ratings: list[list[float]] | None


class AskingMixin:
    """What a mixin of :class:`~ragmeter.judges.llm.LLMJudge`'s steps calls on the judge: the memoised
    ask / parse / repair cycle and the prompt language."""

    async def _memo_ask(
        self,
        step: str,
        lang: str,
        inputs: Any,
        values: Mapping[str, Any],
        convert: Callable[[Any], T],
        shape: Mapping[str, Any] | None = None,
    ) -> T:  # pragma: no cover - supplied by LLMJudge
        raise NotImplementedError

    def _lang(self, lang: str) -> str:  # pragma: no cover - supplied by LLMJudge
        raise NotImplementedError


class MoreSteps(AskingMixin):
    """Steps of :class:`~ragmeter.judges.llm.LLMJudge` beyond claims and questions (a mixin)."""

    combine_steps: bool

    async def extract_claims(
        self, text: str, *, question: str | None = None, lang: str = "en"
    ) -> list[str]:  # pragma: no cover - supplied by LLMJudge
        raise NotImplementedError

    # -- context steps ------------------------------------------------------------------------------

    async def rate_sentences(
        self, question: str, sentences: Sequence[str], *, lang: str = "en"
    ) -> list[float]:
        items = [_one_line(s) for s in sentences]
        if not items:
            return []
        lang = self._lang(lang)
        inputs = {
            "question": _one_line(question),
            "sentences": "\n".join(f"[{i}] {s}" for i, s in enumerate(items, 1)),
        }
        values = {k: Untrusted(v) for k, v in inputs.items()}

        def convert(obj: Any) -> list[float]:
            needed = needed_indices(obj["needed"], len(items))
            return [1.0 if i in needed else 0.0 for i in range(len(items))]

        return await self._memo_ask("rate_sentences", lang, inputs, values, convert, {"needed": len(items)})

    async def rate_chunks(
        self, question: str, chunks: Sequence[str], target: str, *, lang: str = "en"
    ) -> list[Verdict]:
        items = [str(c).strip() for c in chunks]
        if not items:
            return []
        lang = self._lang(lang)
        inputs = {
            "question": _one_line(question),
            "target": _one_line(target),
            "chunks": "\n".join(f"[{i}] {_one_line(c)}" for i, c in enumerate(items, 1)),
        }
        values = {k: Untrusted(v) for k, v in inputs.items()}

        def convert(obj: Any) -> list[Verdict]:
            return match_verdicts(items, _useful_as_supported(obj["verdicts"]))

        return await self._memo_ask("rate_chunks", lang, inputs, values, convert, {"verdicts": len(items)})

    async def analyse_contexts(
        self, question: str, chunks: Sequence[str], target: str, *, lang: str = "en"
    ) -> tuple[list[Verdict], list[list[float]]]:
        """``rate_chunks(question, chunks, target)`` and ``rate_sentences`` over every chunk's
        sentences (:func:`split_sentences`), in one call. Sentence ratings come back per chunk."""
        items = [str(c).strip() for c in chunks]
        if not items:
            return [], []
        lang = self._lang(lang)
        lab = _labels(lang)
        per_chunk = [split_sentences(c) or [c] for c in items]
        n_sent = sum(len(x) for x in per_chunk)
        inputs = {
            "question": _one_line(question),
            "target": _one_line(target),
            "chunks": numbered_passages(per_chunk, lab),
        }
        values = {k: Untrusted(v) for k, v in inputs.items()}

        def convert(obj: Any) -> tuple[list[Verdict], list[list[float]]]:
            verdicts = match_verdicts(items, _useful_as_supported(obj["verdicts"]))
            needed = needed_indices(obj["needed"], n_sent)
            ratings: list[list[float]] = []
            pos = 0
            for sents in per_chunk:
                ratings.append([1.0 if pos + j in needed else 0.0 for j in range(len(sents))])
                pos += len(sents)
            return verdicts, ratings

        shape = {"verdicts": len(items), "needed": n_sent}
        return await self._memo_ask("analyse_contexts", lang, inputs, values, convert, shape)

    async def check_contexts(
        self,
        question: str | None,
        chunks: Sequence[str],
        claims: Sequence[str],
        target: str | None,
        *,
        lang: str = "en",
    ) -> ContextCheck:
        """Verdicts on ``claims``, chunk usefulness for ``target`` and sentence need for ``question``,
        in ONE call that sends the chunks once (the part each is not asked for comes back None/[])."""
        items = [str(c).strip() for c in chunks]
        claim_list = [_one_line(c) for c in claims]
        q = _one_line(question or "")
        tgt = _one_line(target or "")
        if not items:
            return ContextCheck(
                [Verdict(c, False, "no contexts were given, so nothing can be supported", "", 0.0) for c in claims],
                [] if tgt else None,
                [] if q else None,
            )
        lang = self._lang(lang)
        lab = _labels(lang)
        per_chunk = [split_sentences(c) or [c] for c in items]
        sentences = [_one_line(x) for group in per_chunk for x in group]
        none = lab["none"]
        inputs = {
            "chunks": numbered_passages(per_chunk, lab),
            "question": q,
            "target": tgt,
            "claims": "\n".join(f"{i}. {c}" for i, c in enumerate(claim_list, 1)),
        }
        values = {key: Untrusted(v) if v else none for key, v in inputs.items()}

        def convert(obj: Any) -> ContextCheck:
            asked = [k for k, wanted in (("verdicts", claim_list), ("passages", tgt), ("needed", q)) if wanted]
            missing = [k for k in asked if obj.get(k) is None]
            if missing:
                raise JudgeOutputError(f"the reply lacks {', '.join(repr(k) for k in missing)}")
            verdicts: list[Verdict] = []
            if claim_list:
                raw = obj["verdicts"]
                if not isinstance(raw, list):
                    raise JudgeOutputError("'verdicts' must be a list")
                evidence = [x.get("evidence") if isinstance(x, dict) else None for x in raw]
                cited = [e for e in evidence if isinstance(e, int) and not isinstance(e, bool) and e != 0]
                bad = sorted({e for e in cited if not 1 <= e <= len(sentences)})
                if bad:
                    raise IndexOutOfRange(f"evidence sentence number(s) {bad} out of range 1..{len(sentences)}")
                plain = [
                    {**x, "evidence": sentences[x["evidence"] - 1] if x.get("evidence") in cited else ""}
                    for x in raw
                    if isinstance(x, dict)
                ]
                verdicts = [
                    Verdict(c, v.supported, v.reason, v.evidence, v.confidence)
                    for c, v in zip(claims, match_verdicts(claim_list, plain), strict=True)
                ]
            chunk_verdicts = None
            if tgt:
                chunk_verdicts = match_verdicts(items, _useful_as_supported(obj["passages"]))
            ratings = None
            if q:
                needed = needed_indices(obj["needed"], len(sentences))
                ratings, pos = [], 0
                for sents in per_chunk:
                    ratings.append([1.0 if pos + j in needed else 0.0 for j in range(len(sents))])
                    pos += len(sents)
            return ContextCheck(verdicts, chunk_verdicts, ratings)

        shape = {
            "verdicts": len(claim_list),
            "passages": len(items) if tgt else 0,
            "needed": len(sentences) if q else 0,
            "evidence": len(sentences),
        }
        return await self._memo_ask("check_contexts", lang, inputs, values, convert, shape)

    # -- claims of several texts ------------------------------------------------------------------------

    async def extract_claims_many(
        self, texts: Sequence[str], *, question: str | None = None, lang: str = "en"
    ) -> list[list[str]]:
        """One claim list per text. Blank texts get [] and short answers their claim with the
        question (:func:`~ragmeter.statements.short_answer_claim`) without a call; a single other text is
        the plain ``extract_claims`` step; two or more are one ``extract_claims_many`` call."""
        items = [str(t or "").strip() for t in texts]
        out: list[list[str]] = [[] for _ in items]
        built = [short_answer_claim(t, question, self._lang(lang)) if t else None for t in items]
        for i, claim in enumerate(built):
            if claim is not None:
                out[i] = [claim]
        asked = [i for i, t in enumerate(items) if t and built[i] is None]
        if not asked:
            return out
        if len(asked) == 1 or not self.combine_steps:
            found = await asyncio.gather(
                *(self.extract_claims(items[i], question=question, lang=lang) for i in asked)
            )
            for i, claims in zip(asked, found, strict=True):
                out[i] = list(claims)
            return out
        lang = self._lang(lang)
        no_q = {"en": "(not given)", "zh": "（未提供）"}.get(lang, "(not given)")
        q = _one_line(question or "")
        inputs = {
            "question": q or no_q,
            "texts": "\n".join(f"[{j}] {_one_line(items[i])}" for j, i in enumerate(asked, 1)),
        }
        values = {"question": Untrusted(q) if q else no_q, "texts": Untrusted(inputs["texts"])}

        def convert(obj: Any) -> list[list[str]]:
            entries = obj["texts"]
            if not isinstance(entries, list):
                raise JudgeOutputError("'texts' must be a list")
            by_index: dict[int, list[str]] = {}
            for pos, e in enumerate(entries):
                if not isinstance(e, dict) or not isinstance(e.get("claims"), list):
                    raise JudgeOutputError(f"a text entry lacks its 'claims' list: {e!r}")
                idx = e.get("index")
                key = int(idx) if isinstance(idx, int) and not isinstance(idx, bool) else pos + 1
                claims = [c for c in (_one_line(str(x)) for x in e["claims"]) if c]
                if key in by_index and by_index[key] != claims:
                    raise DuplicateIndex(
                        f"text {key} got two different claim lists", raw=json.dumps(obj, ensure_ascii=False)
                    )
                by_index[key] = claims
            if len(by_index) == len(asked) and set(by_index) == set(range(len(asked))):
                by_index = {k + 1: v for k, v in by_index.items()}  # counted from 0
            bad = sorted(k for k in by_index if not 1 <= k <= len(asked))
            if bad:
                raise IndexOutOfRange(
                    f"text index(es) {bad} out of range 1..{len(asked)}", raw=json.dumps(obj, ensure_ascii=False)
                )
            missing = [j for j in range(1, len(asked) + 1) if j not in by_index]
            if missing:
                raise CountMismatch(
                    f"no claims list for text(s) {missing} of {len(asked)}",
                    raw=json.dumps(obj, ensure_ascii=False),
                )
            result = [list(x) for x in out]
            for j, i in enumerate(asked, 1):
                result[i] = by_index[j]
            return result

        return await self._memo_ask(
            "extract_claims_many", lang, inputs, values, convert, {"texts": len(asked)}
        )

    # -- grading and comparison ---------------------------------------------------------------------------

    async def assess_relevance(self, question: str, answer: str, *, lang: str = "en") -> RelevanceAssessment:
        """Not a step of the LLM judge: answer relevance asks it for generated questions instead."""
        raise UnsupportedStepError(
            getattr(self, "name", "llm"),
            "assess_relevance",
            "the LLM judge answers relevance with generate_questions",
        )

    async def grade(self, rubric: Rubric, inputs: Mapping[str, str], *, lang: str = "en") -> Grade:
        lang = self._lang(lang)
        lab = _labels(lang)
        low, high = float(rubric.scale[0]), float(rubric.scale[1])
        steps = rubric.steps or lab["steps"]
        steps_text = "\n".join(s if s[:1].isdigit() else f"{i}. {s}" for i, s in enumerate(steps, 1))
        levels = ""
        if rubric.levels:
            levels = "\n".join([lab["levels"], *(f"- {k}: {v}" for k, v in rubric.levels.items())]) + "\n"
        shown = []
        tag = fence_id(next((str(v).strip() for v in inputs.values()), ""))
        for key, value in inputs.items():
            label = lab.get(key, key.replace("_", " ").capitalize())
            shown.append(f"{label}: {fence(str(value).strip(), tag)}")
        values = {
            "criteria": _one_line(rubric.criteria),
            "steps": steps_text,
            "levels": levels,
            "low": f"{low:g}",
            "high": f"{high:g}",
            "inputs": "\n".join(shown),
        }

        def convert(obj: Any) -> Grade:
            score = obj["score"]
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise JudgeOutputError(f"score {score!r} is not a number")
            if not low <= float(score) <= high:
                raise ScoreOutOfScale(f"score {score!r} is outside the scale {low:g}..{high:g}")
            passing = None if rubric.passing is None else float(score) >= float(rubric.passing)
            return Grade(score=float(score), reason=str(obj.get("reason") or ""), passing=passing)

        memo_inputs = {
            "rubric": [rubric.name, rubric.version, rubric.criteria, list(rubric.scale), dict(rubric.levels)],
            "steps": list(steps),
            "inputs": dict(inputs),
        }
        return await self._memo_ask("grade", lang, memo_inputs, values, convert, {"score": (low, high)})

    async def compare(
        self,
        question: str,
        answer_a: str,
        answer_b: str,
        *,
        reference: str | None = None,
        criteria: str | None = None,
        lang: str = "en",
    ) -> Preference:
        lang = self._lang(lang)
        lab = _labels(lang)
        q = _one_line(question)
        ref = (
            lab["reference_line"].format(reference=fence(_one_line(reference), fence_id(q))) + "\n"
            if reference
            else ""
        )
        values = {
            "question": Untrusted(q),
            "answer_a": Untrusted(str(answer_a).strip()),
            "answer_b": Untrusted(str(answer_b).strip()),
            "criteria": _one_line(criteria or lab["criteria"]),
            "reference": ref,
        }

        def convert(obj: Any) -> Preference:
            w = str(obj["winner"]).strip().lower()
            if w not in ("a", "b", "tie"):
                raise JudgeOutputError(f"winner must be 'A', 'B' or 'tie', not {obj['winner']!r}")
            return Preference(winner=w, reason=str(obj.get("reason") or ""))

        memo_inputs = {k: str(v) for k, v in values.items()}
        return await self._memo_ask("compare", lang, memo_inputs, values, convert)
