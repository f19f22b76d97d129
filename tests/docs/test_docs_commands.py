"""The documentation's commands are true: every ``ragmeter`` command in a shell block of README.md,
README.zh-CN.md, docs/*.md and docs/zh/*.md parses against the real CLI, the offline ones run, the
metric names the pages use exist, and the Chinese glossary agrees with the metric description file.

How the commands are found: tests/helpers/doc_commands.py.

- **Parses**: ``make_context`` of the group and of each resolved subcommand, ``resilient_parsing``
  off, so unknown options, bad choices, missing arguments and input paths that must exist fail.
- **Runs**: a block runs (its commands in order, in a fresh directory holding copies of
  ``examples/`` and ``docs/``, so runs are recorded there) unless one of its commands names a
  judge other than ``local``, embeddings other than local/none, a ``--base-url``, or a
  placeholder below. Those blocks are parsed only, with each placeholder replaced by a path that
  exists. A block is expected to exit 0; ``<!-- docs-test: exit=N -->`` above the fence says N.
- **Placeholders** are the words in docs that stand for the reader's own things (``data.jsonl``):
  list a new one in ``PLACEHOLDERS`` with what it stands for. Keep the list short: a command on
  the repo's own files (``examples/rag_samples.jsonl``) is better documentation and is run.
  ``PARSE_ONLY`` lists the few commands that must not run here (they wait, or need an extra).
"""

from __future__ import annotations

import ast
import re
import shutil
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers.doc_commands import (
    Block,
    Command,
    extract_blocks,
    markdown_pages,
    parse_command,
    ragmeter_commands,
)
from ragmeter.cli.main import cli
from ragmeter.errors import ConfigError
from ragmeter.metrics.descriptions import description_languages, load_descriptions
from ragmeter.metrics.registry import get_metric, list_metrics

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("README.md", "README.zh-CN.md", "docs/*.md", "docs/zh/*.md")
#: copied into the directory a block runs in
SANDBOX_DIRS = ("examples", "docs")

#: word in the docs -> what it stands for: "file" or "dir" (created empty for parsing) or "name"
#: (a module, run id or other name; used as it is). Blocks that use one are parsed, not run.
PLACEHOLDERS: dict[str, str] = {
    "data.jsonl": "file",
    "data.csv": "file",
    "testset.jsonl": "file",
    "my-prompts": "dir",
    "my_rag:answer": "name",
    "my_rag:retrieve": "name",
    "data/dev/*.jsonl": "file",
    "data/dev/halluqa_zh_dev.jsonl": "file",
    "answers.jsonl": "file",
    "answers-v1.jsonl": "file",
    "answers-v2.jsonl": "file",
    "baseline.jsonl": "file",
    "candidate.jsonl": "file",
    "prod.jsonl": "file",
    "baseline": "name",  # run ids of the reader's own runs
    "candidate": "name",
    "traces/traces.otlp.jsonl": "file",  # what `ragmeter collect --out traces/` wrote
}
#: words (in this order, next to each other) that make a command parse-only, with the reason: for
#: commands that would wait (serve, open a browser) or need an optional extra CI does not install.
PARSE_ONLY: dict[tuple[str, ...], str] = {
    ("view",): "ragmeter view serves the run store until Ctrl-C",
    ("collect",): "ragmeter collect receives traces until Ctrl-C",
    ("--engine", "ray"): "the Ray engine needs the ray extra and starts a Ray runtime",
}
_OFFLINE_JUDGES = frozenset({"local"})
_OFFLINE_EMBEDDINGS = frozenset({"local", "none"})


def _pages() -> list[Path]:
    return markdown_pages(ROOT, PAGES)


def _blocks() -> list[Block]:
    return [b for page in _pages() for b in extract_blocks(page, page.relative_to(ROOT))]


BLOCKS = _blocks()
COMMANDS = [c for b in BLOCKS for c in ragmeter_commands(b)]


# ---------------------------------------------------------------------------------------------
# parsing against the CLI


def _option_values(argv: tuple[str, ...], *names: str) -> list[str]:
    """Values given to options ``names`` (``--opt v``, ``--opt=v``, ``-mv``)."""
    values = []
    for k, word in enumerate(argv):
        for name in names:
            if word == name and k + 1 < len(argv):
                values.append(argv[k + 1])
            elif name.startswith("--") and word.startswith(name + "="):
                values.append(word[len(name) + 1 :])
            elif len(name) == 2 and word.startswith(name) and len(word) > 2 and not word.startswith("--"):
                values.append(word[2:])
    return values


