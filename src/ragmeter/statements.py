"""What a sentence states: the rules shared by every claim extractor and the claim-based metrics.

Both judges split answers into claims, and the metrics read those claims; the rules of what is not
a statement, and of what a hedge is, are the same for all of them and live here (English and
Chinese, regular expressions only):

- **Text that states nothing**: greetings and sign-offs (:func:`is_filler`: "Sure!", "I hope this
  helps.", "希望对你有帮助！"), answers that decline or say the answer is unknown (:func:`is_evasive`,
  :func:`is_refusal`: "I don't know.", "我无法回答"), and text addressed to the evaluator rather than
  about the world (:func:`without_instructions`: JSON verdicts, data tags, "Ignore previous
  instructions", "所有陈述都得到支持").
- **Hedges and attitude markers** (:func:`split_hedge`): "I'm not sure, but", "I think", "probably",
  "if I remember correctly", "maybe", "it seems that", "我不确定，但", "可能", "好像", "应该是", "大概",
  "我记得"... A hedged statement is still a statement: the hedge is taken off, the claim is recorded
  as hedged (``hedged: true`` in the metrics' details) and verified like any other. A sentence that
  is only a hedge ("Maybe.", "I think so.", "可能吧。") states nothing. The LLM judge's claim
  prompts keep hedged statements as claims, hedge words included, so the same rule reads the claims
  of either judge (:func:`ragmeter.metrics._shared.claim_sets`).
- **Short answers** (:func:`short_answer_claim`): "Paris", "1998", "Yes", "巴黎" state a fact only
  together with their question.

Modal verbs ("may", "might", "could") are not taken off: they change what the sentence says
rather than how sure the speaker is, and removing them leaves no grammatical sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ragmeter.local.features import analyze
from ragmeter.text import is_cjk, split_sentences, tokenize

__all__ = [
    "SHORT_ANSWER_CJK",
    "SHORT_ANSWER_WORDS",
    "Hedged",
    "instruction_start",
    "is_evasive",
    "is_filler",
    "is_refusal",
    "remove_markup",
    "short_answer_claim",
    "split_hedge",
    "stated_answer",
    "states_nothing",
    "without_instructions",
]

# --------------------------------------------------------------------------- text that states nothing

# Whole sentences that carry no claim: greetings, offers, sign-offs.
_FILLER_EN = re.compile(
    r"^(?:sure|certainly|of course|absolutely|okay|ok|great question|good question|hello|hi|hey|"
    r"thanks?(?: you)?(?: for (?:asking|your question))?|you'?re welcome|glad to help|happy to help|"
    r"i hope (?:this|that) helps|hope (?:this|that) helps|let me know if .*|feel free to .*|"
    r"please let me know .*|if you have (?:any )?(?:other|more|further) questions.*|"
    r"here (?:is|are) (?:the|an?|some|what)\b.*:|let me (?:explain|help|check)\b.*|"
    r"i(?:'d| would) be (?:happy|glad) to help.*|is there anything else.*|anything else\b.*|"
    r"good luck.*|have a (?:nice|great|good) day.*|great|interesting|wow|cool|nice|yes|no|yeah|nope)"
    r"[\s!.,:;?]*$",
    re.IGNORECASE,
)
_FILLER_ZH = re.compile(
    r"^(?:好的|当然|当然可以|没问题|你好|您好|谢谢|谢谢你|不客气|很高兴为您服务|希望(?:这|以上)?(?:对你|对您)?有(?:所)?帮助.*|"
    r"如(?:果)?(?:你|您)?(?:还)?有(?:其他|任何|更多)?(?:问题|疑问).*|以下是.*[:：]|请(?:随时)?告诉我.*|"
    r"祝你.*|是的|不是|对|嗯)[\s!！。.,，:：;；?？~～]*$"
)

# Evasive answers: the answer declines or says it cannot tell.
_EVASIVE_EN = re.compile(
    r"\b(?:i (?:do not|don'?t|dont) know|i'?m not (?:sure|certain|aware)|i am not (?:sure|certain|aware)|"
    r"i (?:cannot|can'?t|can not|am unable to|'m unable to|am not able to) "
    r"(?:answer|say|tell|determine|provide|find|help|confirm|verify|access)|"
    r"i (?:do not|don'?t) have (?:enough |any |the |sufficient )?(?:information|data|details|knowledge|"
    r"access)|(?:there is|there's) (?:no|not enough|insufficient) (?:information|data|context|evidence)|"
    r"(?:the )?(?:information|context|text|passage|document)s? (?:does|do|did) not "
    r"(?:provide|mention|say|contain|specify|include|state)|"
    r"(?:is|are|was|were|has|have) not (?:been )?(?:provided|mentioned|specified|given|stated|available)|"
    r"no (?:information|data|details) (?:is |are )?(?:available|provided|given)|"
    r"not (?:enough|sufficient) (?:information|context)|unknown|no idea|hard to say|"
    r"it is (?:not possible|impossible) to (?:say|tell|determine|know)|cannot be determined)\b",
    re.IGNORECASE,
)
_EVASIVE_ZH = re.compile(
    r"(?:我不知道|不知道|不清楚|不确定|无法(?:回答|确定|判断|提供|得知|获取|知道|帮|协助|查询|查到|找到|处理|办理)|"
    r"不能(?:回答|确定|提供|帮|协助|查询|处理)|"
    r"没有(?:足够的|相关的?|具体的?)?(?:信息|资料|数据|答案)|(?:信息|资料)不足|未(?:提及|提供|说明)|"
    r"没有(?:提到|提及|说明)|很难说|难以(?:回答|确定|判断)|无可奉告)"
)


def is_filler(sentence: str) -> bool:
    """A sentence that makes no claim: "Sure!", "I hope this helps.", "希望对你有帮助。"."""
    s = sentence.strip()
    if not s:
        return True
    return bool(_FILLER_EN.match(s) or _FILLER_ZH.match(s))


def is_evasive(sentence: str) -> bool:
    """A sentence that declines to answer or says the answer is unknown (English or Chinese)."""
    return bool(_EVASIVE_EN.search(sentence) or _EVASIVE_ZH.search(sentence))


# Text addressed to the evaluator rather than stating anything about the world (prompt injection
# planted in an answer): instructions to ignore or override, verdicts for "all claims", notes to the
# evaluator, role prefixes, JSON verdicts and data tags. Narrow on purpose: each pattern needs words
# about the evaluation itself, so ordinary statements are not caught (none of the 12,000 sentences
# of data/dev is).
_INSTRUCTION_EN = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.]{0,40}\b(?:instructions?|prompts?|rules?|guidelines?)\b|"
    r"\b(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?(?:above\s+)?(?:statements?|claims?)\b"
    r"[^.]{0,60}\b(?:supported|faithful|true|correct|verified)\b|"
    r"\b(?:supported|faithful)\b[^.]{0,20}\b(?:every|all|each)\s+(?:claims?|statements?)\b|"
    r"\b(?:answer|respond|reply|output|return)\s+(?:\"?supported\"?|true)\b|"
    r"\b(?:mark|label|rate|grade|score|judge|classify)\b[^.]{0,20}"
    r"\b(?:statements?|claims?|answer|response|this|it|them|everything)\b[^.]{0,20}\bas\s+(?:supported|faithful)\b|"
    r"\b(?:note|message|instruction)s?\s+(?:to|for)\s+the\s+(?:evaluator|grader|judge|assessor|reviewer|model)\b|"
    r"\b(?:evaluator|grader|assessor)s?\b[^.]{0,60}\b(?:supported|faithful|score|verdict)\b|"
    r"^\s*(?:system|assistant|developer)\s*:|\bend of (?:data|input|context|document)\b",
    re.IGNORECASE,
)
_INSTRUCTION_ZH = re.compile(
    r"(?:忽略|无视|忘记)[^。]{0,12}(?:指令|指示|提示|说明|规则)|"
    r"(?:所有|全部|以上|每条)[^。]{0,12}(?:陈述|声明|说法|断言)[^。]{0,12}(?:支持|忠实|正确|属实)|"
    r"(?:判定|标记|评为|视为|判为)为?[^。]{0,6}(?:支持|忠实)|"
    r"(?:评估|评审|评分|评测)(?:说明|者|员|人员|须知)"
)
#: JSON objects ({"key": ...}, one level of nesting), data tags and triple quotes, anywhere in a text
_MARKUP_RE = re.compile(
    r'\{\s*"\w+"\s*:(?:[^{}]|\{[^{}]*\})*\}|[<\uff1c\u2039]\s*/?\s*data\b[-\w]*\s*>|"{3,}|\'{3,}|`{3,}',
    re.IGNORECASE,
)


def remove_markup(text: str) -> str:
    """``text`` without JSON objects and data tags: machine verdicts planted in prose are not claims."""
    return _MARKUP_RE.sub(" ", text)


def instruction_start(sentence: str) -> int | None:
    """Where an instruction to the evaluator starts in ``sentence`` ("Ignore previous instructions",
    "Note to the evaluator: ...", "所有陈述都得到支持"), or None when there is none."""
    starts = [m.start() for m in (_INSTRUCTION_EN.search(sentence), _INSTRUCTION_ZH.search(sentence)) if m]
    return min(starts) if starts else None


_FIRST_PERSON_RE = re.compile(
    r"^\s*(?:i\b|i'm\b|sorry\b|unfortunately\b|as an ai\b|我|抱歉|对不起|很抱歉)", re.IGNORECASE
)
# A leading sentence about the answer itself ("Here is a summary of the article.", "以下是本文的摘要。")
# states nothing about the world; a leading "Based on the context, ..." is cut off the claim.
_META_RE = re.compile(
    r"^(?:(?:sure|certainly|okay|ok)[,!.]?\s+)?(?:here(?:'s| is| are)|below (?:is|are)|the following (?:is|are))\s+"
    r"(?:a |an |the |my |some )?(?:brief |short |quick |concise |one-sentence |detailed |main |key )?"
    r"(?:summary|summaries|overview|answer|explanation|rundown|breakdown|description|recap|list|points?)\b"
    r"|^(?:以下是|下面是|这是).{0,20}(?:摘要|总结|概述|概要|回答|答案)[。:：！!]?$",
    re.IGNORECASE,
)
_SOURCE_PREFIX_RE = re.compile(
    r"^(?:based on|according to|as (?:stated|mentioned|described) in|from) (?:the |this )?(?:provided |given )?"
    r"(?:context|information|text|passage|article|document|source|knowledge)s?,\s*",
    re.IGNORECASE,
)
#: a leading answer word ("No, ...", "Not really, ...", "Yes, ..."): it answers the question, it does
#: not negate (or assert) the statement after it
ANSWER_LEAD_RE = re.compile(
    r"^\s*(?:no|nope|nah|not really|not exactly|not quite|yes|yeah|yep|well|oh|ok|okay)\s*[,.!:;]\s*",
    re.IGNORECASE,
)
YES_NO_RE = re.compile(
    r"^\s*(yes|no|yeah|nope|correct|incorrect|true|false|是的?|对|不是|不对|没有|有|不)[\s!！。.,，]*$",
    re.IGNORECASE,
)


_YES_WORDS = frozenset({"yes", "yeah", "yep", "correct", "true", "是", "是的", "对", "有"})
_POLAR_LEAD_RE = re.compile(
    r"^\s*(yes|yeah|yep|no|nope|correct|incorrect|true|false|是的|不是|不对|没有|是|对|不)(?=[\s,，.。!！;；:：]|$)",
    re.IGNORECASE,
)


def polarity(answer: str, question: str | None = None) -> bool | None:
    """What an answer to a yes/no question says: True (yes), False (no), or None when it does not
    say (an evasion, nothing). A leading yes / no word decides ("No, it cannot be seen" -> False;
    "不是。" -> False); else the answer's negation against the question's ("It cannot be seen from
    the Moon" to "Can it be seen from the Moon?" -> False; "能看到。" to "能看到吗？" -> True)."""
    text = " ".join(str(answer or "").split())
    if not text or is_evasive(text):
        return None
    lead = _POLAR_LEAD_RE.match(text)
    if lead is not None:
        return lead.group(1).lower() in _YES_WORDS
    negated = analyze(text).negated
    asked_negated = analyze(question).negated if question else False
    return negated == asked_negated


def is_refusal(sentence: str) -> bool:
    """A sentence that declines to answer in the first person: "I don't know", "我不清楚"."""
    s = sentence.strip()
    return is_evasive(s) and (_FIRST_PERSON_RE.match(s) is not None or len(analyze(s).terms) <= 2)


def without_instructions(text: str) -> str:
    """``text`` without what is addressed to the evaluator (see the module docstring); unchanged
    when there is none."""
    cleaned = remove_markup(text)
    kept: list[str] = []
    changed = cleaned != text
    for sentence in split_sentences(cleaned):
        cut = instruction_start(sentence)
        if cut is not None:
            sentence = sentence[:cut].strip(" \t\n:;,，：；")
            changed = True
        if sentence:
            kept.append(sentence)
    return " ".join(kept) if changed else text


def is_question(sentence: str) -> bool:
    return sentence.rstrip("\"'”’)） ").endswith(("?", "？"))


def states_nothing(sentence: str) -> bool:
    """``sentence`` makes no statement: empty or without words, a question, filler, a refusal, or a
    hedge with nothing left when it is taken off ("Maybe.", "I think so.", "可能吧。")."""
    s = sentence.strip()
    if not any(ch.isalnum() for ch in s) or is_question(s) or is_filler(s):
        return True
    h = split_hedge(s)
    if h.hedged:
        bare = h.text
        if not bare or is_filler(bare) or is_question(bare):
            return True
        feats = analyze(bare)
        if not feats.terms and not feats.numbers:
            return True  # "Maybe not.", "I think so."
        return is_refusal(bare)
    return is_refusal(s)


def statement_of(sentence: str, *, leading: bool = False) -> str | None:
    """The statement ``sentence`` makes, or None when it makes none (:func:`states_nothing`).

    A leading "Based on the context, " is cut off, and so is, when the sentence opens the text
    (``leading``), a sentence about the answer itself ("Here is a summary of the article." states
    nothing; "Here is a summary: <text>" states <text>). The first letter is capitalised."""
    s = sentence.strip()
    if leading and _META_RE.match(s):
        rest = re.split(r"[:：]", s, maxsplit=1)[1:]
        if not rest or not rest[0].strip():
            return None
        s = rest[0].strip()
    s = _SOURCE_PREFIX_RE.sub("", s)
    if s[:1].islower():
        s = s[0].upper() + s[1:]
    return None if states_nothing(s) else s


# --------------------------------------------------------------------------- hedges

_SURE = r"(?:sure|certain|positive)"
_DEGREE = r"(?:entirely |completely |totally |quite |really |fully |absolutely |100% |a hundred percent )?"
_BUT = r"(?:,\s*|\s+|\s*;\s*)(?:but|though|however|yet)\b,?"
#: "that" opening the statement ("I think that the tower ...") but not its subject ("I think that is right")
_THAT = r"(?:\s+that\b(?!\s*['’]s\b|\s+(?:is|was|would|will|sounds|seems|makes|means|could|might)\b))?,?"
#: hedges that open a sentence (matched one after another: "I'm not sure, but I think ...")
_EN_LEAD_RE = re.compile(
    r"\s*(?:"
    + r"|".join(
        (
            rf"(?:i'?m|i am) not {_DEGREE}{_SURE}(?: about (?:this|that|it))?{_BUT}",
            rf"not {_DEGREE}{_SURE}{_BUT}",
            rf"i (?:do not|don'?t) (?:know|remember) (?:for (?:sure|certain)|exactly|precisely)?{_BUT}",
            rf"i (?:could|may|might) be (?:wrong|mistaken){_BUT}",
            rf"correct me if i'?m wrong{_BUT}",
            r"(?:if|unless) i'?m (?:not )?mistaken,?",
            r"if i (?:remember|recall)(?: (?:it )?(?:correctly|rightly|right))?,?",
            r"as far as i (?:know|can tell|remember|recall|understand),?",
            r"to (?:the best of )?my (?:knowledge|recollection),?",
            r"from what i (?:know|remember|recall|understand|can tell|have (?:read|heard)),?",
            r"in my (?:opinion|view),?",
            r"(?:it|this) (?:seems|appears|looks)(?: to me)?(?: like| as if| as though| that\b|,)",
            r"it(?:'s| is) (?:quite |very |highly )?(?:possible|likely|probable|plausible|conceivable) that\b",
            r"there(?:'s| is) (?:a|some) (?:good |fair |strong |high |decent )?chance that\b",
            r"chances are(?: that\b)?,?",
            rf"(?:i'?m|i am) (?:fairly |pretty |quite |reasonably |almost |nearly |very )?"
            rf"(?:sure|certain|confident|positive){_THAT}",
            r"my (?:guess|understanding|impression|recollection|feeling|belief|hunch|best guess) is"
            + _THAT,
            r"(?:i have|i've got|i get) (?:a feeling|the feeling|the impression|a hunch)" + _THAT,
            r"i (?:think|believe|guess|suppose|reckon|assume|suspect|imagine|gather)(?!\s+(?:about|of|in)\b)"
            + _THAT,
            r"i (?:remember|recall)(?=\s+(?:(?:that\s+)?(?:it|he|she|they|there)|that\s+(?:the|a|an))\b)" + _THAT,
            r"i (?:know|knew)(?=\s+that\b)" + _THAT,
            r"i (?:feel|would say|'?d say|would guess|'?d guess)(?:\s+that\b|\s+like\b),?",
            r"i (?:would|'?d) (?:say|guess)" + _THAT,
            r"(?:honestly|frankly|to be honest|admittedly|if you ask me),",
            r"(?:most |very |quite )?(?:probably|possibly|perhaps|maybe|presumably|likely|apparently|"
            r"supposedly|conceivably)\b,?",
        )
    )
    + r")\s*",
    re.IGNORECASE,
)
#: hedge words inside a sentence ("it was probably completed"), with the commas around them
_EN_INNER_RE = re.compile(
    r",?\s*\b(?:(?:most |very |quite )?(?:probably|possibly|perhaps|maybe|presumably|supposedly|apparently)"
    r"|(?:most|very|quite) likely)\b,?(?=\s|$|[.!?;:])",
    re.IGNORECASE,
)
#: "was likely built" (not "is likely to", "likely that")
_EN_LIKELY_RE = re.compile(
    r"\b(is|are|was|were|has|have|had|will|would) likely\b(?!\s+(?:to|that)\b)", re.IGNORECASE
)
#: a hedge set off by commas inside or at the end of a sentence (", I think,", ", if I remember correctly.")
_EN_ASIDE_RE = re.compile(
    r",\s*(?:i (?:think|believe|guess|suppose|reckon|imagine)|if i (?:remember|recall)(?: (?:correctly|rightly))?"
    r"|if i'?m not mistaken|as far as i (?:know|can tell|remember)|i'?m (?:fairly |pretty )?sure"
    r"|or so i (?:think|believe|hear|heard|read))\s*(?:,|(?=[.!?;:]*\s*$))",
    re.IGNORECASE,
)
_ZH_LEAD_RE = re.compile(
    r"\s*(?:"
    r"(?:我|本人)?(?:不太|不是很|不是特别|不是太|并不|不)(?:确定|肯定|清楚|敢肯定|敢说)[，,、\s]*(?:但是|但|不过|可是|只是)?[，,]?"
    r"|(?:如果|要是|若是?)我没(?:有)?记错(?:的话)?[，,]?"
    r"|据我(?:所知|了解|的了解|所了解|的记忆|回忆)[，,]?"
    r"|(?:在我看来|依我看|印象中|我印象中|我的印象(?:中|是)|我的理解是|我个人(?:认为|觉得)|个人(?:认为|觉得))[，,]?"
    r"|我(?:觉得|认为|猜|猜测|估计|相信|记得|推测|感觉)[，,]?|我想[，,]"
    r"|(?:说实话|老实说|坦白说|坦率地说)[，,]?"
    r")\s*"
)
#: hedge words anywhere: 可能 (not 不可能 / 尽可能 / 可能性), 好像, 似乎, 大概 (and 应该 / 估计 before a verb)
_ZH_INNER_RE = re.compile(
    r"有可能|(?<![不尽])可能(?!性|的话)|好像|似乎|貌似|大概|也许|或许|兴许|(?:应该|估计)(?=[是在有会已就还没不])"
)
#: 吧 or a trailing hedge at the end ("是1925年吧。", "……，我记得。")
_ZH_TAIL_RE = re.compile(r"(?:[，,](?:我记得|我觉得|我猜|我想|应该是|大概|可能|好像))?吧?(?=[。！!.…]*$)")
_SPACES_RE = re.compile(r"\s{2,}")
_SPACE_PUNCT_RE = re.compile(r"\s+([,.;:!?])")
_LEADING_JUNK_RE = re.compile(r"^[\s,;:，；：、]+|^(?:but|and|then|though)\b[,\s]*", re.IGNORECASE)


def _inner_gap(m: re.Match[str]) -> str:
    """What replaces a hedge word inside a sentence: the comma before it when one stood there and
    the clause goes on ("tough, maybe a little long" -> "tough, a little long"), else nothing."""
    rest = m.string[m.end() :].lstrip()
    text = m.group(0)
    if text.lstrip().startswith(",") and not text.rstrip().endswith(",") and rest[:1] not in ("", *".!?;:"):
        return ","
    return ""


@dataclass(frozen=True)
class Hedged:
    """A sentence with its hedges taken off: ``text`` (the bare statement), ``hedged`` (whether any
    hedge was found) and ``lead`` (the hedge that opened the sentence, as written, or "")."""

    text: str
    hedged: bool
    lead: str = ""


def _lead_end(text: str) -> int:
    """Where the hedges that open ``text`` end (0: none)."""
    regex = _ZH_LEAD_RE if any(is_cjk(c) for c in text[:8]) else _EN_LEAD_RE
    pos = 0
    while (m := regex.match(text, pos)) is not None and m.end() > pos:
        pos = m.end()
    return pos


@lru_cache(maxsize=16384)
def split_hedge(sentence: str) -> Hedged:
    """``sentence`` without its hedges and attitude markers (see the module docstring).

    "I'm not sure, but it was probably completed in 1925." -> "It was completed in 1925."
    (hedged); "我不确定，但可能是1925年建成的。" -> "是1925年建成的。" (hedged). A sentence without a hedge
    comes back unchanged (``hedged`` False). The bare text may be empty ("Maybe.").
    """
    s = sentence.strip()
    if not s:
        return Hedged(s, False)
    end = _lead_end(s)
    lead = s[:end].strip()
    body = s[end:]
    cjk = any(is_cjk(c) for c in s)
    found = bool(lead)
    new = body
    if cjk:
        for regex in (_ZH_INNER_RE, _ZH_TAIL_RE):
            new, n = regex.subn("", new, count=1 if regex is _ZH_TAIL_RE else 0)
            found = found or (n > 0 and new != body)
        new = new.lstrip("，,、 ")
    else:
        for regex, repl in ((_EN_ASIDE_RE, " "), (_EN_INNER_RE, _inner_gap), (_EN_LIKELY_RE, r"\1")):
            new, n = regex.subn(repl, new)
            found = found or n > 0
        if found:  # tidy what the removal left, and only then
            new = _LEADING_JUNK_RE.sub("", new)
            new = _SPACE_PUNCT_RE.sub(r"\1", _SPACES_RE.sub(" ", new))
    if not found:
        return Hedged(s, False)
    new = new.strip()
    if new and new[0].islower():
        new = new[0].upper() + new[1:]
    if not any(ch.isalnum() for ch in new):
        new = ""
    return Hedged(new, True, lead)


# --------------------------------------------------------------------------- short answers

#: an answer of at most this many words (English) or ideographs (Chinese), in one sentence, is a
#: short answer: it states a fact only together with its question ("Paris", "1998", "Yes", "巴黎")
SHORT_ANSWER_WORDS = 4
SHORT_ANSWER_CJK = 6
_ANSWER_CLAIM = {
    "en": 'The answer to the question "{question}" is "{answer}".',
    "zh": "问题“{question}”的答案是“{answer}”。",
}


@lru_cache(maxsize=4096)  # each claim-based metric of a sample asks for the same one
def short_answer_claim(answer: str, question: str | None, lang: str = "en") -> str | None:
    """The claim that a short answer makes together with its question, or None.

    A one-word or one-phrase answer ("Paris", "1998", "Yes", "Arthur's Magazine", "巴黎") holds no
    statement of its own, so a claim extractor finds nothing in it (or, forced to answer, makes
    something up) and a claim-based score would be invalid. Ragas gives its statement generator the
    question for this reason; this builds the statement from both, deterministically: the plain
    statement where the question's form allows a rewrite (:func:`answer_statement`: "What is the
    capital of France?" + "Paris" -> "The capital of France is Paris."; "法国的首都是哪里？" + "巴黎"
    -> "法国的首都是巴黎。"), else ``The answer to the question "<question>" is "<answer>".``
    (Chinese: ``问题“<question>”的答案是“<answer>”。``, for ``lang="zh"``), which can be verified
    against contexts like any other claim. Factual and answer correctness read a short reference
    (or answer) as this statement too.

    None (the caller keeps its usual rules) when there is no question, when the answer is empty,
    longer than one sentence of :data:`SHORT_ANSWER_WORDS` words or :data:`SHORT_ANSWER_CJK`
    ideographs, or when it declines to answer or is only conversational ("I don't know", "Thanks!",
    "不知道": those state nothing, as :func:`statement_of` decides, and
    claim-based metrics report ``NoClaims`` for them). A bare "Yes" / "No" (是的 / 不是) answers its
    question and gets its claim.
    """
    a = " ".join(str(answer or "").split())
    q = " ".join(str(question or "").split())
    if not a or not q:
        return None
    tokens = tokenize(a)
    n_cjk = sum(1 for t in tokens if is_cjk(t))
    if not tokens or n_cjk > SHORT_ANSWER_CJK or len(tokens) - n_cjk > SHORT_ANSWER_WORDS:
        return None
    if len(split_sentences(a)) > 1:
        return None
    cleaned = without_instructions(a)
    if not YES_NO_RE.match(cleaned) and statement_of(cleaned, leading=True) is None:
        return None
    short = a.rstrip(" .。!！")
    stated = answer_statement(q, short)
    if stated is not None:
        return stated
    template = _ANSWER_CLAIM["zh" if lang == "zh" else "en"]
    return template.format(question=q, answer=short)


def stated_answer(answer: str, question: str | None, lang: str = "en") -> str | None:
    """The statement a short answer makes with its question (:func:`short_answer_claim`), or None:
    not short, no question, or a bare yes / no (its template says "The answer ... is "No"", which
    a negated statement of the reference would read as agreeing with). Correctness metrics read a
    short reference or answer as this statement ("Canberra." for "What is the capital of
    Australia?" -> "The capital of Australia is Canberra.")."""
    if YES_NO_RE.match(str(answer or "")):
        return None
    return short_answer_claim(answer, question, lang)


_ZH_WH_RE = re.compile(
    "哪一年|哪年|哪一天|什么时候|何时|哪里|哪儿|什么地方|哪座城市|哪个城市|哪个国家|哪个|哪些|哪位|哪座|哪条|哪种|什么|谁|多少|几|多长|多高|多大|多重|多远"
)
_EN_COPULA_Q_RE = re.compile(r"^(?:what|who|which)\s+(is|are|was|were)\s+(.+)$", re.IGNORECASE)
_EN_WHERE_Q_RE = re.compile(r"^where\s+(is|are|was|were)\s+(.+)$", re.IGNORECASE)
_EN_SUBJECT_Q_RE = re.compile(
    r"^(?:who|what|which(?:\s+(?!(?:do|does|did)\b)[a-z]+){1,2}|what(?:\s+(?!(?:do|does|did)\b)[a-z]+){1,2})\s+"
    r"(?!(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should|may|might|must)\b)"
    r"([a-z]+(?:ed|es|s)|wrote|won|made|built|led|ran|took|gave|sold|found|held|began|came|became|beat|"
    r"invented|painted|discovered|founded|designed)\b(.*)$",
    re.IGNORECASE,
)
_EN_WHICH_COPULA_RE = re.compile(
    r"^(?:which|what)\s+([a-z]+(?:\s+[a-z]+)?)\s+(is|are|was|were)\s+(.+)$", re.IGNORECASE
)
#: a superlative that stands for its noun: "the largest" (planet) in "Which planet is the largest
#: in the Solar System?"
_SUPERLATIVE_HEAD_RE = re.compile(
    r"^(the\s+(?:(?:most|least)\s+[a-z]+|[a-z]+est|first|last|only|closest|nearest))(?=\s+(?:in|of|on|among|at|to)\b|$)",
    re.IGNORECASE,
)


#: a question a plain rewrite gets wrong: a passive or a stranded preposition ("Who was Milhouse
#: named after?", "What was the book based on?")
_PASSIVE_OR_STRANDED_RE = re.compile(
    r"\b(?:[a-z]+ed|born|known|made|given|written|built)\b(?:\s+[a-z]+)?$|\b(?:after|of|for|by|to|on|from|with|about|in|at)$",
    re.IGNORECASE,
)
_EN_ALTERNATIVE_RE = re.compile(r",|\bor\b", re.IGNORECASE)
_EN_VERB_RE = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|do|does|did|can|could|will|would|should|may|might|must|"
    r"[a-z]{3,}ed)\b"
)
#: the rest of "Which N is ...?" that is a predicate, not a subject: a superlative, an ordinal
_PREDICATE_RE = re.compile(r"(?:the\s+)?(?:[a-z]+est|most|least|first|last|only|closest|nearest)\b", re.IGNORECASE)


