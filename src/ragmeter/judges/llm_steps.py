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
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ragmeter.errors import JudgeOutputError, UnsupportedStepError
from ragmeter.judges.base import Grade, Preference, RelevanceAssessment, Rubric, Verdict
from ragmeter.text import split_sentences

T = TypeVar("T")

#: structured-output modes in which the server decodes under a grammar built from the schema
GRAMMAR_MODES = frozenset({"json_object_schema", "guided_json", "ollama_format"})
#: longest free-text field (reason, evidence) and claim under grammar decoding, and most claims per
#: text: a small model otherwise rambles until max_tokens cuts the JSON off
_MAX_TEXT = 160
_MAX_CLAIM = 200
_MAX_CLAIMS = 15


def _cap_strings(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _cap_strings(v) for k, v in schema.items()}
        if out.get("type") == "string" and "enum" not in out:
            out.setdefault("maxLength", _MAX_TEXT)
        return out
    if isinstance(schema, list):
        return [_cap_strings(x) for x in schema]
    return schema


def shaped_schema(schema: Mapping[str, Any], shape: Mapping[str, Any], *, grammar: bool) -> dict[str, Any]:
    """The prompt's schema narrowed to what this request can validly answer.

    Everywhere: sentence numbers and item indices become ``enum`` of the valid numbers, a score on an
    integer scale (span <= 10) an ``enum`` of its values. Under grammar decoding (``grammar``) also:
    arrays get exactly the expected items (``prefixItems`` with each ``index`` fixed by ``const``),
    free text is capped at 160 characters (a claim at 200), the copied ``claim`` field of a verdict
    is dropped, and a claim list of a non-empty text has 1 to 15 claims (a small model otherwise answers ``[]``,
    which would make the score invalid; an evasive answer then yields a claim that is not supported).
    Keywords OpenAI's strict mode does not take are used only under grammar decoding.
    """
    s: dict[str, Any] = json.loads(json.dumps(schema))
    props: dict[str, Any] = s.get("properties", {})
    for key in ("verdicts", "texts"):
        if key not in shape or key not in props:
            continue
        n = int(shape[key])
        arr = props[key]
        item = arr["items"]
        if grammar:
            if key == "verdicts":
                item["properties"].pop("claim", None)
                item["required"] = [r for r in item.get("required", []) if r != "claim"]
            if key == "texts":
                item["properties"]["claims"].update(minItems=1, maxItems=_MAX_CLAIMS)
                item["properties"]["claims"]["items"].update(minLength=2, maxLength=_MAX_CLAIM)
            fixed = []
            for i in range(1, n + 1):
                one = json.loads(json.dumps(item))
                one["properties"]["index"] = {"const": i}
                fixed.append(one)
            props[key] = {"type": "array", "prefixItems": fixed, "items": False, "minItems": n, "maxItems": n}
        elif n <= 500:
            item["properties"]["index"] = {"type": "integer", "enum": list(range(1, n + 1))}
    if grammar and "claims" in shape and "claims" in props:
        props["claims"].update(minItems=1, maxItems=_MAX_CLAIMS)
        props["claims"]["items"].update(minLength=2, maxLength=_MAX_CLAIM)
    if "needed" in shape and "needed" in props:
        n = int(shape["needed"])
        if n <= 500:
            props["needed"]["items"] = {"type": "integer", "enum": list(range(1, n + 1))}
        if grammar:
            props["needed"]["maxItems"] = max(n, 0)
    if "score" in shape and "score" in props:
        low, high = shape["score"]
        if float(low).is_integer() and float(high).is_integer() and 0 < high - low <= 10:
            props["score"] = {"type": "integer", "enum": list(range(int(low), int(high) + 1))}
    return _cap_strings(s) if grammar else s


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
    },
}


def _labels(lang: str) -> Mapping[str, Any]:
    return _LABELS.get(lang, _LABELS["en"])


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def needed_indices(raw: Any, n: int) -> set[int]:
    """0-based positions from a list of 1-based sentence numbers (0-based accepted when it is
    unambiguous: a 0 and no ``n``). A number outside the range raises :class:`JudgeOutputError`."""
    if not isinstance(raw, list):
        raise JudgeOutputError(f"'needed' must be a list of sentence numbers, got {type(raw).__name__}")
    nums: list[int] = []
    for x in raw:
        if isinstance(x, bool) or not isinstance(x, (int, float, str)):
            raise JudgeOutputError(f"sentence number {x!r} is not a number")
        try:
            v = float(x)
        except ValueError:
            raise JudgeOutputError(f"sentence number {x!r} is not a number") from None
        if not math.isfinite(v) or v != int(v):
            raise JudgeOutputError(f"sentence number {x!r} is not a whole number")
        nums.append(int(v))
    offset = 1 if (0 in nums and n not in nums) else 0
    out: set[int] = set()
    bad = [x for x in nums if not 1 <= x + offset <= n]
    if bad:
        raise JudgeOutputError(f"sentence number(s) {sorted(set(bad))} out of range 1..{n}")
    for x in nums:
        out.add(x + offset - 1)
    return out


def _useful_as_supported(items: Any) -> list[Any]:
    if not isinstance(items, list):
        raise JudgeOutputError("'verdicts' must be a list")
    out = []
    for v in items:
        if not isinstance(v, dict) or "useful" not in v:
            raise JudgeOutputError(f"a chunk verdict lacks 'useful': {v!r}")
        out.append({"index": v.get("index"), "reason": v.get("reason"), "supported": v["useful"]})
    return out


