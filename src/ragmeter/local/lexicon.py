"""Word lists the local judge reads: stop words, negations, antonyms, filler and evasive phrases.

English and Chinese. Small on purpose: each list is what the support and relevance features need,
no more. All English entries are lowercase; Chinese entries are compared as substrings.
"""

from __future__ import annotations

import re

EN_STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been before
    being below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just let me more most my myself of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves s t d ll m re ve y also may might must
    shall via upon among amongst within without onto per whose whether yet however thus therefore
    one ones well like get got make made many much lot lots really quite rather since still even
    ever every etc i'm it's that's there's he's she's they're we're you're i've we've they've
    known called named several various including include includes included
    """.split()
)

#: Words that flip a statement's polarity.
EN_NEGATIONS: frozenset[str] = frozenset(
    """
    not no never none nobody nothing neither nor cannot cant dont doesnt didnt isnt arent wasnt
    werent wont wouldnt shouldnt couldnt hasnt havent hadnt without lack lacks lacked fail fails
    failed unable
    """.split()
)
#: Chinese negation markers (substring match). 没有 / 不是 are covered by 没 / 不.
ZH_NEGATIONS: tuple[str, ...] = ("不", "没", "无", "非", "未", "别", "否", "勿")
#: Chinese words that contain a negation character but do not negate.
ZH_NEGATION_EXCEPTIONS: tuple[str, ...] = (
    "不同",
    "不仅",
    "不但",
    "不断",
    "不过",
    "无论",
    "非常",
    "并非常",
    "未来",
    "别人",
    "别的",
    "特别",
    "区别",
    "分别",
    "是否",
    "否则",
    "无数",
    "不少",
    "差不多",
    "非洲",
    "未知",
)

_EN_ANTONYM_PAIRS: tuple[tuple[str, str], ...] = (
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("rise", "fall"),
    ("before", "after"),
    ("first", "last"),
    ("largest", "smallest"),
    ("larger", "smaller"),
    ("biggest", "smallest"),
    ("bigger", "smaller"),
    ("highest", "lowest"),
    ("higher", "lower"),
    ("high", "low"),
    ("older", "younger"),
    ("oldest", "youngest"),
    ("more", "less"),
    ("most", "least"),
    ("earlier", "later"),
    ("earliest", "latest"),
    ("early", "late"),
    ("true", "false"),
    ("alive", "dead"),
    ("north", "south"),
    ("east", "west"),
    ("northern", "southern"),
    ("eastern", "western"),
    ("win", "lose"),
    ("won", "lost"),
    ("male", "female"),
    ("men", "women"),
    ("man", "woman"),
    ("positive", "negative"),
    ("maximum", "minimum"),
    ("above", "below"),
    ("inside", "outside"),
    ("open", "closed"),
    ("public", "private"),
    ("legal", "illegal"),
    ("safe", "dangerous"),
    ("success", "failure"),
    ("successful", "unsuccessful"),
    ("accept", "reject"),
    ("accepted", "rejected"),
    ("always", "never"),
    ("all", "none"),
    ("long", "short"),
    ("longer", "shorter"),
    ("longest", "shortest"),
    ("fast", "slow"),
    ("faster", "slower"),
    ("hot", "cold"),
    ("warm", "cool"),
    ("strong", "weak"),
    ("rich", "poor"),
    ("cheap", "expensive"),
    ("heavy", "light"),
    ("wet", "dry"),
    ("start", "end"),
    ("started", "ended"),
    ("born", "died"),
    ("same", "different"),
    ("majority", "minority"),
    ("internal", "external"),
    ("import", "export"),
    ("buy", "sell"),
    ("bought", "sold"),
    ("add", "remove"),
    ("added", "removed"),
    ("allow", "forbid"),
    ("allowed", "banned"),
    ("support", "oppose"),
    ("supported", "opposed"),
)
_ZH_ANTONYM_PAIRS: tuple[tuple[str, str], ...] = (
    ("增加", "减少"),
    ("上升", "下降"),
    ("之前", "之后"),
    ("最大", "最小"),
    ("最高", "最低"),
    ("最早", "最晚"),
    ("第一", "最后"),
    ("男性", "女性"),
    ("正确", "错误"),
    ("成功", "失败"),
    ("北部", "南部"),
    ("东部", "西部"),
    ("支持", "反对"),
    ("允许", "禁止"),
    ("更多", "更少"),
    ("买入", "卖出"),
    ("出生", "去世"),
    ("开始", "结束"),
    ("相同", "不同"),
    ("安全", "危险"),
)


def _antonym_map(pairs: tuple[tuple[str, str], ...]) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for a, b in pairs:
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


EN_ANTONYMS: dict[str, frozenset[str]] = _antonym_map(_EN_ANTONYM_PAIRS)
ZH_ANTONYMS: dict[str, frozenset[str]] = _antonym_map(_ZH_ANTONYM_PAIRS)

#: Chinese characters that carry little content (function words); a bigram made only of them is
#: not a content term.
ZH_STOPCHARS: frozenset[str] = frozenset(
    "的了是在和与及也就都而着或一个这那之其以于为对把被从到上下中很更最又还并且呢吗吧啊呀嘛么们你我他她它有"
)

# Whole sentences that carry no claim: greetings, offers, sign-offs, hedges about the answer.
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
    r"(?:我不知道|不知道|不清楚|不确定|无法(?:回答|确定|判断|提供|得知|获取|知道)|不能(?:回答|确定|提供)|"
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
