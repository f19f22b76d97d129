"""Build the constructed conversation sets in data/conversations/ (labels by construction).

    python scripts/build_conversation_data.py

Deterministic (no randomness; written for ragmeter, same licence as the project). Each set is
English and Chinese:

- ``followups_constructed.jsonl``: a history and a follow-up question, with the standalone rewrite
  that the construction makes (``gold``): pronoun follow-ups of a thing, a person or a plural topic
  ("How tall is it?" -> "How tall is the Eiffel Tower?"), ellipses ("What about Germany?"), the
  most recent of two topics, follow-ups that need no rewrite, and implicit references without an
  anaphor ("When did the construction start?"), which a rule cannot resolve.
- ``retention_constructed.jsonl``: a user states facts, then (directly or after another exchange)
  the assistant's last reply keeps them (``label`` 1) or forgets one (0): a number restated
  otherwise, a negation dropped, a fact asked for again, or a recommendation the fact rules out
  without restating it (``implied``).
- ``relevancy_constructed.jsonl``: pairs of one conversation whose last reply answers the follow-up
  and the same conversation whose last reply answers another question (``preferred``: the
  relevant one).
- ``completeness_constructed.jsonl``: pairs of a conversation with two requests where both are met
  and the same conversation where the second gets an evasive reply or a promise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "data" / "conversations"

EN_THINGS = [
    ("the Eiffel Tower", "1889", "330"), ("the Golden Gate Bridge", "1937", "227"),
    ("the Colosseum", "80", "48"), ("the Louvre", "1793", "21"), ("Big Ben", "1859", "96"),
    ("the Sydney Opera House", "1973", "65"), ("the Taj Mahal", "1653", "73"),
    ("the Burj Khalifa", "2010", "828"), ("the Statue of Liberty", "1886", "93"),
    ("the Parthenon", "432 BC", "14"), ("the Space Needle", "1962", "184"),
    ("the Leaning Tower of Pisa", "1372", "56"), ("the Brandenburg Gate", "1791", "26"),
    ("the Empire State Building", "1931", "443"), ("the CN Tower", "1976", "553"),
    ("the Atomium", "1958", "102"),
]  # fmt: skip
EN_PEOPLE = [
    ("Marie Curie", "she", "her"), ("Albert Einstein", "he", "his"), ("Ada Lovelace", "she", "her"),
    ("Isaac Newton", "he", "his"), ("Frida Kahlo", "she", "her"), ("Nelson Mandela", "he", "his"),
    ("Jane Austen", "she", "her"), ("Charles Darwin", "he", "his"), ("Rosalind Franklin", "she", "her"),
    ("Alan Turing", "he", "his"),
]  # fmt: skip
EN_PLURALS = ["penguins", "dolphins", "honeybees", "koalas", "wolves", "elephants", "octopuses", "owls"]
EN_COUNTRIES = [
    "France",
    "Germany",
    "Japan",
    "Brazil",
    "Canada",
    "Italy",
    "Spain",
    "Kenya",
    "India",
    "Mexico",
]

ZH_THINGS = [
    ("埃菲尔铁塔", "1889", "330"), ("故宫", "1420", "12"), ("长城", "公元前7世纪", "8"), ("黄鹤楼", "1985", "51"),
    ("布达拉宫", "7世纪", "117"), ("东方明珠塔", "1994", "468"), ("颐和园", "1750", "41"), ("天坛", "1420", "38"),
    ("大雁塔", "652", "64"), ("岳阳楼", "1880", "19"), ("滕王阁", "1989", "57"), ("广州塔", "2010", "600"),
]  # fmt: skip
ZH_PEOPLE = [
    ("李白", "他"), ("苏轼", "他"), ("居里夫人", "她"), ("鲁迅", "他"), ("屠呦呦", "她"), ("孔子", "他"),
    ("林徽因", "她"), ("杜甫", "他"), ("李清照", "她"), ("钱学森", "他"),
]  # fmt: skip
ZH_PLURALS = ["大熊猫", "企鹅", "蜜蜂", "海豚", "狼", "大象"]
ZH_COUNTRIES = ["法国", "德国", "日本", "巴西", "加拿大", "意大利", "印度", "埃及", "西班牙", "墨西哥"]


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def _poss(text: str) -> str:
    return text + ("'" if text.endswith("s") else "'s")


def followups() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def add(lang: str, category: str, history: list[tuple[str, str]], question: str, gold: str) -> None:
        rows.append(
            {
                "id": f"{lang}-{category}-{len(rows)}",
                "lang": lang,
                "category": category,
                "history": [list(m) for m in history],
                "question": question,
                "gold": gold,
            }
        )

    things = [
        ("When was it built?", "When was {E} built?"),
        ("How tall is it?", "How tall is {E}?"),
        ("Where is it?", "Where is {E}?"),
        ("What is its history?", "What is {P} history?"),
        ("Who designed it?", "Who designed {E}?"),
        ("Is it open to visitors?", "Is {E} open to visitors?"),
    ]
    for i, (e, year, _) in enumerate(EN_THINGS):
        intro = ("Tell me about {E}.", "What is {E}?", "I'd like to know about {E}.")[i % 3].format(E=e)
        history = [("user", intro), ("assistant", f"{_cap(e)} is a well-known sight, completed in {year}.")]
        for q, gold in things:
            add("en", "pronoun", history, q, gold.format(E=e, P=_poss(e)))
        other = EN_THINGS[(i + 5) % len(EN_THINGS)][0]
        two = [
            ("user", f"Tell me about {other}."),
            ("assistant", f"{_cap(other)} is a famous landmark."),
            ("user", f"And {e}?"),
            ("assistant", f"{_cap(e)} was completed in {year}."),
        ]
        add("en", "recency", two, "How tall is it?", f"How tall is {e}?")
        add(
            "en",
            "standalone",
            history,
            "What is the tallest mountain in the world?",
            "What is the tallest mountain in the world?",
        )
        add(
            "en",
            "implicit",
            history,
            "When did the construction start?",
            f"When did the construction of {e} start?",
        )
    person = [
        ("When was {s} born?", "When was {E} born?"),
        ("What is {s} famous for?", "What is {E} famous for?"),
        ("Where did {s} study?", "Where did {E} study?"),
        ("What was {p} greatest achievement?", "What was {P} greatest achievement?"),
    ]
    for i, (e, s, p) in enumerate(EN_PEOPLE):
        intro = ("Who was {E}?", "Tell me about {E}.")[i % 2].format(E=e)
        history = [("user", intro), ("assistant", f"{e} is remembered for important work.")]
        for q, gold in person:
            add("en", "pronoun", history, q.format(s=s, p=p), gold.format(E=e, P=_poss(e)))
    plural = [
        ("What do they eat?", "What do {E} eat?"),
        ("Where do they live?", "Where do {E} live?"),
        ("How long do they live?", "How long do {E} live?"),
    ]
    for e in EN_PLURALS:
        history = [("user", f"Tell me about {e}."), ("assistant", f"{_cap(e)} are fascinating animals.")]
        for q, gold in plural:
            add("en", "pronoun", history, q, gold.format(E=e))
    ellipses = [
        ("What is the capital of {C}?", "What about {D}?", "What is the capital of {D}?"),
        ("What is the population of {C}?", "And {D}?", "What is the population of {D}?"),
        ("What language is spoken in {C}?", "How about {D}?", "What language is spoken in {D}?"),
    ]
    for i, c in enumerate(EN_COUNTRIES):
        d = EN_COUNTRIES[(i + 3) % len(EN_COUNTRIES)]
        for first, q, gold in ellipses:
            add("en", "ellipsis", [("user", first.format(C=c)), ("assistant", "Here is the answer.")], q.format(D=d),
                gold.format(D=d))  # fmt: skip

    zthings = [
        ("它是什么时候建成的？", "{E}是什么时候建成的？"),
        ("它有多高？", "{E}有多高？"),
        ("它在哪里？", "{E}在哪里？"),
        ("它的历史有多长？", "{E}的历史有多长？"),
        ("谁设计了它？", "谁设计了{E}？"),
        ("它对游客开放吗？", "{E}对游客开放吗？"),
    ]
    for i, (e, year, _) in enumerate(ZH_THINGS):
        intro = ("介绍一下{E}。", "{E}是什么？", "我想了解{E}。")[i % 3].format(E=e)
        history = [("user", intro), ("assistant", f"{e}是著名的景点，建成于{year}年。")]
        for q, gold in zthings:
            add("zh", "pronoun", history, q, gold.format(E=e))
        other = ZH_THINGS[(i + 5) % len(ZH_THINGS)][0]
        two = [("user", f"介绍一下{other}。"), ("assistant", f"{other}是著名的地标。"), ("user", f"{e}呢？"),
               ("assistant", f"{e}建成于{year}年。")]  # fmt: skip
        add("zh", "recency", two, "它有多高？", f"{e}有多高？")
        add("zh", "standalone", history, "世界上最高的山是哪座？", "世界上最高的山是哪座？")
        add("zh", "implicit", history, "游客多吗？", f"{e}游客多吗？")
    zperson = [
        ("{s}出生在哪一年？", "{E}出生在哪一年？"),
        ("{s}最有名的作品是什么？", "{E}最有名的作品是什么？"),
        ("{s}在哪里生活过？", "{E}在哪里生活过？"),
        ("{s}的主要成就是什么？", "{E}的主要成就是什么？"),
    ]
    for i, (e, s) in enumerate(ZH_PEOPLE):
        intro = ("{E}是谁？", "介绍一下{E}。")[i % 2].format(E=e)
        history = [("user", intro), ("assistant", f"{e}是一位著名的人物。")]
        for q, gold in zperson:
            add("zh", "pronoun", history, q.format(s=s), gold.format(E=e))
    zplural = [
        ("它们吃什么？", "{E}吃什么？"),
        ("它们生活在哪里？", "{E}生活在哪里？"),
        ("它们能活多久？", "{E}能活多久？"),
    ]
    for e in ZH_PLURALS:
        history = [("user", f"介绍一下{e}。"), ("assistant", f"{e}是很有意思的动物。")]
        for q, gold in zplural:
            add("zh", "pronoun", history, q, gold.format(E=e))
    zellipses = [
        ("{C}的首都是哪里？", "{D}呢？", "{D}的首都是哪里？"),
        ("{C}的人口是多少？", "那{D}呢？", "{D}的人口是多少？"),
        ("{C}说什么语言？", "那么{D}呢？", "{D}说什么语言？"),
    ]
    for i, c in enumerate(ZH_COUNTRIES):
        d = ZH_COUNTRIES[(i + 3) % len(ZH_COUNTRIES)]
        for first, q, gold in zellipses:
            add(
                "zh",
                "ellipsis",
                [("user", first.format(C=c)), ("assistant", "答案如下。")],
                q.format(D=d),
                gold.format(D=d),
            )
    return rows


def _conversation(
    lang: str, category: str, rid: str, messages: list[tuple[str, str]], **extra: Any
) -> dict[str, Any]:
    return {
        "id": rid,
        "lang": lang,
        "category": category,
        "messages": [{"role": r, "content": t} for r, t in messages],
        **extra,
    }


def retention() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    middle_en = [
        ("user", "What else is nearby?"),
        ("assistant", "There is a large park and a museum nearby."),
    ]
    middle_zh = [("user", "附近还有什么？"), ("assistant", "附近有一个大公园和一座博物馆。")]
    names_en = ["Anna", "Ben", "Chloe", "David", "Elena", "Farid"]
    cities_en = ["Lyon", "Leeds", "Porto", "Graz", "Ghent", "Turin"]
    names_zh = ["王芳", "李明", "张伟", "刘洋", "陈静", "赵磊"]
    cities_zh = ["杭州", "成都", "西安", "南京", "苏州", "厦门"]
    for i in range(6):
        n, n2, b = 2 + i % 3, 5 + i % 3, 200 + 50 * i
        en = [
            ("number", f"I'm travelling with {n} children and my budget is {b} euros. Can you suggest a hotel?",
             f"For a family with {n} children, the Hotel Lumière fits your budget of {b} euros.",
             f"For a family with {n2} children, the Hotel Lumière fits your budget of {b} euros."),
            ("number", f"I'm travelling with {n} children and my budget is {b} euros. Can you suggest a hotel?",
             f"The Hotel Lumière fits your budget of {b} euros.",
             f"The Hotel Lumière fits your budget of {b + 300} euros."),
            ("negation", "I don't eat meat. What should I order tonight?",
             "Since you don't eat meat, try the mushroom risotto.",
             "Since you eat meat, try the beef stew."),
            ("reasked", f"My name is {names_en[i]} and I live in {cities_en[i]}. I need a plumber.",
             f"Thanks, {names_en[i]}. Here are three plumbers in {cities_en[i]}.",
             "Sure. Which city do you live in?"),
            ("reasked", f"My budget is {b} euros. Can you suggest a hotel?",
             f"The Hotel Lumière costs less than {b} euros a night.",
             "Happy to help. What is your budget?"),
            ("implied", "I use a wheelchair. How do I get to the top of the tower?",
             "Take the lift from the ground floor straight to the top.",
             "Climb the 674 steps to the second floor, then take the lift."),
            ("implied", "I'm allergic to peanuts. Can you suggest a snack?",
             "Try apple slices with yogurt.",
             "Try celery sticks with peanut butter."),
        ]  # fmt: skip
        zh = [
            ("number", f"我带{n}个孩子出行，预算是{b}欧元。能推荐一家酒店吗？",
             f"您带{n}个孩子，光明酒店符合您{b}欧元的预算。", f"您带{n2}个孩子，光明酒店符合您{b}欧元的预算。"),
            ("number", f"我带{n}个孩子出行，预算是{b}欧元。能推荐一家酒店吗？",
             f"光明酒店符合您{b}欧元的预算。", f"光明酒店符合您{b + 300}欧元的预算。"),
            ("negation", "我不吃肉。今晚该点什么？", "您不吃肉，推荐蘑菇烩饭。", "您吃肉，推荐红烧牛肉。"),
            ("reasked", f"我叫{names_zh[i]}，住在{cities_zh[i]}。我需要一位水管工。",
             f"好的，{names_zh[i]}，这是{cities_zh[i]}的三位水管工。", "好的。请问您住在哪个城市？"),
            ("reasked", f"我的预算是{b}欧元。能推荐一家酒店吗？", f"光明酒店每晚不到{b}欧元。", "乐意帮忙。请问您的预算是多少？"),
            ("implied", "我坐轮椅。怎么到塔顶？", "从一楼乘电梯直达塔顶。", "沿着674级台阶爬到二层，再换乘电梯。"),
            ("implied", "我对花生过敏。能推荐一种零食吗？", "试试酸奶配苹果片。", "试试花生酱配芹菜条。"),
        ]  # fmt: skip
        for lang, items, middle in (("en", en, middle_en), ("zh", zh, middle_zh)):
            for k, (category, fact, kept, forgot) in enumerate(items):
                if i % 2 and category in ("negation", "implied") and k % 2:
                    continue
                for gap in (False, True):
                    for label, reply in ((1, kept), (0, forgot)):
                        ack = "Noted." if lang == "en" else "好的，记下了。"
                        msgs = [("user", fact)]
                        if gap:
                            msgs += [("assistant", ack), *middle]
                        msgs.append(("assistant", reply))
                        rid = f"{lang}-{category}-{i}-{k}-{'gap' if gap else 'direct'}-{label}"
                        rows.append(_conversation(lang, category, rid, msgs, label=label))
    return rows


EN_FACTS = {
    "When was it built?": "{E} was built in {Y}.",
    "How tall is it?": "{E} is {H} metres tall.",
}
ZH_FACTS = {"它是什么时候建成的？": "{E}建成于{Y}年。", "它有多高？": "{E}高{H}米。"}


def relevancy() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for lang, things, facts, intro in (
        ("en", EN_THINGS, EN_FACTS, "Tell me about {E}."),
        ("zh", ZH_THINGS, ZH_FACTS, "介绍一下{E}。"),
    ):
        for i, (e, year, height) in enumerate(things):
            other, oyear, oheight = things[(i + 3) % len(things)]
            for j, (q, fact) in enumerate(facts.items()):
                right = fact.format(E=_cap(e) if lang == "en" else e, Y=year, H=height)
                off_q = list(facts)[1 - j]
                off = facts[off_q].format(E=_cap(other) if lang == "en" else other, Y=oyear, H=oheight)
                base = [("user", intro.format(E=e)), ("assistant", _intro_reply(lang, e)), ("user", q)]
                rows.append(
                    {
                        "id": f"{lang}-relevancy-{i}-{j}",
                        "lang": lang,
                        "a": [{"role": r, "content": t} for r, t in [*base, ("assistant", right)]],
                        "b": [{"role": r, "content": t} for r, t in [*base, ("assistant", off)]],
                        "preferred": "a",
                    }
                )
    return _swap_half(rows)


def _intro_reply(lang: str, e: str) -> str:
    return f"{_cap(e)} is a well-known sight." if lang == "en" else f"{e}是著名的景点。"


def completeness() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    evasive = {
        "en": ["I'm not sure about that.", "I will look into it later.", "Let's talk about something else."],
        "zh": ["这个我不太清楚。", "我之后再帮您查。", "我们聊点别的吧。"],
    }
    for lang, things in (("en", EN_THINGS), ("zh", ZH_THINGS)):
        for i, (e, year, height) in enumerate(things):
            if lang == "en":
                first, second = f"When was {e} built?", f"And how tall is {e}?"
                a1, a2 = f"{_cap(e)} was built in {year}.", f"{_cap(e)} is {height} metres tall."
            else:
                first, second = f"{e}是什么时候建成的？", f"{e}有多高？"
                a1, a2 = f"{e}建成于{year}年。", f"{e}高{height}米。"
            bad = evasive[lang][i % 3]
            base = [("user", first), ("assistant", a1), ("user", second)]
            rows.append(
                {
                    "id": f"{lang}-completeness-{i}",
                    "lang": lang,
                    "a": [{"role": r, "content": t} for r, t in [*base, ("assistant", a2)]],
                    "b": [{"role": r, "content": t} for r, t in [*base, ("assistant", bad)]],
                    "preferred": "a",
                }
            )
    return _swap_half(rows)


def _swap_half(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for k, r in enumerate(rows):
        if k % 2:
            r["a"], r["b"], r["preferred"] = r["b"], r["a"], "b"
    return rows


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in (
        ("followups_constructed.jsonl", followups()),
        ("retention_constructed.jsonl", retention()),
        ("relevancy_constructed.jsonl", relevancy()),
        ("completeness_constructed.jsonl", completeness()),
    ):
        path = OUT / name
        with path.open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(f"{path.relative_to(OUT.parents[1])}: {len(rows)} rows")


if __name__ == "__main__":
    main()
