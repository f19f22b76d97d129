"""Checking the content of judge replies: valid JSON can still be wrong for the request.

:func:`match_verdicts` turns a list of verdict objects into exactly one :class:`Verdict` per item
asked; :func:`check_evidence` checks that quoted evidence is in the contexts; :func:`needed_indices`
reads sentence numbers; :func:`check_not_copied` catches a reply that repeats the prompt's example.
Each raises the :class:`~ragmeter.errors.JudgeOutputError` subclass that
names what is wrong (docs/judges.md, "Judges that answer valid JSON with wrong content"); the LLM
judge gives such a reply its one repair round.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from ragmeter.errors import (
    CopiedExample,
    CountMismatch,
    DuplicateIndex,
    EvidenceNotFound,
    IndexOutOfRange,
    JudgeOutputError,
)
from ragmeter.judges.base import Verdict
from ragmeter.judges.parsing import validate
from ragmeter.judges.prompts import DATA_TAG_RE
from ragmeter.text import tokenize

#: verdict keys the parser does not insist on even though the wire schema lists them
VERDICT_OPTIONAL = frozenset({"index", "claim", "evidence", "reason"})


def _norm_claim(text: str) -> str:
    return re.sub(r"[\W_]+", "", str(text).casefold())


def match_verdicts(claims: Sequence[str], raw: Sequence[Any]) -> list[Verdict]:
    """One :class:`Verdict` per claim, in order, from the model's verdict objects.

    Matching: by ``index`` (1-based as asked; 0-based accepted when the indices are exactly 0..n-1),
    then by claim text for claims still unmatched, then by position when the counts agree and no
    indices were given. Wrong content raises, named: an index outside 1..n
    (:class:`IndexOutOfRange`), one claim given two different verdicts (:class:`DuplicateIndex`; an
    exact repeat of the same decision is dropped), a claim left without a verdict or more unindexed
    verdicts than claims with nothing to match them by (:class:`CountMismatch`). A verdict whose
    copied claim text names another claim than its index is matched by the text.
    """
    n = len(claims)
    items = [validate(v, _VERDICT_SCHEMA, optional=VERDICT_OPTIONAL) for v in raw]
    raw_json = json.dumps(list(raw), ensure_ascii=False, default=str)
    indices = [v.get("index") for v in items]
    offset = 0
    int_idx = [i for i in indices if isinstance(i, int)]
    if (
        int_idx
        and 0 in int_idx
        and n not in int_idx
        and sorted(set(int_idx)) == list(range(len(set(int_idx))))
    ):
        offset = 1  # the model counted from 0
    bad = sorted({i for i in int_idx if not 0 <= i + offset - 1 < n})
    if bad:
        raise IndexOutOfRange(
            f"verdict index(es) {bad} out of range 1..{n} ({n} claim(s) were asked)", raw=raw_json
        )
    chosen: dict[int, dict[str, Any]] = {}
    by_norm = {_norm_claim(c) for c in claims}
    for v, idx in zip(items, indices, strict=True):
        if not isinstance(idx, int):
            continue
        pos = idx + offset - 1
        claim_text = v.get("claim")
        # an index that points at a different claim than the text says is not trusted
        norm = _norm_claim(claim_text) if claim_text else ""
        if norm and norm != _norm_claim(claims[pos]) and norm in by_norm:
            continue
        if pos in chosen:
            if bool(chosen[pos]["supported"]) != bool(v["supported"]):
                raise DuplicateIndex(
                    f"claim {pos + 1} got two different verdicts (supported and not supported)", raw=raw_json
                )
            continue  # the same decision repeated
        chosen[pos] = v
    by_text: dict[str, list[int]] = {}
    for pos, c in enumerate(claims):
        by_text.setdefault(_norm_claim(c), []).append(pos)
    used = {id(v) for v in chosen.values()}
    for v in items:
        if id(v) in used or not v.get("claim"):
            continue
        for pos in by_text.get(_norm_claim(v["claim"]), []):
            if pos not in chosen:
                chosen[pos] = v
                used.add(id(v))
                break
    if len(chosen) < n and not int_idx:
        if len(items) != n:
            raise CountMismatch(
                f"{len(items)} verdict(s) without indices for {n} claim(s): cannot tell which is which",
                raw=raw_json,
            )
        # no indices and the same count: what text matching left is taken by position
        for pos, v in enumerate(items):
            if pos not in chosen and id(v) not in used:
                chosen[pos] = v
                used.add(id(v))
    missing = [i + 1 for i in range(n) if i not in chosen]
    if missing:
        raise CountMismatch(
            f"{len(items)} verdict(s) for {n} claim(s); no verdict for claim(s) {missing}", raw=raw_json
        )
    out: list[Verdict] = []
    for pos, claim in enumerate(claims):
        v = chosen[pos]
        supported = bool(v["supported"])
        out.append(
            Verdict(
                claim=claim,
                supported=supported,
                reason=str(v.get("reason") or ""),
                evidence=str(v.get("evidence") or ""),
                confidence=1.0 if supported else 0.0,
            )
        )
    return out


_ELLIPSIS_RE = re.compile(r"\.\.\.+|…+")
#: what a judge may copy along with a quote: ragmeter's data tags and item labels ("[2]", "(3)")
_QUOTE_LABEL_RE = re.compile(r"(?:^|\s)(?:\[\d+\]|\(\d+\))(?=\s)")


def check_evidence(verdicts: Sequence[Verdict], contexts: Sequence[str]) -> None:
    """:class:`EvidenceNotFound` when a verdict that calls its claim supported quotes evidence that
    is not in ``contexts``. Compared without case, spacing and punctuation; an ellipsis may join
    quoted pieces, and data tags or item labels copied along are ignored. Evidence of an unsupported
    claim is not checked: no number rests on it."""
    haystack = _norm_claim(" ".join(contexts))
    bad = []
    for i, v in enumerate(verdicts, 1):
        if not v.supported or not v.evidence.strip():
            continue
        quote = _QUOTE_LABEL_RE.sub(" ", DATA_TAG_RE.sub(" ", v.evidence))
        pieces = [_norm_claim(p) for p in _ELLIPSIS_RE.split(quote)]
        if any(p and p not in haystack for p in pieces):
            bad.append(i)
    if bad:
        raise EvidenceNotFound(
            f"the evidence quoted for supported claim(s) {bad} is not in the contexts: quote the deciding "
            "sentence word for word, or mark the claim unsupported",
            raw=json.dumps([v.to_dict() for v in verdicts], ensure_ascii=False),
        )


_VERDICT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "index": {"type": ["integer", "null"]},
        "claim": {"type": ["string", "null"]},
        "evidence": {"type": ["string", "null"]},
        "reason": {"type": ["string", "null"]},
        "supported": {"type": "boolean"},
    },
    "required": ["supported"],
}


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
        raise IndexOutOfRange(f"sentence number(s) {sorted(set(bad))} out of range 1..{n}")
    for x in nums:
        out.add(x + offset - 1)
    return out


_NON_WORD_RE = re.compile(r"[\W_]+")

#: a reply text counts as copied only from this many tokens and characters on (words, or ideographs)
_COPY_MIN_TOKENS = 3
_COPY_MIN_CHARS = 12


def _norm_text(text: str) -> str:
    return " ".join(_NON_WORD_RE.sub(" ", str(text).casefold()).split())


@lru_cache(maxsize=256)
def _norm_template(prompt_text: str) -> str:
    """:func:`_norm_text` of a prompt's wording, which is the same for every request of a step."""
    return _norm_text(prompt_text)


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, Mapping):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


