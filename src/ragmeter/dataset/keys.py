"""Stable sample keys: what ``ragmeter compare`` matches two runs' samples by.

A sample's key is stored with it in the run record. It is

- ``id:<id>`` when the data has an id column (``id``, ``sample_id`` or a ``--map id=...``
  column), or when a :class:`Sample` built in code carries an ``id``;
- else ``qr:<hash>``: the first 32 hex digits of the SHA-256 of the normalised question, a
  unit separator (U+001F) and the normalised reference (empty when there is none), UTF-8
  encoded. Normalising is Unicode NFC, then every run of whitespace becomes one space, then
  leading and trailing space is dropped; letter case and punctuation are kept. So re-running
  the same questions from a re-ordered, filtered or re-exported file gives the same keys, and
  two versions of a pipeline answering the same questions are matched however their answers
  and contexts differ.

Conversations (:mod:`ragmeter.dataset.conversations`): a conversation sample's key is ``id:<id>``
when the data names the conversation, else ``ch:<hash>`` over its user messages (normalised, joined
by U+001F); a turn's key is its conversation's key with ``/turn:<n>`` appended (``id:c7/turn:3``),
so ``compare`` matches turns by conversation and turn index. A turn whose conversation sample is
not among the samples keyed is hashed over its history's user messages and its question.

A row number is never a key: without an id column the loader names a sample by its row
(``Sample.id == "3"``), which changes when a row is added or removed above it.

Two samples of one run with the same question and reference would share a key; the second gets
``#2`` appended, the third ``#3``, and so on, in data order.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence

from ragmeter.dataset.sample import Sample
from ragmeter.dataset.seen import Remembers, Seen

_SPACE = re.compile(r"\s+")
_SEPARATOR = "\x1f"


def normalize_key_text(text: str | None) -> str:
    """NFC, whitespace runs collapsed to one space, trimmed (case kept)."""
    if not text:
        return ""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def text_key(question: str | None, reference: str | None) -> str:
    """``qr:`` + 32 hex digits of SHA-256 over the normalised question and reference."""
    payload = normalize_key_text(question) + _SEPARATOR + normalize_key_text(reference)
    return "qr:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def conversation_text_key(user_messages: Sequence[str]) -> str:
    """``ch:`` + 32 hex digits of SHA-256 over a conversation's normalised user messages."""
    payload = _SEPARATOR.join(normalize_key_text(m) for m in user_messages)
    return "ch:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def _user_texts(sample: Sample) -> list[str]:
    if sample.messages is not None:
        return [m.content for m in sample.messages if m.role == "user" and m.content.strip()]
    return [m.content for m in sample.history or () if m.role == "user"] + [sample.question]


def sample_key(
    sample: Sample, *, id_from_data: bool = True, conversation_keys: Mapping[str, str] | None = None
) -> str:
    """The key of one sample (without the ``#n`` suffix of a repeat; see :func:`sample_keys`).

    ``id_from_data=False`` says the sample's id is the loader's row number, not the data's.
    ``conversation_keys``: the keys of the conversations a turn may belong to, by conversation id."""
    if sample.conversation_id is not None:
        cid = str(sample.conversation_id)
        if sample.turn is None:
            base = "id:" + cid if id_from_data and cid.strip() else conversation_text_key(_user_texts(sample))
            return base
        base = (conversation_keys or {}).get(cid) or (
            "id:" + cid if id_from_data and cid.strip() else conversation_text_key(_user_texts(sample))
        )
        return f"{base}/turn:{sample.turn}"
    if id_from_data and sample.id is not None and str(sample.id).strip():
        return "id:" + str(sample.id)
    return text_key(sample.question, sample.reference)


def sample_keys(samples: Sequence[Sample], generated_ids: Collection[str] = ()) -> list[str]:
    """Keys of ``samples`` in order, repeats numbered (``#2``, ``#3``...).

    ``generated_ids``: ids the loader filled in from row numbers (``LoadedDataset.generated_ids``);
    those samples are keyed by their text."""
    generated = set(generated_ids)
    conversations = {
        str(s.conversation_id): sample_key(s, id_from_data=s.id not in generated)
        for s in samples
        if s.conversation_id is not None and s.turn is None
    }
    numberer = KeyNumberer(conversations)
    return [numberer.key(s, id_from_data=s.id not in generated) for s in samples]


def number_repeats(keys: Sequence[str]) -> list[str]:
    """``keys`` with the 2nd, 3rd... occurrence of a key suffixed ``#2``, ``#3``..."""
    numberer = KeyNumberer()
    return [numberer.number(key) for key in keys]


class KeyNumberer:
    """Keys of samples met one at a time, in data order, repeats numbered as :func:`sample_keys`
    numbers them (so a stream of samples gets the keys the whole list would).

    It remembers how often each key was met in ``seen`` (:mod:`ragmeter.dataset.seen`: dicts by
    default; a stream of a large file keeps them in a temporary file) and the key of a
    conversation, which its turns take. ``conversation_keys`` gives every conversation's key
    beforehand (samples in any order); without it, a conversation sample is taken to come right
    before its turns, as a source gives them
    (:func:`~ragmeter.dataset.conversations.conversation_samples`), and only the last one's key is
    kept."""

    def __init__(self, conversation_keys: Mapping[str, str] | None = None, *, seen: Remembers | None = None) -> None:
        self._seen: Remembers = Seen() if seen is None else seen
        self._known = conversation_keys is not None
        self._conversations: dict[str, str] = dict(conversation_keys or {})

    def number(self, key: str) -> str:
        """``key``, or ``key#n`` when it is the n-th time the key is met."""
        n = self._seen.count(key)
        return key if n == 1 else f"{key}#{n}"

    def key(self, sample: Sample, *, id_from_data: bool = True) -> str:
        """The numbered key of the next sample (see :func:`sample_key`)."""
        base = sample_key(sample, id_from_data=id_from_data, conversation_keys=self._conversations)
        if sample.conversation_id is not None and sample.turn is None:
            cid = str(sample.conversation_id)
            if self._known:
                self._conversations.setdefault(cid, base)
            else:
                self._conversations = {cid: base}
        return self.number(base)


__all__ = [
    "KeyNumberer",
    "conversation_text_key",
    "normalize_key_text",
    "number_repeats",
    "sample_key",
    "sample_keys",
    "text_key",
]
