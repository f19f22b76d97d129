"""Word lists the local judge's text features read: stop words, negations, antonyms.

English and Chinese. Small on purpose: each list is what the support and relevance features need,
no more. All English entries are lowercase; Chinese entries are compared as substrings.
"""

from __future__ import annotations

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
    # converses of winning: "X lost to Y" says what "Y defeated X" says (frames: with the
    # arguments exchanged, two flips)
    ("defeated", "lost"),
    ("beat", "lost"),
    ("beaten", "lost"),
    ("heavier", "lighter"),
    ("nearer", "farther"),
    ("closer", "farther"),
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
    ("raise", "lower"),
    ("rose", "fell"),
    ("grow", "shrink"),
    ("gain", "lose"),
    ("widen", "narrow"),
    ("rising", "falling"),
    ("increasing", "decreasing"),
    ("growing", "shrinking"),
    ("raised", "lowered"),
    # a state kept against a change: "did not change" says what "stayed" says (with the negation,
    # two flips)
    ("stay", "change"),
    ("stayed", "changed"),
    ("remain", "change"),
    ("remained", "changed"),
    ("unchanged", "changed"),
    ("pass", "fail"),
    ("passed", "failed"),
    ("approve", "reject"),
    ("approved", "rejected"),
    ("permit", "prohibit"),
    ("permitted", "prohibited"),
    ("allowed", "prohibited"),
    ("allowed", "forbidden"),
    ("present", "absent"),
    ("include", "exclude"),
    ("included", "excluded"),
    ("possible", "impossible"),
    ("available", "unavailable"),
    ("known", "unknown"),
    ("likely", "unlikely"),
    ("agree", "disagree"),
    ("good", "bad"),
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
    ("升高", "降低"),
    ("提高", "降低"),
    ("增长", "下降"),
    ("战胜", "输给"),
    ("击败", "输给"),
    ("打败", "输给"),
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
#: Chinese function characters that stand for one another in the same place: 在太阳系里 / 在太阳系中
#: / 在太阳系内, 成立于 / 成立在; one put in another's place is no swap (support.swap_candidates)
ZH_EQUIVALENT_CHARS: tuple[frozenset[str], ...] = tuple(
    frozenset(group) for group in ("里中内", "于在", "和与及跟同")
)

ZH_STOPCHARS: frozenset[str] = frozenset(
    "的了是在和与及也就都而着或一个这那之其以于为对把被从到上下中很更最又还并且呢吗吧啊呀嘛么们你我他她它有"
)