class MoreSteps:
    """Steps of :class:`~ragmeter.judges.llm.LLMJudge` beyond claims and questions (a mixin)."""

    combine_steps: bool

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
        values = {
            "question": _one_line(question),
            "sentences": "\n".join(f"[{i}] {s}" for i, s in enumerate(items, 1)),
        }

        def convert(obj: Any) -> list[float]:
            needed = needed_indices(obj["needed"], len(items))
            return [1.0 if i in needed else 0.0 for i in range(len(items))]

        return await self._memo_ask("rate_sentences", lang, values, values, convert, {"needed": len(items)})

    async def rate_chunks(
        self, question: str, chunks: Sequence[str], target: str, *, lang: str = "en"
    ) -> list[Verdict]:
        from ragmeter.judges.llm import match_verdicts

        items = [str(c).strip() for c in chunks]
        if not items:
            return []
        lang = self._lang(lang)
        values = {
            "question": _one_line(question),
            "target": _one_line(target),
            "chunks": "\n".join(f"[{i}] {_one_line(c)}" for i, c in enumerate(items, 1)),
        }

        def convert(obj: Any) -> list[Verdict]:
            return match_verdicts(items, _useful_as_supported(obj["verdicts"]))

        return await self._memo_ask("rate_chunks", lang, values, values, convert, {"verdicts": len(items)})

    async def analyse_contexts(
        self, question: str, chunks: Sequence[str], target: str, *, lang: str = "en"
    ) -> tuple[list[Verdict], list[list[float]]]:
        """``rate_chunks(question, chunks, target)`` and ``rate_sentences`` over every chunk's
        sentences (:func:`split_sentences`), in one call. Sentence ratings come back per chunk."""
        from ragmeter.judges.llm import match_verdicts

        items = [str(c).strip() for c in chunks]
        if not items:
            return [], []
        lang = self._lang(lang)
        lab = _labels(lang)
        per_chunk = [split_sentences(c) or [c] for c in items]
        lines: list[str] = []
        k = 0
        for i, sents in enumerate(per_chunk, 1):
            lines.append(lab["passage"].format(i=i))
            for s in sents:
                k += 1
                lines.append(f"  ({k}) {_one_line(s)}")
        n_sent = k
        values = {"question": _one_line(question), "target": _one_line(target), "chunks": "\n".join(lines)}

        def convert(obj: Any) -> tuple[list[Verdict], list[list[float]]]:
            verdicts = match_verdicts(items, _useful_as_supported(obj["verdicts"]))
            needed = needed_indices(obj.get("needed", []), n_sent)
            ratings: list[list[float]] = []
            pos = 0
            for sents in per_chunk:
                ratings.append([1.0 if pos + j in needed else 0.0 for j in range(len(sents))])
                pos += len(sents)
            return verdicts, ratings

        shape = {"verdicts": len(items), "needed": n_sent}
        return await self._memo_ask("analyse_contexts", lang, values, values, convert, shape)

    # -- claims of several texts ------------------------------------------------------------------------

    async def extract_claims_many(
        self, texts: Sequence[str], *, question: str | None = None, lang: str = "en"
    ) -> list[list[str]]:
        """One claim list per text. Blank texts get [] without a call; a single text is the plain
        ``extract_claims`` step; two or more are one ``extract_claims_many`` call."""
        items = [str(t or "").strip() for t in texts]
        asked = [i for i, t in enumerate(items) if t]
        out: list[list[str]] = [[] for _ in items]
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
        values = {
            "question": _one_line(question or "") or no_q,
            "texts": "\n".join(f"[{j}] {_one_line(items[i])}" for j, i in enumerate(asked, 1)),
        }

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
                by_index.setdefault(key, claims)
            if len(by_index) == len(asked) and set(by_index) == set(range(len(asked))):
                by_index = {k + 1: v for k, v in by_index.items()}  # counted from 0
            missing = [j for j in range(1, len(asked) + 1) if j not in by_index]
            if missing:
                raise JudgeOutputError(
                    f"no claims list for text(s) {missing} of {len(asked)}",
                    raw=json.dumps(obj, ensure_ascii=False),
                )
            result: list[list[str]] = [[] for _ in items]
            for j, i in enumerate(asked, 1):
                result[i] = by_index[j]
            return result

        return await self._memo_ask(
            "extract_claims_many", lang, values, values, convert, {"texts": len(asked)}
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
        for key, value in inputs.items():
            label = lab.get(key, key.replace("_", " ").capitalize())
            shown.append(f"{label}: {str(value).strip()}")
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
                raise JudgeOutputError(f"score {score!r} is outside the scale {low:g}..{high:g}")
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
        values = {
            "question": _one_line(question),
            "answer_a": str(answer_a).strip(),
            "answer_b": str(answer_b).strip(),
            "criteria": _one_line(criteria or lab["criteria"]),
            "reference": lab["reference_line"].format(reference=_one_line(reference)) if reference else "",
        }

        def convert(obj: Any) -> Preference:
            w = str(obj["winner"]).strip().lower()
            if w not in ("a", "b", "tie"):
                raise JudgeOutputError(f"winner must be 'A', 'B' or 'tie', not {obj['winner']!r}")
            return Preference(winner=w, reason=str(obj.get("reason") or ""))

        return await self._memo_ask("compare", lang, values, values, convert)
