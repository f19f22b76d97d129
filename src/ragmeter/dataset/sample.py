"""The unit of evaluation: one question, what was retrieved, what was answered -- or one
conversation (see :mod:`ragmeter.dataset.messages` for the conversation and turn samples)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

from ragmeter.dataset.messages import ChatMessage, ToolCall, as_messages, system_prompt

#: Fields a metric may declare in ``Metric.requires``. ``messages`` and ``history`` are a
#: conversation's and a turn's messages; ``system_prompt`` is derived from ``messages`` (the text of
#: its system messages: the role a conversation gives the assistant).
SAMPLE_FIELDS: tuple[str, ...] = (
    "question",
    "contexts",
    "answer",
    "reference",
    "reference_contexts",
    "context_ids",
    "reference_context_ids",
    "messages",
    "history",
    "system_prompt",
    "reference_tool_calls",
    "tools",
    "reference_topics",
)
#: The fields a conversation gives its samples; ``to_dict`` leaves them out while they are None, so
#: a plain sample's record (and the dataset hash) is what it was before conversations existed.
#: The last three are an agent's (docs/agents.md): the expected tool calls, the tools declared for
#: the run (``{"name", "description", "parameters"}``), and the topics it may talk about.
CONVERSATION_FIELDS: tuple[str, ...] = (
    "conversation_id",
    "turn",
    "history",
    "messages",
    "reference_tool_calls",
    "tools",
    "reference_topics",
)
#: What a sample is scored as: a ``"sample"`` (a plain sample or a turn of a conversation) or a
#: ``"conversation"`` (a sample with ``messages``). A metric scores the samples of its ``level``.
LEVELS: tuple[str, ...] = ("sample", "conversation")


#: list fields stored as tuples
_TUPLE_FIELDS = (
    "contexts",
    "reference_contexts",
    "context_ids",
    "reference_context_ids",
    "tools",
    "reference_topics",
)


@dataclass(frozen=True)
class Sample:
    """One RAG interaction. Immutable; list fields are stored as tuples.

    ``id`` is the sample's id from the data (or its row number as a string when the data has none).
    ``metadata`` holds every input column that is not one of the fields above.

    Conversations (:mod:`ragmeter.dataset.messages`): ``conversation_id`` names the conversation a
    sample belongs to; ``turn`` is a turn sample's index in it (1-based, the n-th user message; None
    for the conversation sample); ``history`` is a turn's earlier user and assistant messages;
    ``messages`` is the whole conversation, on the conversation sample only.

    Agents (docs/agents.md), on the conversation sample: ``reference_tool_calls`` are the calls
    expected of it; ``tools`` the tools declared for the run (``{"name", "description",
    "parameters"}``: a JSON schema); ``reference_topics`` the topics it may talk about.
    """

    question: str = ""
    contexts: tuple[str, ...] = ()
    answer: str | None = None
    reference: str | None = None
    reference_contexts: tuple[str, ...] | None = None
    context_ids: tuple[str, ...] | None = None
    reference_context_ids: tuple[str, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    conversation_id: str | None = None
    turn: int | None = None
    history: tuple[ChatMessage, ...] | None = None
    messages: tuple[ChatMessage, ...] | None = None
    reference_tool_calls: tuple[ToolCall, ...] | None = None
    tools: tuple[Mapping[str, Any], ...] | None = None
    reference_topics: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        # Accept lists from callers and store tuples so the sample stays immutable.
        for name in _TUPLE_FIELDS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        for name in ("history", "messages"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, tuple) or any(not isinstance(m, ChatMessage) for m in value)
            ):
                object.__setattr__(self, name, as_messages(value))
        calls = self.reference_tool_calls
        if calls is not None and (not isinstance(calls, tuple) or any(not isinstance(c, ToolCall) for c in calls)):
            object.__setattr__(
                self,
                "reference_tool_calls",
                tuple(c if isinstance(c, ToolCall) else ToolCall.from_dict(c) for c in calls),
            )

    @property
    def level(self) -> str:
        """``"conversation"`` for a conversation sample (it has ``messages``), else ``"sample"``."""
        return "conversation" if self.messages is not None else "sample"

    @property
    def system_prompt(self) -> str:
        """The text of the conversation's system messages ("" when there is none)."""
        return system_prompt(self.messages)

    def has(self, name: str) -> bool:
        """True when field ``name`` holds usable content (non-empty text or a non-empty list; for
        ``reference_tool_calls`` any list, as an empty one says no call is expected)."""
        value = getattr(self, name)
        if value is None:
            return False
        if name == "reference_tool_calls":  # an empty list is a reference: no call expected
            return True
        if isinstance(value, str):
            return bool(value.strip())
        if isinstance(value, tuple):
            return len(value) > 0
        return True

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in _field_names():
            value = getattr(self, name)
            if name in CONVERSATION_FIELDS:
                if value is None:
                    continue
                if name in ("history", "messages", "reference_tool_calls"):
                    value = [m.to_dict() for m in value]
                elif isinstance(value, tuple):
                    value = [dict(v) if isinstance(v, Mapping) else v for v in value]
            elif isinstance(value, tuple):
                value = list(value)
            elif name == "metadata":
                value = dict(value)
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sample:
        known = _field_set() if cls is Sample else frozenset(f.name for f in fields(cls))
        return cls(**{k: v for k, v in data.items() if k in known})

    def replace(self, **changes: Any) -> Sample:
        data = self.to_dict()
        data.update(changes)
        return Sample.from_dict(data)


