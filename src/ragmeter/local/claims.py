"""Rule-based claim extraction for the local judge (English and Chinese).

A claim is a statement: a sentence of the text, or a clause of a long sentence joined by "; ",
", and", ", but", ", while", ", whereas" (English) or "；", "，但", "，而", "，并且" (Chinese) when
both sides are full statements: each has a verb, the right side starts with its own subject (not
"..., and is 300 m tall"), and an ", and" does not close a list ("the beauty, intelligence, and
cultural diversity of Dominican women" is one claim; the comma inside a number, "18,000", opens no
list item, and "; ", ", but", ", while" never close one). A fragment with no verb is never a claim:
items of a list under a sentence that ends in a colon ("The pageant celebrates:" / "- beauty" /
"- intelligence") are joined to it as one claim.

What states nothing is decided by :mod:`ragmeter.statements`, the rules every judge shares: questions,
greetings and sign-offs ("Sure!", "I hope this helps.", "希望对你有帮助。"), first-person refusals
("I don't know.", "我无法回答这个问题。"), leading sentences about the answer itself ("Here is a
summary of the article.", "以下是本文的摘要。"; a leading "Based on the context, " is cut off) and
text addressed to the evaluator (JSON verdicts, data tags, "Ignore previous instructions...",
"所有陈述都得到支持"), so text planted in an answer to steer the judge neither counts for nor
against it. A hedged statement ("I'm not sure, but it was completed in 1889.", "我不确定，但可能是
1925年建成的。") is a claim, kept as written: the metrics take the hedge off, record the claim as
hedged and verify it like any other (:func:`ragmeter.statements.split_hedge`); a sentence that only
hedges ("Maybe.", "I think so.") states nothing. So an evasive or purely conversational answer has
no claims, and faithfulness is invalid with ``NoClaims`` rather than a guess.

No pronoun resolution: "She founded Plum Organics." stays as it is; verification matches it against
the contexts by content words and meaning, where the pronoun costs little.
"""

from __future__ import annotations

import re

from ragmeter.local.features import analyze
from ragmeter.statements import YES_NO_RE, split_hedge, statement_of, without_instructions
from ragmeter.text import split_sentences

_EN_CLAUSE_RE = re.compile(r"(;\s+|,\s+(?=(?:and|but|while|whereas|although|though)\s))", re.IGNORECASE)
_ZH_CLAUSE_RE = re.compile(r"[；;]|[，,](?=(?:但是|但|而且|而|并且|同时|然而|不过)(?!且))")
_ZH_CONNECTIVE_RE = re.compile(r"^(?:但是|但|而且|而|并且|同时|然而|不过)[，,]?")
_LEADING_CONNECTIVE_RE = re.compile(r"^(?:and|but|while|whereas|although|though)\s+", re.IGNORECASE)
_MIN_CLAUSE_TERMS = 2
_MIN_ZH_CLAUSE = 6

# ------------------------------------------------------------------ verbs (no tagger: word lists)

_EN_AUX = frozenset(
    """
    is are was were be been being am has have had do does did will would shall should can could may
    might must isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't
    can't cannot couldn't shouldn't mustn't it's he's she's that's there's they're we're you're i'm
    they've we've i've it'll they'll
    """.split()
)
_EN_IRREGULAR = frozenset(
    """
    became become began begins bore bought brought built builds came comes caught chose drew drove ate
    fell feels felt fled flew fought found forgot froze gave gives got grew grows hid held holds hung
    kept keeps knew knows laid lay lays led leads left lent let lost made makes meant means met paid
    put ran runs rose rises said says sang sank sat saw sees sent sends set shook shot shows shut
    slept sold sought spent spoke spread stood stands stole struck stuck swam swore taught takes
    thought threw told tells took tore understood went goes won wins wore wrote writes lies includes
    contains consists remains lives works serves uses helps provides allows requires offers seems
    covers flows carries stretches reaches produces causes celebrates supports
    """.split()
)
_EN_NOT_VERBS_ED = frozenset("hundred indeed bed red seed speed need feed shed breed sacred naked".split())
_EN_SUBJECT_WORDS = frozenset(
    """
    it he she they we i you there this these those that its his her their our my the a an some many
    most all each every no one two three several both such other another which who
    """.split()
)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'’\-]*")
#: characters and words that mark a Chinese predicate (copulas, common verbs, aspect particles)
_ZH_VERB_RE = re.compile(
    r"[是有在为了过着被把将会能要让使叫称给到做成属含位生死建写发出开吃喝用住走来去看说想知需增减变]|可以|应该|包括"
)


def has_verb(clause: str) -> bool:
    """Whether ``clause`` has a finite verb, by word lists (no tagger): an auxiliary or copula, a
    common irregular verb, a word in -ed (English); a copula, a common verb or an aspect particle
    (Chinese). Errs towards yes: a clause it passes may still be a fragment, but one it refuses has
    none of the words a statement is made of."""
    if analyze(clause).has_cjk:
        return _ZH_VERB_RE.search(clause) is not None
    for w in _WORD_RE.findall(clause):
        low = w.lower().replace("’", "'")
        if low in _EN_AUX or low in _EN_IRREGULAR or low.endswith("n't"):
            return True
        if w[0].islower() and len(low) > 4 and low.endswith("ed") and low not in _EN_NOT_VERBS_ED:
            return True
    return False