def check_not_copied(obj: Any, prompt_text: str, data: str) -> None:
    """Raise :class:`CopiedExample` when a text of the reply (a claim, a reason, a question) repeats
    the prompt's own wording -- in practice its example reply -- instead of speaking about the data.

    A text counts as copied when, compared without case, spacing and punctuation, it has at least 3
    tokens and 12 characters, occurs in ``prompt_text`` (the prompt without the data), does not occur
    in ``data`` (the request's inputs), and fewer than half of its words of 4+ characters (or its
    ideographs) are in the data: a reply about Einstein to data about Einstein is not a copy.
    """
    template = _norm_template(prompt_text)
    given: str | None = None  # the data, normalised only when a text is found in the prompt (rare)
    for text in _strings(obj):
        n = _norm_text(text)
        if len(n) < _COPY_MIN_CHARS or n not in template:
            continue
        tokens = tokenize(text)
        if given is None:
            given = _norm_text(data)
        if len(tokens) < _COPY_MIN_TOKENS or n in given:
            continue
        given_tokens = set(tokenize(data))
        content = [t for t in tokens if len(t) >= 4 or not t.isascii()] or tokens
        if sum(t in given_tokens for t in content) * 2 < len(content):
            shown = text if len(text) <= 80 else text[:79] + "…"
            raise CopiedExample(
                f"the reply repeats the prompt's example ({shown!r}) instead of answering about the data",
                raw=json.dumps(obj, ensure_ascii=False),
            )
