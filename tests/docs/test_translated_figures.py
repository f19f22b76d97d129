"""The Chinese pages state the same figures as the English ones they translate.

Every figure a Chinese page (README.zh-CN.md, docs/zh/*.md) states in its prose and tables must be
one its English pages (``COUNTERPARTS``) state too, so a figure changed on one side and not on the
other fails here, naming the page, the line and the figure. The Chinese pages are shorter than the
English ones, so the check runs from Chinese to English: a figure only the English page has is fine.

What a figure is, read from the Markdown (not line by line, so wording and order may differ):

- a decimal (``0.753``), a percentage (``96.8%``, which also matches ``0.968``), a number with a
  thousands separator (``1,076``), a number in scientific notation (``1e-8``), a sample count
  written ``n=263``;
- an integer bound to a unit the two languages share (``UNITS``: ``3 次调用`` / ``3 calls``,
  ``每秒约 300 条`` / ``300 samples/s``, ``512 维`` / ``512-d``...), compared per unit. Other plain
  integers (years, ids, list positions) are not figures.

Not figures: version numbers (``v0.12.0``, ``0.5.5``), dates, code (fenced blocks and inline code
are skipped on the Chinese side: commands, options, code and recorded outputs; on the English side
everything counts), and numbers inside identifiers (``recall@20``, ``gpt-4o``).

What it cannot see: a Chinese page that keeps an old figure the English page still shows beside
the new one (a "before" column), and a figure the Chinese page drops. Keep "before" figures out
of the Chinese pages.

Where the English pages have one section per metric (docs/metrics.md), a Chinese section whose
heading names a metric (``## 忠实度 `faithfulness```) is held to the English section(s) that name
the same metric, so "2 calls" in faithfulness cannot be justified by "2 calls" elsewhere.

Chinese-only material: a page may show Chinese examples the English page does not have. Mark
such a block with ``<!-- figures: zh-only -->`` on the line above it (a fenced block, a paragraph,
a list or a table, up to the next blank line); its figures are not checked, and a zh-only *fenced*
block (a recorded output) also vouches for the same figures wherever a Chinese page quotes them
(``0.601`` for an output's ``0.600895``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragmeter.metrics.registry import list_metrics

ROOT = Path(__file__).resolve().parents[2]

#: Chinese page -> the English pages whose figures it repeats.
COUNTERPARTS: Mapping[str, tuple[str, ...]] = {
    "README.zh-CN.md": ("README.md", "docs/local-judge.md", "examples/README.md"),
    "docs/zh/agents.md": ("docs/agents.md",),
    "docs/zh/ci.md": ("docs/ci.md", "docs/compare.md", "docs/testing.md"),
    "docs/zh/coming-from-llamaindex.md": ("docs/coming-from-llamaindex.md",),
    "docs/zh/conversations.md": ("docs/conversations.md",),
    "docs/zh/glossary.md": ("docs/metrics.md",),
    "docs/zh/judges.md": ("docs/judges.md",),
    "docs/zh/local-judge.md": ("docs/local-judge.md", "docs/performance.md", "README.md"),
    "docs/zh/metrics.md": ("docs/metrics.md",),
    "docs/zh/reports.md": ("docs/report.md",),
    "docs/zh/trust.md": ("docs/trust.md",),
    "docs/zh/traces.md": ("docs/traces.md",),
}

#: unit -> (Chinese pattern, English pattern), each with one group: the integer.
UNITS: Mapping[str, tuple[str, str]] = {
    "calls": (
        r"(\d+)\s*次(?:调用|向量化)",
        r"(?:(\d+)\s+(?:LLM |judge |model )?(?:calls?|embed)\b|\*\*Calls\*\*:\s*(\d+))",
    ),
    "samples/s": (r"每秒约?\s*(\d+)\s*条", r"(\d+)\s+(?:English |Chinese )?samples/s"),
    "dimensions": (r"(\d+)\s*维", r"(\d+)-d\b"),
    "languages": (r"(\d+)\s*种语言", r"(\d+) languages"),
    "features": (r"(\d+)\s*个特征", r"(\d+) features"),
    "samples": (r"(\d+)\s*条样本", r"(\d+) (?:retrieval-augmented generation )?samples\b"),
}

ZH_ONLY = "<!-- figures: zh-only -->"
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
# a number not glued to a word, a dot, a version or an identifier
_NUMBER = re.compile(
    r"(?<![\w.@/:#-])(?:n\s*=\s*)?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(e-?\d+)?(%?)(?![\w@]|\.\d|-\d{2}-)"
)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


@dataclass(frozen=True)
class Figure:
    """One figure: ``text`` as written (normalised), its ``value``, its decimals, and the line."""

    text: str
    value: float
    decimals: int
    line: int
    unit: str = ""


@dataclass
class Section:
    keys: frozenset[str]
    figures: list[Figure]
    vouchers: list[Figure]  # figures of zh-only fenced blocks


def _numbers(text: str, line: int, integers: bool = False) -> Iterator[Figure]:
    """The figures of one line; ``integers``: plain integers too (the English side, which only has
    to state what the Chinese side does)."""
    text = _DATE.sub(" ", text)
    for m in _NUMBER.finditer(text):
        whole, frac, exp, pct = m.group(1), m.group(2) or "", m.group(3) or "", m.group(4)
        counted = m.group(0).startswith("n")
        if not (frac or exp or pct or "," in whole or counted or integers):
            continue  # a plain integer: only as a UNITS figure
        digits = whole.replace(",", "")
        value = float(digits + frac + exp)
        if pct:
            value /= 100
        decimals = len(frac) - 1 if frac else 0
        if pct:
            decimals += 2
        yield Figure(("n=" if counted else "") + digits + frac + exp + pct, value, decimals, line)


def _unit_figures(text: str, line: int, lang: str) -> Iterator[Figure]:
    for unit, patterns in UNITS.items():
        pattern = patterns[0] if lang == "zh" else patterns[1]
        for m in re.finditer(pattern, text):
            n = next(g for g in m.groups() if g is not None)
            yield Figure(f"{n} ({unit})", float(n), 0, line, unit)


def _keys(heading: str, metrics: frozenset[str]) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z][a-z0-9_]*", heading) if w in metrics)


def read_page(path: Path, lang: str, metrics: frozenset[str]) -> list[Section]:
    """The page's sections (split at every heading), each with its figures."""
    lines = path.read_text(encoding="utf-8").splitlines()
    sections = [Section(frozenset(), [], [])]
    stack: list[tuple[int, frozenset[str]]] = []
    i = 0
    zh_only = False
    while i < len(lines):
        line = lines[i]
        if line.strip() == ZH_ONLY:
            zh_only = True
            i += 1
            continue
        if _FENCE.match(line):
            start = i
            i += 1
            while i < len(lines) and not _FENCE.match(lines[i]):
                i += 1
            body = lines[start + 1 : i]
            i += 1
            if lang == "en":
                for n, text in enumerate(body, start + 2):
                    sections[-1].figures += [*_numbers(text, n, True), *_unit_figures(text, n, lang)]
            elif zh_only:
                for n, text in enumerate(body, start + 2):
                    sections[-1].vouchers += list(_numbers(text, n))
            zh_only = False
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            keys = _keys(heading.group(2), metrics) or (stack[-1][1] if stack else frozenset())
            stack.append((level, keys))
            sections.append(Section(keys, [], []))
        elif not line.strip():
            zh_only = False
        elif not zh_only:
            # the Chinese side skips inline code (options and values typed, `--margin 0.02`)
            text = line if lang == "en" else re.sub(r"`[^`]*`", " ", line)
            figures = _numbers(text, i + 1, lang == "en")
            sections[-1].figures += [*figures, *_unit_figures(text, i + 1, lang)]
        i += 1
    return sections


