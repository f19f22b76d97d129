"""The LLM judge's conversation steps (docs/conversations.md).

Mixed into :class:`ragmeter.judges.llm.LLMJudge` (which supplies ``_memo_ask`` and ``_lang``). Each
step is ONE call, cached and memoised like the other steps, with its prompt file in
``prompts/<lang>/<step>.toml``:

- ``standalone_question(question, history)`` -> the user's message of a turn rewritten so that it
  means the same without the conversation (``history``: the earlier ``(role, text)`` pairs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ragmeter.errors import JudgeOutputError
from ragmeter.judges.prompts import Untrusted

T = TypeVar("T")

_SPEAKERS = {
    "en": {"user": "User", "assistant": "Assistant", "system": "System"},
    "zh": {"user": "用户", "assistant": "助手", "system": "系统"},
}


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def transcript(history: Sequence[tuple[str, str]], lang: str) -> str:
    """``"User: ..."`` / ``"Assistant: ..."`` lines, one per message, each on one line."""
    names = _SPEAKERS.get(lang, _SPEAKERS["en"])
    colon = "：" if lang == "zh" else ": "
    return "\n".join(f"{names.get(role, role)}{colon}{_one_line(text)}" for role, text in history)


class ConversationSteps:
    """Conversation steps of :class:`~ragmeter.judges.llm.LLMJudge` (a mixin)."""

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


__all__ = ["ConversationSteps", "transcript"]