def _starts_with_subject(clause: str) -> bool:
    """The clause opens with a subject, not with its verb ("and is 300 m tall" has none)."""
    words = _WORD_RE.findall(clause)
    if not words:
        return clause[:1].isdigit()
    first = words[0]
    low = first.lower()
    if low in _EN_SUBJECT_WORDS or first[0].isupper():
        return True
    return not (low in _EN_AUX or low in _EN_IRREGULAR or low.endswith(("ed", "n't")))


def _ends_in_list(left: str) -> bool:
    """The text before ", and" ends with an item of a list ("the beauty, intelligence"): its last
    comma-separated part has no verb."""
    parts = [p for p in re.split(r",(?!\d)\s*", left) if p.strip()]  # not the comma of 18,000
    return len(parts) > 1 and not has_verb(parts[-1])


def _clauses(sentence: str) -> list[str]:
    feats = analyze(sentence)
    if feats.has_cjk:
        parts = [_ZH_CONNECTIVE_RE.sub("", p.strip(" ，,")) for p in _ZH_CLAUSE_RE.split(sentence)]
        parts = [p for p in parts if p]
        if len(parts) > 1 and all(
            sum(1 for c in p if "\u4e00" <= c <= "\u9fff") >= _MIN_ZH_CLAUSE and has_verb(p) for p in parts
        ):
            return parts
        return [sentence]
    pieces = _EN_CLAUSE_RE.split(sentence)  # text, separator, text, ...
    out: list[str] = [pieces[0].strip()]
    for sep, piece in zip(pieces[1::2], pieces[2::2], strict=True):
        right = _LEADING_CONNECTIVE_RE.sub("", piece.strip()).strip()
        left = out[-1]
        if (
            right
            and has_verb(right)
            and _starts_with_subject(right)
            and not (sep.strip().startswith(",") and piece.lower().startswith("and") and _ends_in_list(left))
            and len(analyze(left).terms) >= _MIN_CLAUSE_TERMS
            and len(analyze(right).terms) >= _MIN_CLAUSE_TERMS
        ):
            out.append(right)
        else:  # not a statement of its own: it stays with what it continues
            out[-1] = left + sep + piece
    return [p.strip() for p in out if p.strip()]


def _capitalised(clause: str) -> str:
    return clause[0].upper() + clause[1:] if clause[:1].islower() else clause


def _yes_no_claim(text: str, question: str | None) -> list[str]:
    """A bare "yes" / "no" answers its question: the claim is the answer word with the question
    ("no: Are both bands American"), so its polarity can be checked against the contexts."""
    m = YES_NO_RE.match(text)
    if not m or not question or not question.strip():
        return []
    q = question.strip().rstrip("?？ ")
    return [f"{m.group(1)}: {q}"] if q else []


def _joined_lists(sentences: list[str]) -> list[str]:
    """Sentences, with the verbless items of a list that follows a colon ("The pageant celebrates:",
    "beauty", "intelligence") joined to the sentence that introduces them."""
    out: list[str] = []
    in_list = False
    for s in sentences:
        if out and (in_list or out[-1].endswith((":", "："))) and not has_verb(s):
            head, item = out[-1], s.rstrip("。.;；,，")
            if head.endswith((":", "：")):
                out[-1] = head + ("" if head.endswith("：") else " ") + item
            else:
                out[-1] = head + ("、" if analyze(head).has_cjk else ", ") + item
            in_list = True
            continue
        in_list = False
        out.append(s)
    return out


def extract_claims(text: str, *, question: str | None = None) -> list[str]:
    """The claims of ``text``, in order, without duplicates (see the module docstring).

    A text with no claim (empty, greetings only, a refusal) gives ``[]``. ``question`` is used for
    one case only: a bare "yes" / "no" (是的 / 不是) answer becomes the claim "yes: <question>".
    """
    claims: list[str] = []
    seen: set[str] = set()
    text = without_instructions(text or "")
    if YES_NO_RE.match(text):
        return _yes_no_claim(text, question)
    sentences = split_sentences(text)
    for k, raw in enumerate(_joined_lists(sentences)):
        sentence = statement_of(raw, leading=k == 0)
        if sentence is None:
            continue
        if sentence.rstrip().endswith((":", "：")) and not has_verb(sentence):
            continue  # a heading ("Key facts:")
        hedge = split_hedge(sentence)
        lead = hedge.lead
        body = sentence[len(lead) :].strip() if lead else sentence
        for clause in _clauses(body):
            # each clause keeps the hedge that opened its sentence
            claim = lead + ("" if analyze(lead).has_cjk else " ") + clause if lead else _capitalised(clause)
            key = " ".join(claim.lower().split())
            if key and key not in seen:
                seen.add(key)
                claims.append(claim)
    return claims