def _matches(figure: Figure, candidates: list[Figure]) -> bool:
    """Whether a candidate states ``figure``: the same unit and value; for a number, the same value
    at the Chinese figure's precision (the English may give more digits when the Chinese gives two
    or more)."""
    for c in candidates:
        if c.unit != figure.unit:
            continue
        if figure.unit:
            if c.value == figure.value:
                return True
            continue
        precise = c.decimals == figure.decimals or (figure.decimals >= 2 and c.decimals > figure.decimals)
        if precise and round(c.value, figure.decimals) == round(figure.value, figure.decimals):
            return True
    return False


def _metric_names() -> frozenset[str]:
    return frozenset(list_metrics())


def _mismatches(zh: str) -> list[str]:
    metrics = _metric_names()
    zh_sections = read_page(ROOT / zh, "zh", metrics)
    en_sections = [s for page in COUNTERPARTS[zh] for s in read_page(ROOT / page, "en", metrics)]
    everything = [f for s in en_sections for f in s.figures]
    vouchers = [f for page in COUNTERPARTS for s in read_page(ROOT / page, "zh", metrics) for f in s.vouchers]
    problems = []
    for section in zh_sections:
        scoped = [f for s in en_sections if s.keys & section.keys for f in s.figures] if section.keys else []
        english = scoped or everything
        for figure in section.figures:
            if _matches(figure, english) or (not figure.unit and _matches(figure, vouchers)):
                continue
            where = (
                f"the English section(s) on {', '.join(sorted(section.keys))}"
                if scoped
                else "the English pages"
            )
            problems.append(
                f"{zh}:{figure.line}: {figure.text} is not stated by {where} ({', '.join(COUNTERPARTS[zh])})"
            )
    return problems