@lru_cache(maxsize=1)
def _field_names() -> tuple[str, ...]:
    """The names of :class:`Sample`'s fields, in order (``dataclasses.fields`` once, not per sample)."""
    return tuple(f.name for f in fields(Sample))


@lru_cache(maxsize=1)
def _field_set() -> frozenset[str]:
    return frozenset(_field_names())


@dataclass(frozen=True)
class Dataset(Sequence[Sample]):
    """An ordered, immutable collection of samples, with where it came from.

    ``problems`` lists the rows that were skipped (each a :class:`~ragmeter.errors.DatasetError`);
    ``source`` names the file (or ``"<dataframe>"``, ``"<records>"``).
    """

    samples: tuple[Sample, ...]
    source: str | None = None
    problems: tuple[Any, ...] = ()  # tuple[DatasetError, ...]

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> Sample:  # type: ignore[override]
        return self.samples[index]

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    @property
    def n_skipped(self) -> int:
        return len(self.problems)

    def content_hash(self) -> str:
        """sha256 over the samples' canonical JSON: the dataset hash recorded with each run."""
        h = SampleHasher()
        for s in self.samples:
            h.update(s)
        return h.hexdigest()


def canonical_json(record: Mapping[str, Any]) -> str:
    """A sample's canonical JSON, what the dataset hash is over: keys sorted, UTF-8 kept as it is
    (``ensure_ascii=False``), anything else as ``str()``. Where the ASCII-escaping encoder (twice as
    fast) writes no ``\\u`` escape, the text held no character that the two encoders write
    differently (non-ASCII, DEL), so its text is the canonical one; otherwise it is made again."""
    fast = json.dumps(record, sort_keys=True, default=str)
    if "\\u" not in fast:
        return fast
    return json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)


class SampleHasher:
    """The dataset hash, computed as samples pass: sha256 over each sample's canonical JSON (keys
    sorted, UTF-8) and a newline, in order. :meth:`Dataset.content_hash` is this over its samples;
    a run reading its data as a stream updates one as each sample passes."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def update(self, sample: Sample, record: Mapping[str, Any] | None = None) -> None:
        """Hash the next sample (``record``: its ``to_dict()``, when the caller has it)."""
        self._h.update(canonical_json(sample.to_dict() if record is None else record).encode())
        self._h.update(b"\n")

    def hexdigest(self) -> str:
        return self._h.hexdigest()
