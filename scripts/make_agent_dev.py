# ruff: noqa: E501  (the trajectories are data: one message a line)
"""Writes data/dev/agent_trajectories_dev.jsonl and agent_trajectories_heldout.jsonl: labelled agent
trajectories for `ragmeter agreement` (docs/agents.md). Every trajectory, and its label, was written
by hand for ragmeter, in English and Chinese; labels are by construction: 1 when the agent achieved
what the user asked (for agent_goal_success) or chose the right tool at every call (for
tool_selection), else 0. The dev set was written before any judge scored it, and the local judge's
goal reading was tuned on it; the held-out set was written after that tuning and never tuned on.

    python scripts/make_agent_dev.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DEV = Path(__file__).resolve().parents[1] / "data" / "dev" / "agent_trajectories_dev.jsonl"
HELDOUT = DEV.with_name("agent_trajectories_heldout.jsonl")

WEATHER = {
    "name": "get_weather",
    "description": "Current weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
SEARCH = {
    "name": "web_search",
    "description": "Search the web; returns snippets.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}
DOCS = {
    "name": "search_docs",
    "description": "Search the company's product documentation.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}
BOOK = {
    "name": "book_table",
    "description": "Book a restaurant table.",
    "parameters": {
        "type": "object",
        "properties": {
            "restaurant": {"type": "string"},
            "people": {"type": "integer"},
            "time": {"type": "string"},
        },
        "required": ["restaurant", "people", "time"],
    },
}
CALC = {
    "name": "calculator",
    "description": "Evaluate an arithmetic expression.",
    "parameters": {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
}
ORDER = {
    "name": "get_order",
    "description": "Look up an order by its number.",
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
}
REFUND = {
    "name": "refund_order",
    "description": "Refund an order.",
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
}
EMAIL = {
    "name": "send_email",
    "description": "Send an email.",
    "parameters": {
        "type": "object",
        "properties": {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}},
        "required": ["to", "body"],
    },
}
FX = {
    "name": "convert_currency",
    "description": "Convert an amount between currencies at today's rate.",
    "parameters": {
        "type": "object",
        "properties": {"amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}},
        "required": ["amount", "from", "to"],
    },
}
TOOLS = [WEATHER, SEARCH, DOCS, BOOK, CALC, ORDER, REFUND, EMAIL, FX]


def conv(*turns: tuple[str, list[tuple[str, dict[str, Any], str]], str]) -> list[dict[str, Any]]:
    """Messages of turns (user message, [(tool, arguments, result)], final answer)."""
    out: list[dict[str, Any]] = []
    n = 0
    for user, calls, answer in turns:
        out.append({"role": "user", "content": user})
        for name, args, result in calls:
            n += 1
            cid = f"call_{n}"
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
                        }
                    ],
                }
            )
            out.append({"role": "tool", "tool_call_id": cid, "content": result})
        if answer is not None:
            out.append({"role": "assistant", "content": answer})
    return out


RECORDS: list[dict[str, Any]] = []
HELD: list[dict[str, Any]] = []


def add(
    metric: str,
    lang: str,
    label: int,
    category: str,
    messages: list[dict[str, Any]],
    *,
    into: list[dict[str, Any]] = RECORDS,
    **extra: Any,
) -> None:
    n = sum(1 for r in into if r["metric"] == metric and r["lang"] == lang) + 1
    kind = "goal" if metric == "agent_goal_success" else "tool"
    prefix = "" if into is RECORDS else "ho-"
    into.append(
        {
            "id": f"{prefix}{kind}-{lang}-{n:02d}",
            "metric": metric,
            "kind": "point",
            "label": label,
            "label_kind": "binary",
            "lang": lang,
            "category": category,
            "messages": messages,
            "tools": TOOLS,
            **extra,
        }
    )


G = "agent_goal_success"
T = "tool_selection"

# ---------------------------------------------------------------- goal, English
add(
    G,
    "en",
    1,
    "answered from the result",
    conv(
        (
            "What's the weather in Lisbon right now?",
            [("get_weather", {"city": "Lisbon"}, "Lisbon: 24°C, clear sky, wind 10 km/h.")],
            "It's 24°C with a clear sky in Lisbon right now.",
        )
    ),
)
add(
    G,
    "en",
    0,
    "answer contradicts the result",
    conv(
        (
            "What's the weather in Oslo right now?",
            [("get_weather", {"city": "Oslo"}, "Oslo: 3°C, snow showers.")],
            "It's a warm 18°C and sunny in Oslo.",
        )
    ),
)
add(
    G,
    "en",
    0,
    "claims success after a tool error",
    conv(
        (
            "Book a table for four at Sakura at 7 pm.",
            [
                (
                    "book_table",
                    {"restaurant": "Sakura", "people": 4, "time": "19:00"},
                    '{"error": "Sakura is fully booked at 19:00"}',
                )
            ],
            "All set! Your table for four at Sakura is booked for 7 pm.",
        )
    ),
)
add(
    G,
    "en",
    1,
    "reports a tool error honestly and offers the alternative",
    conv(
        (
            "Book a table for two at Nonna's at 8 pm.",
            [
                (
                    "book_table",
                    {"restaurant": "Nonna's", "people": 2, "time": "20:00"},
                    '{"error": "no table at 20:00", "free": ["21:00"]}',
                ),
                (
                    "book_table",
                    {"restaurant": "Nonna's", "people": 2, "time": "21:00"},
                    '{"status": "booked", "time": "21:00", "ref": "N-2231"}',
                ),
            ],
            "Nonna's had no table at 8 pm, so I booked the 9 pm slot for two instead: reference N-2231.",
        )
    ),
)
add(
    G,
    "en",
    1,
    "order lookup",
    conv(
        (
            "Where is my order 48213?",
            [
                (
                    "get_order",
                    {"order_id": "48213"},
                    '{"order_id": "48213", "status": "shipped", "carrier": "DHL", "eta": "Thursday"}',
                )
            ],
            "Your order 48213 has shipped with DHL and should arrive on Thursday.",
        )
    ),
)
add(
    G,
    "en",
    0,
    "gives up without trying",
    conv(("Where is my order 55120?", [], "I'm sorry, I can't help with order questions.")),
)
add(
    G,
    "en",
    1,
    "refund done",
    conv(
        (
            "Please refund order 77310, it arrived broken.",
            [
                (
                    "refund_order",
                    {"order_id": "77310"},
                    '{"order_id": "77310", "refund": "issued", "amount": "49.90 EUR"}',
                )
            ],
            "I'm sorry it arrived broken. I've issued a refund of 49.90 EUR for order 77310.",
        )
    ),
)
add(
    G,
    "en",
    0,
    "refunded the wrong order",
    conv(
        (
            "Please refund order 77310, it arrived broken.",
            [
                (
                    "refund_order",
                    {"order_id": "77130"},
                    '{"order_id": "77130", "refund": "issued", "amount": "12.00 EUR"}',
                )
            ],
            "Done: I've issued a refund of 12.00 EUR for order 77130.",
        )
    ),
)
add(
    G,
    "en",
    1,
    "calculation",
    conv(
        (
            "How much is 17.5% of 2,480?",
            [("calculator", {"expression": "0.175 * 2480"}, "434.0")],
            "17.5% of 2,480 is 434.",
        )
    ),
)
add(
    G,
    "en",
    0,
    "miscopies the result",
    conv(
        (
            "How much is 17.5% of 2,480?",
            [("calculator", {"expression": "0.175 * 2480"}, "434.0")],
            "17.5% of 2,480 is 343.",
        )
    ),
)
add(
    G,
    "en",
    1,
    "currency conversion",
    conv(
        (
            "How many yen is 250 dollars today?",
            [
                (
                    "convert_currency",
                    {"amount": 250, "from": "USD", "to": "JPY"},
                    '{"result": 37125.0, "rate": 148.5}',
                )
            ],
            "250 US dollars is about 37,125 yen at today's rate of 148.5.",
        )
    ),
)
add(
    G,
    "en",
    0,
    "answers another question",
    conv(
        (
            "How many yen is 250 dollars today?",
            [
                (
                    "convert_currency",
                    {"amount": 250, "from": "USD", "to": "EUR"},
                    '{"result": 230.0, "rate": 0.92}',
                )
            ],
            "250 dollars is 230 euros today.",
        )
    ),
)
add(
    G,
    "en",
    1,
    "documentation answer",
    conv(
        (
            "How do I reset my router's admin password?",
            [
                (
                    "search_docs",
                    {"query": "reset router admin password"},
                    "To reset the admin password, hold the reset button on the back for 10 seconds; the password returns to the one printed on the label.",
                )
            ],
            "Hold the reset button on the back of the router for 10 seconds; the admin password then goes back to the one printed on the label.",
        )
    ),
)
add(
    G,
    "en",
    0,
    "invents steps the documentation does not give",
    conv(
        (
            "How do I reset my router's admin password?",
            [
                (
                    "search_docs",
                    {"query": "reset router admin password"},
                    "To reset the admin password, hold the reset button on the back for 10 seconds; the password returns to the one printed on the label.",
                )
            ],
            "Log in to the cloud portal, open Security and click 'Email me a new password'; it arrives within an hour.",
        )
    ),
)
add(
    G,
    "en",
    1,
    "two requests, both met",
    conv(
        (
            "What's the weather in Rome, and how much is 120 euros in dollars?",
            [
                ("get_weather", {"city": "Rome"}, "Rome: 27°C, sunny."),
                (
                    "convert_currency",
                    {"amount": 120, "from": "EUR", "to": "USD"},
                    '{"result": 130.4, "rate": 1.0867}',
                ),
            ],
            "Rome is sunny at 27°C, and 120 euros is about 130.40 dollars.",
        )
    ),
)
add(
    G,
    "en",
    0,
    "two requests, one dropped",
    conv(
        (
            "What's the weather in Rome, and how much is 120 euros in dollars?",
            [("get_weather", {"city": "Rome"}, "Rome: 27°C, sunny.")],
            "Rome is sunny at 27°C today.",
        )
    ),
)
add(
    G,
    "en",
    1,
    "email sent",
    conv(
        (
            "Email dana@example.com that the meeting moves to 3 pm.",
            [
                (
                    "send_email",
                    {
                        "to": "dana@example.com",
                        "subject": "Meeting time",
                        "body": "Hi Dana, the meeting moves to 3 pm.",
                    },
                    '{"status": "sent", "id": "m-8812"}',
                )
            ],
            "I've emailed Dana that the meeting moves to 3 pm.",
        )
    ),
)
add(
    G,
    "en",
    0,
    "says sent, never called the tool",
    conv(
        (
            "Email dana@example.com that the meeting moves to 3 pm.",
            [],
            "Done, Dana now knows the meeting moves to 3 pm.",
        )
    ),
)
add(
    G,
    "en",
    1,
    "follow-up turn",
    conv(
        (
            "What's the weather in Paris?",
            [("get_weather", {"city": "Paris"}, "Paris: 16°C, light rain.")],
            "Paris has light rain and 16°C.",
        ),
        (
            "And in Madrid?",
            [("get_weather", {"city": "Madrid"}, "Madrid: 29°C, sunny.")],
            "Madrid is sunny with 29°C.",
        ),
    ),
)
add(
    G,
    "en",
    0,
    "follow-up turn answered for the wrong city",
    conv(
        (
            "What's the weather in Paris?",
            [("get_weather", {"city": "Paris"}, "Paris: 16°C, light rain.")],
            "Paris has light rain and 16°C.",
        ),
        (
            "And in Madrid?",
            [("get_weather", {"city": "Paris"}, "Paris: 16°C, light rain.")],
            "It's 16°C with light rain.",
        ),
    ),
)
add(
    G,
    "en",
    1,
    "with an expected outcome: met",
    conv(
        (
            "Find out when the museum closes on Sundays.",
            [
                (
                    "web_search",
                    {"query": "city museum Sunday closing time"},
                    "City Museum: open Tuesday to Sunday, 10:00-18:00; closed Mondays.",
                )
            ],
            "On Sundays the City Museum closes at 6 pm.",
        )
    ),
    reference="The user learns the museum closes at 18:00 on Sundays.",
)
add(
    G,
    "en",
    0,
    "with an expected outcome: not met",
    conv(
        (
            "Find out when the museum closes on Sundays.",
            [
                (
                    "web_search",
                    {"query": "city museum Sunday closing time"},
                    "City Museum: open Tuesday to Sunday, 10:00-18:00; closed Mondays.",
                )
            ],
            "The City Museum is closed on Sundays.",
        )
    ),
    reference="The user learns the museum closes at 18:00 on Sundays.",
)

# ---------------------------------------------------------------- goal, Chinese
add(
    G,
    "zh",
    1,
    "answered from the result",
    conv(
        (
            "杭州现在天气怎么样？",
            [("get_weather", {"city": "杭州"}, "杭州：多云，22°C，东风 2 级。")],
            "杭州现在多云，气温 22°C。",
        )
    ),
)
add(
    G,
    "zh",
    0,
    "answer contradicts the result",
    conv(
        (
            "哈尔滨现在天气怎么样？",
            [("get_weather", {"city": "哈尔滨"}, "哈尔滨：小雪，零下 12°C。")],
            "哈尔滨现在晴朗温暖，气温 20°C。",
        )
    ),
)
add(
    G,
    "zh",
    0,
    "claims success after a tool error",
    conv(
        (
            "帮我订今晚七点海底捞四个人的位子。",
            [
                (
                    "book_table",
                    {"restaurant": "海底捞", "people": 4, "time": "19:00"},
                    '{"error": "19:00 已满"}',
                )
            ],
            "已经帮您订好了今晚七点海底捞的四人桌。",
        )
    ),
)
add(
    G,
    "zh",
    1,
    "reports a tool error honestly and rebooks",
    conv(
        (
            "帮我订今晚八点全聚德两个人的位子。",
            [
                (
                    "book_table",
                    {"restaurant": "全聚德", "people": 2, "time": "20:00"},
                    '{"error": "20:00 无空桌", "可订": ["20:30"]}',
                ),
                (
                    "book_table",
                    {"restaurant": "全聚德", "people": 2, "time": "20:30"},
                    '{"status": "已预订", "time": "20:30", "ref": "Q-5531"}',
                ),
            ],
            "全聚德八点没有空桌，我为您改订了八点半的两人桌，预订号 Q-5531。",
        )
    ),
)
add(
    G,
    "zh",
    1,
    "order lookup",
    conv(
        (
            "我的订单 30917 到哪儿了？",
            [
                (
                    "get_order",
                    {"order_id": "30917"},
                    '{"order_id": "30917", "状态": "已发货", "快递": "顺丰", "预计送达": "周五"}',
                )
            ],
            "您的订单 30917 已由顺丰发出，预计周五送达。",
        )
    ),
)
add(G, "zh", 0, "gives up without trying", conv(("我的订单 30918 到哪儿了？", [], "抱歉，我无法查询订单。")))
add(
    G,
    "zh",
    1,
    "refund done",
    conv(
        (
            "订单 66021 收到时已经坏了，请帮我退款。",
            [
                (
                    "refund_order",
                    {"order_id": "66021"},
                    '{"order_id": "66021", "退款": "已办理", "金额": "128 元"}',
                )
            ],
            "很抱歉商品损坏。已为订单 66021 办理退款 128 元。",
        )
    ),
)
add(
    G,
    "zh",
    0,
    "refunded the wrong order",
    conv(
        (
            "订单 66021 收到时已经坏了，请帮我退款。",
            [
                (
                    "refund_order",
                    {"order_id": "66012"},
                    '{"order_id": "66012", "退款": "已办理", "金额": "35 元"}',
                )
            ],
            "已为订单 66012 办理退款 35 元。",
        )
    ),
)
add(
    G,
    "zh",
    1,
    "calculation",
    conv(
        (
            "3680 的 15% 是多少？",
            [("calculator", {"expression": "3680 * 0.15"}, "552.0")],
            "3680 的 15% 是 552。",
        )
    ),
)
add(
    G,
    "zh",
    0,
    "miscopies the result",
    conv(
        (
            "3680 的 15% 是多少？",
            [("calculator", {"expression": "3680 * 0.15"}, "552.0")],
            "3680 的 15% 是 525。",
        )
    ),
)
add(
    G,
    "zh",
    1,
    "currency conversion",
    conv(
        (
            "今天 500 美元能换多少人民币？",
            [
                (
                    "convert_currency",
                    {"amount": 500, "from": "USD", "to": "CNY"},
                    '{"result": 3615.0, "rate": 7.23}',
                )
            ],
            "按今天 7.23 的汇率，500 美元约合 3615 元人民币。",
        )
    ),
)
add(
    G,
    "zh",
    0,
    "answers another question",
    conv(
        (
            "今天 500 美元能换多少人民币？",
            [
                (
                    "convert_currency",
                    {"amount": 500, "from": "USD", "to": "JPY"},
                    '{"result": 74250.0, "rate": 148.5}',
                )
            ],
            "500 美元今天可以换 74250 日元。",
        )
    ),
)
add(
    G,
    "zh",
    1,
    "documentation answer",
    conv(
        (
            "路由器的管理密码怎么重置？",
            [
                (
                    "search_docs",
                    {"query": "重置 路由器 管理密码"},
                    "重置管理密码：按住机身背面的复位键 10 秒，密码即恢复为标签上印的初始密码。",
                )
            ],
            "按住路由器背面的复位键 10 秒，管理密码就会恢复成标签上印的初始密码。",
        )
    ),
)
add(
    G,
    "zh",
    0,
    "invents steps the documentation does not give",
    conv(
        (
            "路由器的管理密码怎么重置？",
            [
                (
                    "search_docs",
                    {"query": "重置 路由器 管理密码"},
                    "重置管理密码：按住机身背面的复位键 10 秒，密码即恢复为标签上印的初始密码。",
                )
            ],
            "请登录云端管理平台，在“安全”页面点击“发送新密码”，新密码会在一小时内发到您的邮箱。",
        )
    ),
)
add(
    G,
    "zh",
    1,
    "two requests, both met",
    conv(
        (
            "成都天气怎么样？另外 200 欧元是多少人民币？",
            [
                ("get_weather", {"city": "成都"}, "成都：阴，18°C。"),
                (
                    "convert_currency",
                    {"amount": 200, "from": "EUR", "to": "CNY"},
                    '{"result": 1562.0, "rate": 7.81}',
                ),
            ],
            "成都今天阴，18°C；200 欧元约合 1562 元人民币。",
        )
    ),
)
add(
    G,
    "zh",
    0,
    "two requests, one dropped",
    conv(
        (
            "成都天气怎么样？另外 200 欧元是多少人民币？",
            [("get_weather", {"city": "成都"}, "成都：阴，18°C。")],
            "成都今天阴，气温 18°C。",
        )
    ),
)
add(
    G,
    "zh",
    1,
    "email sent",
    conv(
        (
            "给 li.lei@example.com 发邮件，说周会改到下午三点。",
            [
                (
                    "send_email",
                    {
                        "to": "li.lei@example.com",
                        "subject": "周会时间调整",
                        "body": "李雷你好，周会改到下午三点。",
                    },
                    '{"status": "sent", "id": "m-3301"}',
                )
            ],
            "已给李雷发邮件，告知周会改到下午三点。",
        )
    ),
)
add(
    G,
    "zh",
    0,
    "says sent, never called the tool",
    conv(
        ("给 li.lei@example.com 发邮件，说周会改到下午三点。", [], "好的，已经通知李雷周会改到下午三点了。")
    ),
)
add(
    G,
    "zh",
    1,
    "follow-up turn",
    conv(
        ("上海天气怎么样？", [("get_weather", {"city": "上海"}, "上海：小雨，19°C。")], "上海有小雨，19°C。"),
        ("那广州呢？", [("get_weather", {"city": "广州"}, "广州：晴，30°C。")], "广州晴，30°C。"),
    ),
)
add(
    G,
    "zh",
    0,
    "follow-up turn answered for the wrong city",
    conv(
        ("上海天气怎么样？", [("get_weather", {"city": "上海"}, "上海：小雨，19°C。")], "上海有小雨，19°C。"),
        ("那广州呢？", [("get_weather", {"city": "上海"}, "上海：小雨，19°C。")], "有小雨，19°C。"),
    ),
)
add(
    G,
    "zh",
    1,
    "with an expected outcome: met",
    conv(
        (
            "查一下博物馆周日几点关门。",
            [
                (
                    "web_search",
                    {"query": "市博物馆 周日 闭馆时间"},
                    "市博物馆：周二至周日 9:00-17:00 开放，周一闭馆。",
                )
            ],
            "市博物馆周日下午五点关门。",
        )
    ),
    reference="用户得知博物馆周日 17:00 闭馆。",
)
add(
    G,
    "zh",
    0,
    "with an expected outcome: not met",
    conv(
        (
            "查一下博物馆周日几点关门。",
            [
                (
                    "web_search",
                    {"query": "市博物馆 周日 闭馆时间"},
                    "市博物馆：周二至周日 9:00-17:00 开放，周一闭馆。",
                )
            ],
            "市博物馆周日不开放。",
        )
    ),
    reference="用户得知博物馆周日 17:00 闭馆。",
)

# ---------------------------------------------------------------- tool selection, English
add(
    T,
    "en",
    1,
    "weather tool for weather",
    conv(
        (
            "Is it raining in Dublin?",
            [("get_weather", {"city": "Dublin"}, "Dublin: 12°C, rain.")],
            "Yes, it's raining in Dublin (12°C).",
        )
    ),
)
add(
    T,
    "en",
    0,
    "web search where the weather tool fits",
    conv(
        (
            "Is it raining in Dublin?",
            [("web_search", {"query": "is it raining in Dublin"}, "Dublin weather: rain, 12°C.")],
            "Yes, it's raining in Dublin.",
        )
    ),
)
add(
    T,
    "en",
    0,
    "right tool, wrong city",
    conv(
        (
            "Is it raining in Dublin?",
            [("get_weather", {"city": "London"}, "London: 14°C, cloudy.")],
            "It's cloudy, not raining.",
        )
    ),
)
add(
    T,
    "en",
    1,
    "order lookup then refund",
    conv(
        (
            "Refund my order 90211 if it hasn't shipped yet.",
            [
                ("get_order", {"order_id": "90211"}, '{"status": "processing"}'),
                ("refund_order", {"order_id": "90211"}, '{"refund": "issued"}'),
            ],
            "It hadn't shipped, so I've refunded order 90211.",
        )
    ),
)
add(
    T,
    "en",
    0,
    "refund without the check the user asked for",
    conv(
        (
            "Refund my order 90211 if it hasn't shipped yet.",
            [("refund_order", {"order_id": "90211"}, '{"refund": "issued"}')],
            "I've refunded order 90211.",
        )
    ),
)
add(
    T,
    "en",
    1,
    "calculator for arithmetic",
    conv(("What's 38 times 47?", [("calculator", {"expression": "38 * 47"}, "1786")], "38 × 47 = 1,786.")),
)
add(
    T,
    "en",
    0,
    "email tool for arithmetic",
    conv(
        (
            "What's 38 times 47?",
            [("send_email", {"to": "me@example.com", "body": "38 * 47"}, '{"status": "sent"}')],
            "I've sent it.",
        )
    ),
)
add(
    T,
    "en",
    1,
    "documentation search for a product question",
    conv(
        (
            "Does the X200 support Wi-Fi 6?",
            [
                (
                    "search_docs",
                    {"query": "X200 Wi-Fi 6 support"},
                    "X200 specifications: Wi-Fi 6 (802.11ax), dual band.",
                )
            ],
            "Yes, the X200 supports Wi-Fi 6.",
        )
    ),
)
add(
    T,
    "en",
    0,
    "currency tool for a product question",
    conv(
        (
            "Does the X200 support Wi-Fi 6?",
            [("convert_currency", {"amount": 200, "from": "USD", "to": "EUR"}, '{"result": 184.0}')],
            "It costs 184 euros.",
        )
    ),
)
add(
    T,
    "en",
    1,
    "two right tools",
    conv(
        (
            "Weather in Nice, and convert 80 euros to pounds.",
            [
                ("get_weather", {"city": "Nice"}, "Nice: 25°C, sunny."),
                ("convert_currency", {"amount": 80, "from": "EUR", "to": "GBP"}, '{"result": 68.0}'),
            ],
            "Nice is sunny at 25°C; 80 euros is about 68 pounds.",
        )
    ),
)
add(
    T,
    "en",
    0,
    "needless extra search",
    conv(
        (
            "Weather in Nice?",
            [
                ("get_weather", {"city": "Nice"}, "Nice: 25°C, sunny."),
                ("web_search", {"query": "best beaches in Nice"}, "Top beaches: Castel, Opera..."),
            ],
            "Nice is sunny at 25°C.",
        )
    ),
)
add(
    T,
    "en",
    0,
    "invented arguments",
    conv(
        (
            "Book Luigi's for two tonight.",
            [("book_table", {"restaurant": "Luigi's", "people": 6, "time": "12:00"}, '{"status": "booked"}')],
            "Booked.",
        )
    ),
)

# ---------------------------------------------------------------- tool selection, Chinese
add(
    T,
    "zh",
    1,
    "weather tool for weather",
    conv(
        (
            "南京在下雨吗？",
            [("get_weather", {"city": "南京"}, "南京：中雨，16°C。")],
            "是的，南京正在下中雨。",
        )
    ),
)
add(
    T,
    "zh",
    0,
    "web search where the weather tool fits",
    conv(
        (
            "南京在下雨吗？",
            [("web_search", {"query": "南京 现在 下雨吗"}, "南京天气：中雨。")],
            "是的，南京在下雨。",
        )
    ),
)
add(
    T,
    "zh",
    0,
    "right tool, wrong city",
    conv(("南京在下雨吗？", [("get_weather", {"city": "北京"}, "北京：晴，20°C。")], "没有下雨，是晴天。")),
)
add(
    T,
    "zh",
    1,
    "order lookup then refund",
    conv(
        (
            "如果订单 81230 还没发货，就帮我退款。",
            [
                ("get_order", {"order_id": "81230"}, '{"状态": "待发货"}'),
                ("refund_order", {"order_id": "81230"}, '{"退款": "已办理"}'),
            ],
            "订单还没发货，已为您退款。",
        )
    ),
)
add(
    T,
    "zh",
    0,
    "refund without the check the user asked for",
    conv(
        (
            "如果订单 81230 还没发货，就帮我退款。",
            [("refund_order", {"order_id": "81230"}, '{"退款": "已办理"}')],
            "已为订单 81230 退款。",
        )
    ),
)
add(
    T,
    "zh",
    1,
    "calculator for arithmetic",
    conv(("56 乘以 73 等于多少？", [("calculator", {"expression": "56 * 73"}, "4088")], "56 × 73 = 4088。")),
)
add(
    T,
    "zh",
    0,
    "email tool for arithmetic",
    conv(
        (
            "56 乘以 73 等于多少？",
            [("send_email", {"to": "me@example.com", "body": "56 * 73"}, '{"status": "sent"}')],
            "已发送。",
        )
    ),
)
add(
    T,
    "zh",
    1,
    "documentation search for a product question",
    conv(
        (
            "X200 支持 Wi-Fi 6 吗？",
            [("search_docs", {"query": "X200 Wi-Fi 6"}, "X200 规格：支持 Wi-Fi 6（802.11ax），双频。")],
            "支持，X200 支持 Wi-Fi 6。",
        )
    ),
)
add(
    T,
    "zh",
    0,
    "currency tool for a product question",
    conv(
        (
            "X200 支持 Wi-Fi 6 吗？",
            [("convert_currency", {"amount": 200, "from": "USD", "to": "CNY"}, '{"result": 1446.0}')],
            "售价约 1446 元。",
        )
    ),
)
add(
    T,
    "zh",
    1,
    "two right tools",
    conv(
        (
            "厦门天气如何？再把 100 美元换成港币。",
            [
                ("get_weather", {"city": "厦门"}, "厦门：晴，28°C。"),
                ("convert_currency", {"amount": 100, "from": "USD", "to": "HKD"}, '{"result": 781.0}'),
            ],
            "厦门晴，28°C；100 美元约合 781 港币。",
        )
    ),
)
add(
    T,
    "zh",
    0,
    "needless extra search",
    conv(
        (
            "厦门天气如何？",
            [
                ("get_weather", {"city": "厦门"}, "厦门：晴，28°C。"),
                ("web_search", {"query": "厦门 美食 推荐"}, "沙茶面、土笋冻……"),
            ],
            "厦门晴，28°C。",
        )
    ),
)
add(
    T,
    "zh",
    0,
    "invented arguments",
    conv(
        (
            "帮我订今晚的全聚德，两个人。",
            [("book_table", {"restaurant": "全聚德", "people": 8, "time": "11:00"}, '{"status": "已预订"}')],
            "订好了。",
        )
    ),
)


# ================================================================ held-out (written after tuning)
H = HELD
add(
    G,
    "en",
    1,
    "parcel tracking",
    conv(
        (
            "Has my parcel JD0412 been delivered?",
            [
                (
                    "get_order",
                    {"order_id": "JD0412"},
                    '{"status": "delivered", "delivered_at": "2026-11-30 14:12", "signed_by": "reception"}',
                )
            ],
            "Yes: parcel JD0412 was delivered on 30 November at 14:12 and signed for by reception.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    0,
    "parcel tracking, wrong status",
    conv(
        (
            "Has my parcel JD0413 been delivered?",
            [("get_order", {"order_id": "JD0413"}, '{"status": "in transit", "eta": "2026-12-08"}')],
            "Yes, parcel JD0413 was delivered yesterday.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    0,
    "honest failure is still a failure",
    conv(
        (
            "Book a table for six at Osteria at 9 pm tonight.",
            [
                (
                    "book_table",
                    {"restaurant": "Osteria", "people": 6, "time": "21:00"},
                    '{"error": "closed tonight"}',
                )
            ],
            "Sorry, Osteria is closed tonight, so I couldn't book it.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    1,
    "search answer",
    conv(
        (
            "Who designed the Sydney Opera House?",
            [
                (
                    "web_search",
                    {"query": "Sydney Opera House architect"},
                    "The Sydney Opera House was designed by Danish architect Jørn Utzon.",
                )
            ],
            "It was designed by the Danish architect Jørn Utzon.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    0,
    "search answer, name swapped",
    conv(
        (
            "Who designed the Sydney Opera House?",
            [
                (
                    "web_search",
                    {"query": "Sydney Opera House architect"},
                    "The Sydney Opera House was designed by Danish architect Jørn Utzon; Peter Hall led the interiors.",
                )
            ],
            "It was designed by Peter Hall.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    1,
    "conversion with rounding",
    conv(
        (
            "Convert 1,000 Swiss francs to euros.",
            [
                (
                    "convert_currency",
                    {"amount": 1000, "from": "CHF", "to": "EUR"},
                    '{"result": 1063.2, "rate": 1.0632}',
                )
            ],
            "1,000 Swiss francs is 1,063.20 euros at today's rate.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    0,
    "conversion, amount made up",
    conv(
        (
            "Convert 1,000 Swiss francs to euros.",
            [
                (
                    "convert_currency",
                    {"amount": 1000, "from": "CHF", "to": "EUR"},
                    '{"result": 1063.2, "rate": 1.0632}',
                )
            ],
            "1,000 Swiss francs is about 980 euros.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    1,
    "two-step lookup",
    conv(
        (
            "Is order 6620 refundable? If so, refund it.",
            [
                ("get_order", {"order_id": "6620"}, '{"status": "delivered", "refundable": true}'),
                ("refund_order", {"order_id": "6620"}, '{"refund": "issued", "amount": "18.50 USD"}'),
            ],
            "Order 6620 was refundable, so I refunded it: 18.50 USD is on its way back to you.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    0,
    "stopped halfway",
    conv(
        (
            "Is order 6621 refundable? If so, refund it.",
            [("get_order", {"order_id": "6621"}, '{"status": "delivered", "refundable": true}')],
            "Order 6621 is refundable.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    1,
    "docs answer without numbers",
    conv(
        (
            "Can the X300 be mounted on a wall?",
            [
                (
                    "search_docs",
                    {"query": "X300 wall mount"},
                    "The X300 can be wall-mounted with the included bracket.",
                )
            ],
            "Yes, the X300 can be mounted on a wall using the bracket in the box.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    0,
    "docs answer reversed",
    conv(
        (
            "Can the X300 be mounted on a wall?",
            [
                (
                    "search_docs",
                    {"query": "X300 wall mount"},
                    "The X300 cannot be wall-mounted; it is a desktop unit only.",
                )
            ],
            "Yes, the X300 can be mounted on a wall.",
        )
    ),
    into=H,
)
add(
    G,
    "en",
    1,
    "weather, multi-turn with a change of mind",
    conv(
        (
            "Weather in Vienna?",
            [("get_weather", {"city": "Vienna"}, "Vienna: 5°C, fog.")],
            "Vienna is foggy at 5°C.",
        ),
        (
            "Actually, I meant Venice.",
            [("get_weather", {"city": "Venice"}, "Venice: 11°C, overcast.")],
            "Venice is overcast at 11°C.",
        ),
    ),
    into=H,
)
add(
    G,
    "zh",
    1,
    "parcel tracking",
    conv(
        (
            "我的包裹 SF7781 送到了吗？",
            [
                (
                    "get_order",
                    {"order_id": "SF7781"},
                    '{"状态": "已签收", "签收时间": "2026-11-30 14:12", "签收人": "前台"}',
                )
            ],
            "您的包裹 SF7781 已于 11 月 30 日 14:12 由前台签收。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    0,
    "parcel tracking, wrong status",
    conv(
        (
            "我的包裹 SF7782 送到了吗？",
            [("get_order", {"order_id": "SF7782"}, '{"状态": "运输中", "预计送达": "2026-12-08"}')],
            "包裹 SF7782 昨天已经送到了。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    0,
    "honest failure is still a failure",
    conv(
        (
            "帮我订今晚九点外婆家六个人的位子。",
            [
                (
                    "book_table",
                    {"restaurant": "外婆家", "people": 6, "time": "21:00"},
                    '{"error": "今晚不营业"}',
                )
            ],
            "抱歉，外婆家今晚不营业，没能订上。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    1,
    "search answer",
    conv(
        (
            "悉尼歌剧院是谁设计的？",
            [("web_search", {"query": "悉尼歌剧院 设计师"}, "悉尼歌剧院由丹麦建筑师约恩·乌松设计。")],
            "悉尼歌剧院是丹麦建筑师约恩·乌松设计的。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    0,
    "search answer, name swapped",
    conv(
        (
            "悉尼歌剧院是谁设计的？",
            [
                (
                    "web_search",
                    {"query": "悉尼歌剧院 设计师"},
                    "悉尼歌剧院由丹麦建筑师约恩·乌松设计，内部装修由彼得·霍尔主持。",
                )
            ],
            "悉尼歌剧院是彼得·霍尔设计的。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    1,
    "conversion",
    conv(
        (
            "1000 港币换成人民币是多少？",
            [
                (
                    "convert_currency",
                    {"amount": 1000, "from": "HKD", "to": "CNY"},
                    '{"result": 926.0, "rate": 0.926}',
                )
            ],
            "按今天的汇率，1000 港币约合 926 元人民币。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    0,
    "conversion, amount made up",
    conv(
        (
            "1000 港币换成人民币是多少？",
            [
                (
                    "convert_currency",
                    {"amount": 1000, "from": "HKD", "to": "CNY"},
                    '{"result": 926.0, "rate": 0.926}',
                )
            ],
            "1000 港币大约能换 1100 元人民币。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    1,
    "two-step lookup",
    conv(
        (
            "订单 5510 能退款吗？能的话就退了吧。",
            [
                ("get_order", {"order_id": "5510"}, '{"状态": "已签收", "可退款": true}'),
                ("refund_order", {"order_id": "5510"}, '{"退款": "已办理", "金额": "88 元"}'),
            ],
            "订单 5510 可以退款，已为您办理，88 元将退回原账户。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    0,
    "stopped halfway",
    conv(
        (
            "订单 5511 能退款吗？能的话就退了吧。",
            [("get_order", {"order_id": "5511"}, '{"状态": "已签收", "可退款": true}')],
            "订单 5511 可以退款。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    1,
    "docs answer without numbers",
    conv(
        (
            "X300 可以挂墙安装吗？",
            [("search_docs", {"query": "X300 挂墙"}, "X300 可使用随附的支架挂墙安装。")],
            "可以，X300 能用包装里附带的支架挂在墙上。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    0,
    "docs answer reversed",
    conv(
        (
            "X300 可以挂墙安装吗？",
            [("search_docs", {"query": "X300 挂墙"}, "X300 不支持挂墙安装，仅可桌面放置。")],
            "可以，X300 支持挂墙安装。",
        )
    ),
    into=H,
)
add(
    G,
    "zh",
    1,
    "weather, multi-turn with a change of mind",
    conv(
        ("西安天气怎么样？", [("get_weather", {"city": "西安"}, "西安：雾，5°C。")], "西安有雾，5°C。"),
        ("不好意思，我是说西宁。", [("get_weather", {"city": "西宁"}, "西宁：阴，2°C。")], "西宁阴天，2°C。"),
    ),
    into=H,
)


def main() -> None:
    for path, records in ((DEV, RECORDS), (HELDOUT, HELD)):
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        by: dict[tuple[str, str, int], int] = {}
        for r in records:
            by[(r["metric"], r["lang"], r["label"])] = by.get((r["metric"], r["lang"], r["label"]), 0) + 1
        print(path.name, len(records), "records:", by)


if __name__ == "__main__":
    main()
