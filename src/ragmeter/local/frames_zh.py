"""The Chinese side of the frame reading (:mod:`ragmeter.local.frames`): a Chinese claim aligned
with a context sentence unit by unit (numbers whole, other characters one by one), the fillers it
swaps, the runs of characters it brings from elsewhere in the contexts, exchanged roles around a
relation word or an antonym pivot, and comparatives said the other way round."""

from __future__ import annotations

import difflib
import re

from ragmeter.local.lexicon import ZH_ANTONYMS, ZH_STOPCHARS
from ragmeter.text import is_cjk

#: the most alignment units a Chinese swapped filler spans
ZH_SLOT_MAX = 5


_ZH_NUM_RE = re.compile(r"\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千万亿]{2,}")


#: a Chinese text's alignment units: its numbers whole, any other character alone
_ZH_UNIT_RE = re.compile(_ZH_NUM_RE.pattern + "|.")


_ORDINAL_RE = re.compile(r"^(?:第?(?:\d+|[零〇一二两三四五六七八九十百千]+)|最)$")


def _zh_seq(text: str) -> list[str]:
    """Alignment units of a Chinese text: numbers whole, other characters one by one."""
    out: list[str] = []
    for m in _ZH_UNIT_RE.finditer(text):
        u = m.group(0)
        if len(u) > 1 or is_cjk(u) or u.isalnum():
            out.append(u)
    return out


def _zh_swaps(
    claim_text: str, sent_text: str, context_text: str, implied: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    a = _zh_seq(claim_text)
    b = _zh_seq(sent_text)
    if len(a) < 3 or not b:
        return []
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "replace" or i2 - i1 > ZH_SLOT_MAX or j2 - j1 > ZH_SLOT_MAX:
            continue
        u, v = "".join(a[i1:i2]), "".join(b[j1:j2])
        ordinal = bool(_ORDINAL_RE.match(u) and _ORDINAL_RE.match(v))
        if not ordinal and (all(ch in ZH_STOPCHARS for ch in u) or all(ch in ZH_STOPCHARS for ch in v)):
            continue
        if u not in context_text or v in claim_text or u in sent_text or all(ch in implied for ch in u):
            continue  # a filler the contexts lack is zh_novel_share's; a moved one is no swap
        if any(u in w and any(o in v for o in opp) for w, opp in ZH_ANTONYMS.items()):
            continue  # an opposite: a flip, not a swap
        out.append((u, v))
    return out


_ZH_COMPARATIVE_RE = re.compile(r"比.{1,8}?更?(多|少|高|低|大|小|长|短|早|晚|快|慢|重|轻|强|弱)|(多|少|高|低|大|小)于")


_ZH_COMPARATIVE_OPPOSITES = {
    "多": "少", "少": "多", "高": "低", "低": "高", "大": "小", "小": "大", "长": "短", "短": "长",
    "早": "晚", "晚": "早", "快": "慢", "慢": "快", "重": "轻", "轻": "重", "强": "弱", "弱": "强",
}


def _zh_runs(text: str, absent_from: str, implied: frozenset[str] = frozenset()) -> list[str]:
    """Runs of ``text``'s characters that ``absent_from`` lacks, with a content character among
    them (上海: 上 is a function character elsewhere)."""
    runs: list[str] = []
    cur = ""
    for ch in text + "\0":
        if is_cjk(ch) and ch not in absent_from and ch not in implied:
            cur += ch
            continue
        if cur and any(c not in ZH_STOPCHARS for c in cur):
            runs.append(cur.strip("的了是在和与及也就都而着或"))
        cur = ""
    return [r for r in runs if r]


def _zh_run_swap(claim: str, sentence: str, context_text: str, implied: frozenset[str]) -> list[tuple[str, str]]:
    """Word order aside, the claim's one new run of two to four characters comes from elsewhere in
    the contexts, where the sentence has a run of its own the claim lacks: "中国的首都是上海" against
    "北京是中华人民共和国的首都" -> (上海, 北京)."""
    mine = _zh_runs(claim, sentence, implied)
    if len(mine) != 1 or not 2 <= len(mine[0]) <= 4 or mine[0] not in context_text:
        return []
    theirs = [r for r in _zh_runs(sentence, claim) if 2 <= len(r) <= 4]
    return [(mine[0], theirs[0])] if theirs else []


def _zh_comparative_flip(claim: str, sentence: str) -> bool:
    """"比广州少" against "比深圳多", "低于" against "高于": comparatives of opposite sense."""
    c = {m.group(1) or m.group(2) for m in _ZH_COMPARATIVE_RE.finditer(claim)}
    s = {m.group(1) or m.group(2) for m in _ZH_COMPARATIVE_RE.finditer(sentence)}
    return bool(c and s and not c & s and any(_ZH_COMPARATIVE_OPPOSITES[x] in s for x in c))


def _zh_exchange(claim: str, sentence: str) -> bool:
    """Two runs of the claim stand on the other sides of a shared relation in the sentence:
    "日本队...战胜了中国队" against "中国队...战胜了日本队" (a run of two or more characters on
    each side)."""
    a, b = _zh_seq(claim), _zh_seq(sentence)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    # the pivots: a shared run of two or more characters inside the claim, or a word of the claim
    # whose opposite the sentence has ("输给" / "战胜")
    pivots: list[tuple[str, str, str, str]] = []
    for blk in sm.get_matching_blocks():
        # (and the run without its first or last character, which may belong to an argument: the
        # 水 of "纯水的冰点比盐水高" against "盐水的冰点比纯水低")
        for lead, tail in ((0, 0), (1, 0), (0, 1), (1, 1)):
            ia, ib, size = blk.a + lead, blk.b + lead, blk.size - lead - tail
            if size < 2 or ia == 0 or ia + size >= len(a):
                continue
            pivots.append(("".join(a[:ia]), "".join(a[ia + size :]), "".join(b[:ib]), "".join(b[ib + size :])))
    for word, opposites in ZH_ANTONYMS.items():
        i = claim.find(word)
        if i <= 0 or word in sentence:
            continue
        for o in opposites:
            j = sentence.find(o)
            if j >= 0:
                pivots.append((claim[:i], claim[i + len(word) :], sentence[:j], sentence[j + len(o) :]))

    def runs(text: str) -> set[str]:
        pairs = (text[i : i + 2] for i in range(len(text) - 1))
        return {p for p in pairs if all(is_cjk(c) and c not in ZH_STOPCHARS for c in p)}

    return any(
        runs(lc) & runs(rs) - runs(ls) and runs(rc) & runs(ls) - runs(rs) for lc, rc, ls, rs in pivots
    )


def _zh_units(text: str) -> list[str]:
    """A Chinese text's content units: its numbers, its Latin words ("H2O"), and its other content
    characters."""
    nums = _ZH_NUM_RE.findall(text)
    rest = _ZH_NUM_RE.sub(" ", text)
    latin = re.findall(r"[A-Za-z][A-Za-z0-9]*", rest)
    return nums + latin + [ch for ch in rest if is_cjk(ch) and ch not in ZH_STOPCHARS]