def test_every_chinese_page_has_its_english_pages() -> None:
    pages = {"README.zh-CN.md", *(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "zh").glob("*.md"))}
    assert pages == set(COUNTERPARTS)
    for english in {p for pages in COUNTERPARTS.values() for p in pages}:
        assert (ROOT / english).is_file(), english


@pytest.mark.parametrize("zh", sorted(COUNTERPARTS))
def test_chinese_figures_are_the_english_ones(zh: str) -> None:
    problems = _mismatches(zh)
    assert not problems, "\n".join(problems)


def test_the_reader_finds_figures_and_skips_what_is_not_one(tmp_path: Path) -> None:
    zh = tmp_path / "zh.md"
    zh.write_text(
        "# 页\n\n五个指标每条样本只需 4 次调用，准确率 0.753（n=263，置信区间 0.700–0.806），96.8%。\n"
        "vLLM v0.12.0 之前、`--margin 0.02`、recall@20、2026-11-30、gpt-4o、第 3 条。\n\n"
        "## 忠实度 `faithfulness`\n\nLLM 裁判每条样本 2 次调用。\n\n"
        f"{ZH_ONLY}\n```text\nfaithfulness: 0.600895\n```\n\n"
        f"{ZH_ONLY}\n忠实的改写得 0.601。\n\n正文里引用：0.601。\n",
        encoding="utf-8",
    )
    metrics = frozenset({"faithfulness"})
    sections = read_page(zh, "zh", metrics)
    texts = [f.text for s in sections for f in s.figures]
    assert texts == ["0.753", "n=263", "0.700", "0.806", "96.8%", "4 (calls)", "2 (calls)", "0.601"]
    assert [s.keys for s in sections] == [frozenset(), frozenset(), frozenset({"faithfulness"})]
    assert [f.text for f in sections[2].vouchers] == ["0.600895"]
    en = [f for f in _numbers("0.7528 and 0.968 and n = 263 and 0.802", 1)]
    by_text = {f.text: f for s in sections for f in s.figures}
    assert (
        _matches(by_text["0.753"], en) and _matches(by_text["96.8%"], en) and _matches(by_text["n=263"], en)
    )
    assert not _matches(by_text["0.806"], en)
    assert _matches(by_text["0.601"], sections[2].vouchers)
    calls = list(_unit_figures("together cost 3 calls per sample; - **Calls**: 2.", 1, "en"))
    assert [f.text for f in calls] == ["3 (calls)", "2 (calls)"]
    assert not _matches(by_text["4 (calls)"], calls) and _matches(by_text["2 (calls)"], calls)
