from __future__ import annotations

import time

import pytest

from ragmeter.text import ZH_SHARE_THRESHOLD, detect_lang, is_cjk, normalize_answer, split_sentences, tokenize

# --------------------------------------------------------------------------- detect_lang


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("What is the capital of France?", "en"),
        ("法国的首都是哪里？", "zh"),
        ("使用Python的pandas库读取CSV文件", "zh"),  # 8 ideographs, 3 words
        ("请解释 Retrieval-Augmented Generation 的原理", "zh"),  # 6 of 9 tokens
        (
            "In Sichuan cuisine the famous dish called 麻婆豆腐 is known for its numbing spice",
            "en",
        ),  # 4 of 16
        ("", "en"),
        ("12345 !!!", "en"),
        ("北京", "zh"),
        ("Привет, как дела?", "en"),  # only zh / en are told apart
    ],
)
def test_detect_lang(text, lang):
    assert detect_lang(text) == lang


def test_detect_lang_threshold_boundary():
    # 3 ideographs + 7 words = 0.3 exactly -> zh; one more word -> en
    assert ZH_SHARE_THRESHOLD == 0.3
    assert detect_lang("北京市 a b c d e f g") == "zh"
    assert detect_lang("北京市 a b c d e f g h") == "en"


def test_is_cjk():
    assert is_cjk("中") and is_cjk("〇") and is_cjk("\U00020000")
    assert not is_cjk("a") and not is_cjk("。") and not is_cjk("か") and not is_cjk("")


# --------------------------------------------------------------------------- split_sentences (en)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello world. This is a test.", ["Hello world.", "This is a test."]),
        (
            "Mr. Smith met Dr. Jones at 3.14 p.m. on Monday. They talked.",
            ["Mr. Smith met Dr. Jones at 3.14 p.m. on Monday.", "They talked."],
        ),
        (
            "Fruits, e.g. apples, are healthy. He moved to the U.S. in 1999. J. K. Rowling wrote it.",
            ["Fruits, e.g. apples, are healthy.", "He moved to the U.S. in 1999.", "J. K. Rowling wrote it."],
        ),
        ("The value is 3.14. The next is 2.71.", ["The value is 3.14.", "The next is 2.71."]),
        ("Wait... what? I don't know... Maybe.", ["Wait... what?", "I don't know...", "Maybe."]),
        ("Really?! Yes!! OK.", ["Really?!", "Yes!!", "OK."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ('"Hello," he said. "How are you?" she asked.', ['"Hello," he said.', '"How are you?" she asked.']),
        ("(See above.) Then continue.", ["(See above.)", "Then continue."]),
        ("Visit example.com. Yahoo! is a company.", ["Visit example.com.", "Yahoo! is a company."]),
        (
            "See Fig. 3 and No. 5 in Smith et al. (2020). It works.",
            ["See Fig. 3 and No. 5 in Smith et al. (2020).", "It works."],
        ),
        ("The answer is no. No. 5 was chosen.", ["The answer is no.", "No. 5 was chosen."]),
        ("I came; I saw; I conquered.", ["I came; I saw; I conquered."]),
        ("It costs $1,000.50 per year. Is that OK?", ["It costs $1,000.50 per year.", "Is that OK?"]),
        ("no final punctuation", ["no final punctuation"]),
        ("", []),
        ("   \n\t ", []),
    ],
)
def test_split_english(text, expected):
    assert split_sentences(text) == expected


def test_split_lines_and_bullets():
    text = (
        "Introduction\n"
        "This paragraph was hard wrapped by an editor at a fixed\n"
        "width. It continues here.\n"
        "\n"
        "Key points:\n"
        "- first point\n"
        "* second point\n"
        "• third point\n"
        "1. Numbered one\n"
        "2) Numbered two\n"
        "## A heading\n"
        "Last line."
    )
    assert split_sentences(text) == [
        "Introduction",
        "This paragraph was hard wrapped by an editor at a fixed width.",
        "It continues here.",
        "Key points:",
        "first point",
        "second point",
        "third point",
        "Numbered one",
        "Numbered two",
        "A heading",
        "Last line.",
    ]


def test_split_wrapped_line_starting_with_capital():
    text = "Python is a programming language that was created by\nGuido van Rossum in 1991."
    assert split_sentences(text) == [
        "Python is a programming language that was created by Guido van Rossum in 1991."
    ]