#: options whose value a command creates (a file, a store, a run id): later commands may use it
_OUTPUT_OPTIONS = ("--out", "-o", "--output", "-O", "--run-id")


def why_not_run(command: Command, produced: frozenset[str] = frozenset()) -> str | None:
    """Why a command is parsed only (None: it runs). ``produced``: files that earlier commands of
    the block write (``--out``): there, and as this command's own output, a placeholder word is a
    real file."""
    produced = produced | set(_option_values(command.argv, *_OUTPUT_OPTIONS))
    used = [w for w in command.argv if w in PLACEHOLDERS and w not in produced]
    if used:
        return f"placeholder {', '.join(used)}"
    for words, reason in PARSE_ONLY.items():
        if _contains(command.argv, words):
            return reason
    judges = [j for j in _option_values(command.argv, "--judge") if j not in _OFFLINE_JUDGES]
    if judges:
        return f"judge {judges[0]}"
    embeddings = [e for e in _option_values(command.argv, "--embeddings") if e not in _OFFLINE_EMBEDDINGS]
    if embeddings:
        return f"embeddings {embeddings[0]}"
    if _option_values(command.argv, "--base-url", "--embeddings-base-url"):
        return "a --base-url"
    return None


def _contains(argv: tuple[str, ...], words: tuple[str, ...]) -> bool:
    return any(argv[k : k + len(words)] == words for k in range(len(argv) - len(words) + 1))


def block_runs(commands: list[Command]) -> bool:
    """True when every command of the block can run (in order: outputs feed later commands)."""
    produced: set[str] = set()
    for command in commands:
        if why_not_run(command, frozenset(produced)) is not None:
            return False
        produced.update(_option_values(command.argv, *_OUTPUT_OPTIONS))
    return bool(commands)


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    for name in SANDBOX_DIRS:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _substitute(command: Command, where: Path) -> list[str]:
    """argv with each file/dir placeholder replaced by an existing empty one under ``where``."""
    out = []
    for k, word in enumerate(command.argv):
        kind = PLACEHOLDERS.get(word)
        if kind in ("file", "dir"):
            target = where / "_placeholders" / str(k) / Path(word.replace("*", "any")).name
            if kind == "dir":
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.touch()
            out.append(str(target))
        else:
            out.append(word)
    return out


def _fail(command: Command, problem: str) -> str:
    return f"{command.where}: `{command.shown()}`\n  {problem}"


