"""Chat messages: what a conversation sample is made of (see docs/conversations.md).

A conversation (one input row in the OpenAI chat format, a Ragas ``MultiTurnSample`` or a DeepEval
conversational test case) becomes samples of two levels (:mod:`ragmeter.dataset.conversations`):

- one **conversation sample**: ``Sample.messages`` holds the whole conversation as
  :class:`ChatMessage` objects (roles ``system``, ``user``, ``assistant``, ``tool``), in order, with
  ``conversation_id`` set and ``turn`` None. The per-conversation metrics (``knowledge_retention``,
  ``conversation_relevancy``, ``conversation_completeness``, ``role_adherence``) score it.
- one **turn sample** per assistant answer that has contexts: ``question`` is the user's message of
  that turn as written, ``answer`` the assistant's answer, ``contexts`` what the answer was grounded
  in, ``conversation_id`` and ``turn`` (1-based: the n-th user message) say where it is, and
  ``history`` holds the user and assistant messages before it. The RAG metrics score it with the
  user's message made standalone with the history (:mod:`ragmeter.run.turns`).

Every field is plain text, so a message survives the run store's JSON unchanged:
``ChatMessage.from_dict(m.to_dict()) == m``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The roles a message may have, after the readers' normalisation (``human`` -> ``user``, ...).
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class ToolCall:
    """One tool (function) call an assistant message asked for: its ``name``, its ``arguments`` as
    JSON text (as the OpenAI format carries them; Ragas's and DeepEval's argument objects are
    encoded), and the call ``id`` that the tool's reply names (None when the format has none)."""

    name: str
    arguments: str = ""
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.id is not None:
            out["id"] = self.id
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        return cls(str(data.get("name", "")), str(data.get("arguments", "")), data.get("id"))

    @property
    def args(self) -> dict[str, Any] | None:
        """The arguments as a JSON object: ``{}`` when there are none, None when ``arguments`` is
        not a JSON object (a model that wrote broken JSON: ``tool_args_valid`` says so)."""
        text = self.arguments.strip()
        if not text:
            return {}
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def show(self, limit: int = 200) -> str:
        """``name({"k": v})`` on one line, the arguments cut at ``limit`` characters."""
        args = " ".join(self.arguments.split())
        if len(args) > limit:
            args = args[: limit - 1] + "…"
        return f"{self.name}({args})"


@dataclass(frozen=True)
class ChatMessage:
    """One message of a conversation.

    ``role``: one of :data:`ROLES`. ``content``: its text ("" for an assistant message that only
    calls tools). ``contexts``: on an assistant message, the contexts the data gives for it directly
    (an assistant message's own ``contexts`` key, DeepEval's ``retrieval_context``); tool results stay
    in their ``tool`` messages. ``tool_calls``: on an assistant message, the calls it asked for.
    ``tool_call_id`` and ``name``: on a tool message, the call it answers and the tool's name.
    ``reference``: on an assistant message, the expected answer of that turn, when the data has one.
    """

    role: str
    content: str = ""
    contexts: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reference: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.contexts, tuple):
            object.__setattr__(self, "contexts", tuple(self.contexts))
        calls = self.tool_calls
        if not isinstance(calls, tuple) or any(not isinstance(c, ToolCall) for c in calls):
            object.__setattr__(
                self,
                "tool_calls",
                tuple(c if isinstance(c, ToolCall) else ToolCall.from_dict(c) for c in calls),
            )

    def to_dict(self) -> dict[str, Any]:
        """The message as JSON-ready data; fields at their defaults are left out."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.contexts:
            out["contexts"] = list(self.contexts)
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        for key in ("tool_call_id", "name", "reference"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChatMessage:
        """The inverse of :meth:`to_dict` (for stored samples; the readers of users' data are in
        :mod:`ragmeter.dataset.conversations`)."""
        return cls(
            role=str(data.get("role", "")),
            content=str(data.get("content") or ""),
            contexts=tuple(data.get("contexts") or ()),
            tool_calls=tuple(data.get("tool_calls") or ()),
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            reference=data.get("reference"),
        )


def as_messages(value: Sequence[Any] | None) -> tuple[ChatMessage, ...] | None:
    """``value`` (messages or their dicts) as a tuple of :class:`ChatMessage`; None stays None."""
    if value is None:
        return None
    return tuple(m if isinstance(m, ChatMessage) else ChatMessage.from_dict(m) for m in value)


def system_prompt(messages: Sequence[ChatMessage] | None) -> str:
    """The text of the conversation's system messages (the role the assistant was given), joined
    by blank lines; "" when there is none."""
    if not messages:
        return ""
    return "\n\n".join(m.content.strip() for m in messages if m.role == "system" and m.content.strip())


def dialogue(messages: Sequence[ChatMessage] | None) -> list[ChatMessage]:
    """The user and assistant messages that have text, in order: what a person reading the chat
    sees (tool calls without text and tool results are left out)."""
    return [m for m in messages or () if m.role in ("user", "assistant") and m.content.strip()]


__all__ = ["ROLES", "ChatMessage", "ToolCall", "as_messages", "dialogue", "system_prompt"]