def test_split_crlf():
    assert split_sentences("One.\r\nTwo.\rThree.") == ["One.", "Two.", "Three."]


# --------------------------------------------------------------------------- split_sentences (zh / mixed)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今天天气很好。我们去公园吧！你去吗？", ["今天天气很好。", "我们去公园吧！", "你去吗？"]),
        ("他来了；她走了。", ["他来了；", "她走了。"]),
        ("他说：“今天天气很好。”我同意。", ["他说：“今天天气很好。”", "我同意。"]),
        ("「你好！」他说。", ["「你好！」", "他说。"]),
        ("真的吗？！当然……好吧。", ["真的吗？！", "当然……", "好吧。"]),
        # half-width punctuation in Chinese text
        (
            "你好!我是小明?真的吗.价格是3.5元;我们走吧",
            ["你好!", "我是小明?", "真的吗.", "价格是3.5元;", "我们走吧"],
        ),
        ("版本号是v1.2.3，发布于2024年。", ["版本号是v1.2.3，发布于2024年。"]),
        ("（注：这是括号。）下一句。", ["（注：这是括号。）", "下一句。"]),
    ],
)
def test_split_chinese(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Python 是一种编程语言。It was created by Guido van Rossum. 它很流行！",
            ["Python 是一种编程语言。", "It was created by Guido van Rossum.", "它很流行！"],
        ),
        ("我们使用 GPT-4 模型。The U.S.政府宣布了。", ["我们使用 GPT-4 模型。", "The U.S.政府宣布了。"]),
        ("I like it.然后我们走了。", ["I like it.", "然后我们走了。"]),
        ("他用的是 Mr. Smith 的方法。", ["他用的是 Mr. Smith 的方法。"]),
    ],
)
def test_split_mixed(text, expected):
    assert split_sentences(text) == expected


def test_split_chinese_lines():
    text = (
        "第一章 概述\n"
        "本章介绍北京的历史和文化以及它在中国历史上的重要地位，它是\n"
        "中国的首都。\n"
        "一、历史\n"
        "（一）古代"
    )
    assert split_sentences(text) == [
        "第一章 概述",
        "本章介绍北京的历史和文化以及它在中国历史上的重要地位，它是中国的首都。",
        "历史",
        "古代",
    ]


def test_split_lang_param():
    text = "Hello world. 你好。"
    assert split_sentences(text, "en") == split_sentences(text, "zh") == split_sentences(text)
    with pytest.raises(ValueError, match="lang"):
        split_sentences(text, "fr")


# --------------------------------------------------------------------------- tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The Cat sat.", ["the", "cat", "sat"]),
        ("It's state-of-the-art!", ["its", "state", "of", "the", "art"]),
        ("pi is 3.14, about 1,000 people; v2.0", ["pi", "is", "3.14", "about", "1000", "people", "v2", "0"]),
        ("北京是首都。", ["北", "京", "是", "首", "都"]),
        ("使用Python3的pandas库", ["使", "用", "python3", "的", "pandas", "库"]),
        ("ＡＢＣ　１２３，「引号」", ["abc", "123", "引", "号"]),
        ("Café naïve résumé", ["café", "naïve", "résumé"]),
        ("2024年3月", ["2024", "年", "3", "月"]),
        ("…—“”‘’、。，！？；：（）《》【】", []),
        ("", []),
    ],
)
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens


def test_tokenize_is_fast():
    text = ("Retrieval-augmented generation combines a retriever with a generator. 检索增强生成。") * 200
    t0 = time.perf_counter()
    for _ in range(10):
        tokenize(text)
        split_sentences(text)
        detect_lang(text)
    assert time.perf_counter() - t0 < 2.0


# --------------------------------------------------------------------------- normalize_answer


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Cat sat on a mat!", "cat sat on mat"),
        ("  An   apple, the  pear. ", "apple pear"),
        ("state-of-the-art", "stateoftheart"),  # SQuAD deletes punctuation
        ("北京 是 首都。", "北京是首都"),
        ("“北京”，中国的首都！", "北京中国的首都"),
        ("New York 是一个 城市", "new york是一个城市"),
        ("ＴＨＥ　Ａｎｓｗｅｒ", "answer"),
        ("", ""),
    ],
)
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized
