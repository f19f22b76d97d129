"""The LLM judge's conversation steps (docs/conversations.md).

Mixed into :class:`ragmeter.judges.llm.LLMJudge` (which supplies ``_memo_ask`` and ``_lang``). Each
step is ONE call, cached and memoised like the other steps, with its prompt file in
``prompts/<lang>/<step>.toml``:

- ``standalone_question(question, history)`` -> the user's message of a turn rewritten so that it
  means the same without the conversation (``history``: the earlier ``(role, text)`` pairs).
- ``rate_turn_relevance(dialogue)``, ``check_role_adherence(role, dialogue)`` -> one
  :class:`~ragmeter.judges.base.TurnVerdict` per answered exchange (``confidence`` 1.0 / 0.0).
- ``check_retention(dialogue)`` -> :class:`~ragmeter.judges.base.RetentionCheck`: the user's facts
  with the exchange that states each, and one verdict per answered exchange.
- ``check_completeness(dialogue)`` -> one :class:`~ragmeter.judges.base.Verdict` per request the
  user made (``claim``: the request, ``supported``: met by the end).

The dialogue is sent as numbered exchanges (:func:`~ragmeter.judges.base.exchanges`), "User [k]:"
and "Assistant [k]:" lines, first in the prompt so the calls on one conversation share their
prefix; each verdict names its exchange by ``index``. A reply with a verdict for an exchange that
does not exist, two different verdicts for one, or none for one raises the named
:class:`~ragmeter.errors.JudgeOutputError` (and gets the repair round).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.errors import CountMismatch, DuplicateIndex, IndexOutOfRange, JudgeOutputError
from ragmeter.judges.base import RetentionCheck, TurnVerdict, UserFact, Verdict, exchanges
from ragmeter.judges.llm_steps import AskingMixin
from ragmeter.judges.prompts import Untrusted

_SPEAKERS = {
    "en": {"user": "User", "assistant": "Assistant", "system": "System"},
    "zh": {"user": "用户", "assistant": "助手", "system": "系统"},
}
#: the reply key of each turn-verdict step's decision
_DECISION = {"rate_turn_relevance": "relevant", "check_retention": "retained", "check_role_adherence": "in_role"}


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def transcript(history: Sequence[tuple[str, str]], lang: str) -> str:
    """``"User: ..."`` / ``"Assistant: ..."`` lines, one per message, each on one line."""
    names = _SPEAKERS.get(lang, _SPEAKERS["en"])
    colon = "：" if lang == "zh" else ": "
    return "\n".join(f"{names.get(role, role)}{colon}{_one_line(text)}" for role, text in history)


def numbered_dialogue(dialogue: Sequence[tuple[str, str]], lang: str) -> tuple[str, int, int]:
    """(the exchanges as "User [k]:" / "Assistant [k]:" lines, exchanges in all, answered exchanges).
    Only the last exchange can lack a reply, so the answered ones are 1..n."""
    names = _SPEAKERS.get(lang, _SPEAKERS["en"])
    colon = "：" if lang == "zh" else ": "
    lines: list[str] = []
    items = exchanges(dialogue)
    for k, ex in enumerate(items, 1):
        lines.append(f"{names['user']} [{k}]{colon}{_one_line(ex.user)}")
        if ex.assistant:
            lines.append(f"{names['assistant']} [{k}]{colon}{_one_line(ex.assistant)}")
    return "\n".join(lines), len(items), sum(1 for ex in items if ex.assistant)


def _index(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def turn_verdicts(raw: Any, n: int, key: str) -> list[TurnVerdict]:
    """One :class:`TurnVerdict` per exchange 1..n from the reply's verdict objects (by ``index``;
    0-based accepted when the indices are exactly 0..n-1; by position when none has an index)."""
    if not isinstance(raw, list):
        raise JudgeOutputError("'verdicts' must be a list")
    items = [v for v in raw if isinstance(v, dict)]
    if len(items) != len(raw):
        raise JudgeOutputError("every verdict must be an object")
    shown = json.dumps(raw, ensure_ascii=False, default=str)
    indices = [_index(v.get("index")) for v in items]
    if all(i is None for i in indices):
        if len(items) != n:
            raise CountMismatch(f"{len(items)} verdicts for {n} replies, without indices", raw=shown)
        indices = list(range(1, n + 1))
    elif sorted(i for i in indices if i is not None) == list(range(n)) and None not in indices:
        indices = [i + 1 for i in indices if i is not None]
    out: dict[int, TurnVerdict] = {}
    for i, v in zip(indices, items, strict=True):
        if i is None:
            raise JudgeOutputError(f"a verdict without an index: {v!r}", raw=shown)
        if not 1 <= i <= n:
            raise IndexOutOfRange(f"verdict index {i} out of range 1..{n}", raw=shown)
        ok = v.get(key)
        if not isinstance(ok, bool):
            raise JudgeOutputError(f"verdict {i}: {key!r} must be true or false, got {ok!r}", raw=shown)
        verdict = TurnVerdict(i, ok, _one_line(str(v.get("reason") or "")), 1.0 if ok else 0.0)
        if i in out and out[i].ok != ok:
            raise DuplicateIndex(f"reply {i} got two different verdicts", raw=shown)
        out.setdefault(i, verdict)
    missing = [i for i in range(1, n + 1) if i not in out]
    if missing:
        raise CountMismatch(f"no verdict for reply(ies) {missing} of {n}", raw=shown)
    return [out[i] for i in range(1, n + 1)]


class ConversationSteps(AskingMixin):
    """Conversation steps of :class:`~ragmeter.judges.llm.LLMJudge` (a mixin)."""

    async def standalone_question(
        self, question: str, history: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> str:
        """The user's latest message made standalone with ``history``; the message itself when
        there is no history to read it with (no call)."""
        q = str(question).strip()
        turns = [(str(r), str(t)) for r, t in history if str(t).strip()]
        if not q or not turns:
            return q
        lang = self._lang(lang)
        inputs = {"history": transcript(turns, lang), "question": _one_line(q)}
        values = {k: Untrusted(v) for k, v in inputs.items()}

        def convert(obj: Any) -> str:
            text = obj.get("question")
            if not isinstance(text, str) or not text.strip():
                raise JudgeOutputError("the reply has no rewritten question")
            return _one_line(text)

        return await self._memo_ask("standalone_question", lang, inputs, values, convert)

    async def _turn_step(
        self,
        step: str,
        dialogue: Sequence[tuple[str, str]],
        lang: str,
        extra: Mapping[str, str] | None = None,
    ) -> list[TurnVerdict]:
        lang = self._lang(lang)
        text, _, n = numbered_dialogue(dialogue, lang)
        if n == 0:
            return []
        inputs = {"dialogue": text, **dict(extra or {})}
        values = {k: Untrusted(v) for k, v in inputs.items()}
        key = _DECISION[step]

        def convert(obj: Any) -> list[TurnVerdict]:
            return turn_verdicts(obj["verdicts"], n, key)

        return await self._memo_ask(step, lang, inputs, values, convert, {"verdicts": n})

    async def rate_turn_relevance(
        self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> list[TurnVerdict]:
        return await self._turn_step("rate_turn_relevance", dialogue, lang)

    async def check_role_adherence(
        self, role: str, dialogue: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> list[TurnVerdict]:
        return await self._turn_step("check_role_adherence", dialogue, lang, {"role": _one_line(role)})

    async def check_retention(self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> RetentionCheck:
        lang = self._lang(lang)
        text, m, n = numbered_dialogue(dialogue, lang)
        if n == 0:
            return RetentionCheck((), ())
        inputs = {"dialogue": text}
        values = {k: Untrusted(v) for k, v in inputs.items()}

        def convert(obj: Any) -> RetentionCheck:
            raw_facts = obj.get("facts") or []
            if not isinstance(raw_facts, list):
                raise JudgeOutputError("'facts' must be a list")
            facts = []
            for f in raw_facts:
                turn = _index(f.get("turn")) if isinstance(f, dict) else None
                fact = _one_line(str(f.get("fact") or "")) if isinstance(f, dict) else ""
                if turn is None or not fact:
                    raise JudgeOutputError(f"a fact needs 'turn' and 'fact': {f!r}")
                if not 1 <= turn <= m:
                    raise IndexOutOfRange(f"fact turn {turn} out of range 1..{m}")
                facts.append(UserFact(turn, fact))
            return RetentionCheck(tuple(facts), tuple(turn_verdicts(obj["verdicts"], n, "retained")))

        return await self._memo_ask("check_retention", lang, inputs, values, convert, {"verdicts": n})

    async def check_completeness(self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> list[Verdict]:
        lang = self._lang(lang)
        text, m, _ = numbered_dialogue(dialogue, lang)
        if m == 0:
            return []
        inputs = {"dialogue": text}
        values = {k: Untrusted(v) for k, v in inputs.items()}

        def convert(obj: Any) -> list[Verdict]:
            raw = obj["requests"]
            if not isinstance(raw, list):
                raise JudgeOutputError("'requests' must be a list")
            out = []
            for r in raw:
                request = _one_line(str(r.get("request") or "")) if isinstance(r, dict) else ""
                met = r.get("met") if isinstance(r, dict) else None
                if not request or not isinstance(met, bool):
                    raise JudgeOutputError(f"a request needs 'request' and 'met' (true or false): {r!r}")
                out.append(Verdict(request, met, _one_line(str(r.get("reason") or "")), "", 1.0 if met else 0.0))
            return out

        return await self._memo_ask("check_completeness", lang, inputs, values, convert)


__all__ = ["ConversationSteps", "numbered_dialogue", "transcript", "turn_verdicts"]