@pytest.mark.parametrize("command", COMMANDS, ids=[f"{c.where}" for c in COMMANDS])
def test_command_parses(command: Command, sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(sandbox / command.cwd)
    for name, value in command.env:
        monkeypatch.setenv(name, value)
    parsed = parse_command(cli, _substitute(command, sandbox))
    if parsed.error is not None:
        hint = ""
        if "does not exist" in parsed.error:
            hint = "\n  (a reader's own file? list it in PLACEHOLDERS in tests/docs/test_docs_commands.py)"
        pytest.fail(_fail(command, f"does not parse: {parsed.error}{hint}"), pytrace=False)


# ---------------------------------------------------------------------------------------------
# running the offline blocks


def _runnable_blocks() -> Iterator[tuple[Block, list[Command]]]:
    for block in BLOCKS:
        commands = [c for c in COMMANDS if c.block is block]
        if block_runs(commands):
            yield block, commands


RUNNABLE = list(_runnable_blocks())


@pytest.mark.parametrize(("block", "commands"), RUNNABLE, ids=[f"{b.path}:{b.line}" for b, _ in RUNNABLE])
def test_offline_block_runs(
    block: Block, commands: list[Command], sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    for command in commands:
        cwd = sandbox / command.cwd
        monkeypatch.chdir(cwd)
        env = dict(command.env)
        for entry in filter(None, env.get("PYTHONPATH", "").split(":")):
            monkeypatch.syspath_prepend(str(cwd / entry))
        result = runner.invoke(cli, list(command.argv), env=env)
        if result.exit_code != block.expect_exit:
            tail = "\n    ".join(result.output.splitlines()[-30:])
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                exc = result.exception
                tail += "\n    " + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            hint = (
                "\n  (a reader's own file or run? list it in PLACEHOLDERS; a command that must not run"
                " here: PARSE_ONLY; a failure the page shows on purpose: <!-- docs-test: exit=N -->)"
            )
            problem = f"exited {result.exit_code}, expected {block.expect_exit}; output:\n    {tail}{hint}"
            pytest.fail(_fail(command, problem), pytrace=False)


def test_the_quick_start_is_found_and_run() -> None:
    """Guards the extractor: the README's main job must be among the commands that are run."""
    run = {c.shown() for _, cs in RUNNABLE for c in cs if str(c.block.path) == "README.md"}
    assert "ragmeter evaluate examples/rag_samples.jsonl" in run
    zh = {c.shown() for _, cs in RUNNABLE for c in cs if str(c.block.path) == "README.zh-CN.md"}
    assert "ragmeter evaluate examples/rag_samples.jsonl" in zh
    assert len(COMMANDS) >= 40, [c.where for c in COMMANDS]


def test_both_readmes_have_the_same_quick_start() -> None:
    """The two Quick start commands (the first two shell blocks) read the same in both READMEs."""

    def quick_start(name: str) -> list[tuple[str, ...]]:
        blocks = extract_blocks(ROOT / name)[:2]
        return [tuple(text for _, text in b.body) for b in blocks]

    assert quick_start("README.zh-CN.md") == quick_start("README.md")


def test_placeholders_are_used() -> None:
    """A placeholder or parse-only entry no page uses any more is dead weight: remove it."""
    used = {w for c in COMMANDS for w in c.argv}
    assert sorted(set(PLACEHOLDERS) - used) == []
    assert [w for w in PARSE_ONLY if not any(_contains(c.argv, w) for c in COMMANDS)] == []


# ---------------------------------------------------------------------------------------------
# metric names


def _unknown_metric(name: str) -> bool:
    try:
        get_metric(name)
    except ConfigError:
        return True
    except TypeError:  # a known metric that needs arguments
        return False
    return False


def _python_metric_lists(page: Path) -> Iterator[tuple[int, str]]:
    """(line, name) of metric names in the Python blocks: ``evaluate(data, [..])``,
    ``metrics=[..]`` and ``get_metric("..")``. A block that is not valid Python is not read."""
    text = page.read_text(encoding="utf-8")
    for m in re.finditer(r"^([ \t]*)```python[^\n]*\n(.*?)^\1```", text, flags=re.S | re.M):
        first = text.count("\n", 0, m.start(2)) + 1
        body = "\n".join(line[len(m.group(1)) :] for line in m.group(2).splitlines())
        try:
            tree = ast.parse(body)
        except SyntaxError:  # not a program (a side-by-side comparison, a REPL session): no calls to read
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            fname = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            candidates: list[ast.AST] = [kw.value for kw in node.keywords if kw.arg == "metrics"]
            if fname in ("evaluate", "aevaluate") and len(node.args) >= 2:
                candidates.append(node.args[1])
            if fname == "get_metric" and node.args:
                candidates.append(ast.List(elts=[node.args[0]]))
            for cand in candidates:
                elts = cand.elts if isinstance(cand, (ast.List, ast.Tuple)) else [cand]
                for elt in elts:
                    if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                        for name in elt.value.split(","):
                            yield first + elt.lineno - 1, name.strip()


def test_metric_names_in_the_docs_exist() -> None:
    bad = []
    for command in COMMANDS:
        for value in _option_values(command.argv, "--metrics", "-m", "--metric"):
            bad += [
                f"{command.where}: `{command.shown()}`: {n!r}"
                for n in value.split(",")
                if _unknown_metric(n.strip())
            ]
    for page in _pages():
        bad += [
            f"{page.relative_to(ROOT)}:{line}: {n!r}"
            for line, n in _python_metric_lists(page)
            if _unknown_metric(n)
        ]
    assert not bad, "unknown metric names (see `ragmeter metrics`):\n" + "\n".join(bad)


# ---------------------------------------------------------------------------------------------
# the description files and the Chinese glossary


def _builtin_metric_names() -> set[str]:
    import ragmeter.metrics  # noqa: F401  (registers the built-in metrics)

    return {n for n, cls in list_metrics().items() if cls.__module__.startswith("ragmeter.metrics.")}


@pytest.mark.parametrize("lang", description_languages())
def test_description_file_covers_exactly_the_builtin_metrics(lang: str) -> None:
    texts = load_descriptions(lang)
    described, builtin = set(texts.metrics), _builtin_metric_names()
    assert not builtin - described, f"{texts.source}: no entry for {sorted(builtin - described)}"
    assert not described - builtin, (
        f"{texts.source}: entries for unknown metrics {sorted(described - builtin)}"
    )


def test_chinese_file_names_every_metric() -> None:
    texts = load_descriptions("zh")
    missing = sorted(n for n, t in texts.metrics.items() if t.term is None)
    assert not missing, f"{texts.source}: no Chinese term for {missing}"
    terms = [t.term for t in texts.metrics.values()]
    assert len(set(terms)) == len(terms), "two metrics share a Chinese term"


_GLOSSARY_ROW = re.compile(
    r"^\|\s*(?P<term>[^|]+?)\s*\|\s*`(?P<name>[a-z0-9_@]+)`\s*\|\s*(?P<desc>[^|]+?)\s*\|\s*$"
)


def test_chinese_glossary_agrees_with_the_description_file() -> None:
    """docs/zh/glossary.md lists each metric once as `| term | `name` | description |`, exactly as
    src/ragmeter/metrics/descriptions/zh.toml says (edit the TOML file, then copy the row)."""
    page = ROOT / "docs" / "zh" / "glossary.md"
    texts = load_descriptions("zh")
    seen: dict[str, int] = {}
    problems = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        m = _GLOSSARY_ROW.match(line)
        if not m:
            continue
        name, where = m.group("name"), f"docs/zh/glossary.md:{number}"
        if name in seen:
            problems.append(f"{where}: `{name}` is listed twice (also line {seen[name]})")
        seen[name] = number
        entry = texts.metrics.get(name)
        if entry is None:
            problems.append(f"{where}: `{name}` is not a built-in metric described in {texts.source}")
            continue
        expected = f"| {entry.term} | `{name}` | {entry.description} |"
        if (m.group("term"), m.group("desc")) != (entry.term, entry.description):
            problems.append(f"{where}: row differs from {Path(texts.source).name}; expected\n    {expected}")
    missing = sorted(set(texts.metrics) - set(seen))
    problems += [
        f"docs/zh/glossary.md: no row for `{n}`; add\n    | {texts.metrics[n].term} | `{n}` | {texts.metrics[n].description} |"
        for n in missing
    ]
    assert not problems, "\n".join(problems)


_ZH_HEADING = re.compile(r"^#{2,4}\s+(?P<term>[^`#]+?)\s*`(?P<name>[a-z0-9_]+)`\s*$")
_ZH_INLINE = re.compile(r"`(?P<name>[a-z0-9_]+)`（(?P<term>[^（）`]+)）")


def test_chinese_pages_use_the_glossary_terms() -> None:
    """In README.zh-CN.md and docs/zh, a metric's Chinese name is the term zh.toml gives it, where
    the two stand together: a heading `## 忠实度 `faithfulness`` or `faithfulness`（忠实度）.
    Full-width brackets right after a metric name always hold its term: write other remarks
    in the sentence, not in brackets."""
    texts = load_descriptions("zh")
    problems = []
    for page in [ROOT / "README.zh-CN.md", *sorted((ROOT / "docs" / "zh").glob("*.md"))]:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            found = [m.groupdict() for m in _ZH_INLINE.finditer(line)]
            heading = _ZH_HEADING.match(line)
            if heading:
                found.append(heading.groupdict())
            for hit in found:
                entry = texts.metrics.get(hit["name"])
                where = f"{page.relative_to(ROOT)}:{number}"
                if entry is not None and hit["term"].strip() != entry.term:
                    problems.append(
                        f"{where}: `{hit['name']}` is {entry.term!r} in zh.toml, not {hit['term']!r}"
                    )
    assert not problems, "\n".join(problems)


def test_readmes_link_each_other() -> None:
    head_en = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:6])
    head_zh = "\n".join((ROOT / "README.zh-CN.md").read_text(encoding="utf-8").splitlines()[:6])
    assert "(README.zh-CN.md)" in head_en
    assert "(README.md)" in head_zh


def test_relative_links_resolve() -> None:
    problems = []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"\]\((?!https?://|#|mailto:)([^)#\s]+)(#[^)]*)?\)", text):
            if not (page.parent / m.group(1)).exists():
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{page.relative_to(ROOT)}:{line}: broken link {m.group(1)}")
    assert not problems, "\n".join(problems)