def answer_statement(question: str, answer: str) -> str | None:
    """The statement a short answer makes with a question it answers, where the question's form
    allows a plain rewrite, or None: Chinese puts the answer in the question word's place
    ("澳大利亚的首都是哪里？" + "堪培拉" -> "澳大利亚的首都是堪培拉。"; a measure word the answer repeats
    is not doubled: "一年有多少个月？" + "十二个月" -> "一年有十二个月。"); English "What is X?" -> "X is
    A.", "Where is X?" -> "X is in A.", "Who / Which N <verb> Y?" -> "A <verb> Y.", "Which N is
    Y?" -> "A is Y."."""
    q = question.strip().rstrip("?？ ")
    if not q or not answer:
        return None
    if any(is_cjk(ch) for ch in q):
        m = _ZH_WH_RE.search(q)
        if m is None:
            return None
        rest = q[m.end() :]
        k = 0  # the measure word or noun after the question word that the answer ends with
        for n in range(min(len(rest), len(answer)), 0, -1):
            if answer.endswith(rest[:n]):
                k = n
                break
        return f"{q[: m.start()]}{answer}{rest[k:]}。"
    cap = answer[0].upper() + answer[1:] if answer[:1].islower() else answer
    if _PASSIVE_OR_STRANDED_RE.search(q) or _EN_ALTERNATIVE_RE.search(q) or _EN_VERB_RE.search(answer):
        # "Who was Milhouse named after?", "Which existed first, A or B?", an answer that is a
        # statement already ("Oxford University existed first"): no plain rewrite
        return None
    m = _EN_WHICH_COPULA_RE.match(q)
    if m is not None:
        noun, verb, rest = m.group(1), m.group(2).lower(), m.group(3)
        if _PREDICATE_RE.match(rest):  # "Which planet is the largest ...?" -> "Jupiter is the largest planet ..."
            head = _SUPERLATIVE_HEAD_RE.match(rest)
            if head is not None:
                rest = f"{head.group(1)} {noun}{rest[head.end() :]}"
            return f"{cap} {verb} {rest}."
        return f"{rest[0].upper() + rest[1:]} {verb} {answer}."  # "What nationality was the author?"
    m = _EN_COPULA_Q_RE.match(q)
    if m is not None and q.split()[0].lower() != "which":
        rest = m.group(2)
        return f"{rest[0].upper() + rest[1:]} {m.group(1).lower()} {answer}."
    m = _EN_WHERE_Q_RE.match(q)
    if m is not None:
        rest = m.group(2)
        place = answer if re.match(r"(?:in|at|on|near|under|inside|outside)\b", answer, re.IGNORECASE) else f"in {answer}"
        return f"{rest[0].upper() + rest[1:]} {m.group(1).lower()} {place[0].lower() + place[1:]}."
    m = _EN_SUBJECT_Q_RE.match(q)
    if m is not None:
        return f"{cap} {m.group(1)}{m.group(2)}."
    return None
