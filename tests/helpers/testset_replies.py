"""Scripted replies to ragmeter's test-set prompts (testset_questions, testset_multi_hop,
testset_closed_book), used by the loopback server's default responder and by FakeProvider tests.

- questions: one deliberately unsupported item first ("hallucinated", which verification must
  drop), then n items whose answer is a sentence of the context and whose question names its
  first words;
- multi-hop: the answer joins the first sentences of both contexts;
- closed book: "known" is true only for questions that mention the Eiffel Tower (so a test can
  check the answerable-without-context filter).
"""

from __future__ import annotations

import json
import re
from typing import Any

HALLUCINATION = {
    "en": "The tower was painted bright green by Martian engineers in 1066.",
    "zh": "这座建筑由火星工程师在1066年漆成了亮绿色。",
}


def _user(req: dict[str, Any]) -> str:
    for m in req.get("messages") or []:
        if m.get("role") == "user":
            return str(m.get("content", ""))
    return ""


def _schema_name(req: dict[str, Any]) -> str:
    rf = req.get("response_format")
    if isinstance(rf, dict) and isinstance(rf.get("json_schema"), dict):
        return str(rf["json_schema"].get("name", ""))
    return ""


def _after(text: str, markers: tuple[str, ...], ends: tuple[str, ...]) -> str:
    best, blen = -1, 0
    for m in markers:
        i = text.rfind(m)
        if i > best:
            best, blen = i, len(m)
    if best < 0:
        return ""
    rest = text[best + blen :]
    cut = min([j for j in (rest.find(e) for e in ends) if j >= 0] or [len(rest)])
    return rest[:cut].strip()


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?。！？])\s*|\n+", text.strip())
    return [p.strip() for p in parts if len(p.strip()) >= 8 and p.strip()[-1:] in ".!?。！？"]


def _zh(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


def _question(sentence: str, style: str) -> str:
    if _zh(sentence):
        return f"关于“{sentence[:12]}”，文中是怎么说的？"
    words = re.findall(r"[\w'-]+", sentence)[:7]
    q = f"What does the document say about {' '.join(words)}?"
    if "short" in style:
        return " ".join(w.lower() for w in words[:5])
    if "typo" in style or "misspell" in style:
        return q.replace("document", "documnet")
    if "conversational" in style:
        return "hey, quick one: " + q[0].lower() + q[1:]
    return q


def testset_reply(req: dict[str, Any]) -> str | None:
    """The reply to a test-set prompt, or None when ``req`` is not one."""
    name = _schema_name(req)
    text = _user(req)
    if name == "testset_closed_book" or (not name and '"known"' in text):
        q = _after(text, ("Question:", "问题："), ("\nOutput:", "\n输出："))
        known = "eiffel" in q.lower() or "埃菲尔" in q
        return json.dumps(
            {"answer": "It is 330 metres tall and was built in 1889." if known else "", "known": known}
        )
    multi = name == "testset_multi_hop" or (not name and ("Context A:" in text or "上下文 A：" in text))
    single = name == "testset_questions" or (
        not name and ("Kind of question:" in text or "问题类型：" in text)
    )
    if not (multi or single):
        return None
    nums = re.findall(r"(?:Number of questions:|问题数量：)\s*(\d+)", text)
    n = int(nums[-1]) if nums else 1
    if multi:
        a = _after(text, ("Context A:", "上下文 A："), ("\nContext B:", "\n上下文 B："))
        b = _after(text, ("Context B:", "上下文 B："), ("\nNumber of questions:", "\n问题数量："))
        sa, sb = (_sentences(a) or [a])[0], (_sentences(b) or [b])[0]
        items = [
            {
                "question": _question(sa, "").rstrip("?？") + " and " + _question(sb, ""),
                "answer": f"{sa} {sb}",
            }
        ]
        return json.dumps({"items": items * n}, ensure_ascii=False)
    context = _after(text, ("Context:", "上下文："), ("\nNumber of questions:", "\n问题数量："))
    style = _after(text, ("Kind of question:", "问题类型："), ("\n",)).lower()
    sentences = _sentences(context) or [context]
    lang = "zh" if _zh(context) else "en"
    items = [{"question": _question(HALLUCINATION[lang], style), "answer": HALLUCINATION[lang]}]
    for s in sentences[:n]:
        items.append({"question": _question(s, style), "answer": s})
    return json.dumps({"items": items}, ensure_ascii=False)
