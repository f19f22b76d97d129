"""Find the ``ragmeter`` commands in the shell blocks of Markdown pages, to check them against the CLI.

A *shell block* is a fenced code block whose info string is ``bash``, ``sh``, ``shell``, ``zsh`` or
``console``. In a ``console`` block that has ``$ `` prompts, only the prompted lines are commands
(the rest is output); a block without prompts is all commands. Lines ending in ``\\`` continue on
the next line (a ``> `` continuation prompt is dropped); ``#`` starts a comment at the start of a
word outside quotes. A line is split into commands at ``&&``, ``||``, ``;``, ``|`` and ``&``;
redirections (``> file``, ``2>&1``) and ``NAME=value`` prefixes are taken off, ``export NAME=value``
and ``cd DIR`` carry over to the following commands of the block. A command is a ragmeter command
when its program is ``ragmeter`` (or ``python -m ragmeter``), after optional ``time`` / ``env``.

An HTML comment right above a block's fence, ``<!-- docs-test: exit=N -->``, says the block's
ragmeter commands are expected to exit with status N when run (default 0), e.g. a CI gate that is
shown failing.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh", "console"})
_FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")
_MARKER_RE = re.compile(r"<!--\s*docs-test:(?P<body>.*?)-->")
_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPERATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "|&"})
_REDIRECTS = frozenset({">", ">>", "<", ">&", "<&", "&>", "&>>", ">|"})


@dataclass(frozen=True)
class Block:
    """A fenced shell block: ``line`` is the 1-based line of its opening fence."""

    path: Path
    line: int
    lang: str
    body: tuple[tuple[int, str], ...]  # (line number, text without the fence's indentation)
    expect_exit: int = 0


@dataclass(frozen=True)
class Command:
    """One ragmeter command of a block. ``argv`` is what follows ``ragmeter``."""

    block: Block
    line: int
    source: str  # the logical line as written (continuations joined)
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = "."  # relative to where the block starts, after any `cd`

    @property
    def where(self) -> str:
        return f"{self.block.path}:{self.line}"

    def shown(self) -> str:
        return "ragmeter " + shlex.join(self.argv)


@dataclass
class _State:
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "."


def extract_blocks(path: Path, display: Path | None = None) -> list[Block]:
    """The shell blocks of a Markdown file, in order (``display``: the path to report)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    shown = display or path
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").lower()
        start = i
        body: list[tuple[int, str]] = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            text = lines[i]
            body.append((i + 1, text[len(indent) :] if text.startswith(indent) else text.lstrip()))
            i += 1
        i += 1
        if info in SHELL_LANGS:
            blocks.append(Block(shown, start + 1, info, tuple(body), _expected_exit(lines, start, shown)))
    return blocks


def _expected_exit(lines: list[str], fence_index: int, path: Path) -> int:
    j = fence_index - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    m = _MARKER_RE.search(lines[j]) if j >= 0 else None
    if not m:
        return 0
    settings = dict(part.partition("=")[::2] for part in m.group("body").split())
    unknown = set(settings) - {"exit"}
    if unknown or not settings.get("exit", "").isdigit():
        raise ValueError(
            f"{path}:{j + 1}: bad docs-test marker {m.group(0)!r}; the form is <!-- docs-test: exit=N -->"
        )
    return int(settings["exit"])


def logical_lines(block: Block) -> list[tuple[int, str]]:
    """(first line number, text) of each command line: prompts and output handled, continuations joined."""
    rows = list(block.body)
    prompted = block.lang == "console" and any(
        t.lstrip().startswith("$ ") or t.strip() == "$" for _, t in rows
    )
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(rows):
        number, text = rows[i]
        i += 1
        if prompted:
            stripped = text.lstrip()
            if not (stripped.startswith("$ ") or stripped == "$"):
                continue  # output
            text = stripped[1:]
        parts = [text]
        while _continues(parts[-1]) and i < len(rows):
            parts[-1] = parts[-1].rstrip()[:-1]
            nxt = rows[i][1]
            i += 1
            if prompted and nxt.lstrip().startswith("> "):
                nxt = nxt.lstrip()[2:]
            parts.append(nxt)
        joined = " ".join(p.strip() for p in parts).strip()
        if joined:
            out.append((number, joined))
    return out


def _continues(text: str) -> bool:
    stripped = _strip_comment(text).rstrip()
    return stripped.endswith("\\") and not stripped.endswith("\\\\")


def _strip_comment(text: str) -> str:
    """Cut a shell comment: ``#`` at the start of a word, outside quotes."""
    quote: str | None = None
    prev = " "
    for k, ch in enumerate(text):
        if quote:
            if ch == quote and (quote == "'" or prev != "\\"):
                quote = None
        elif ch in "'\"" and prev != "\\":
            quote = ch
        elif ch == "#" and prev in " \t":
            return text[:k]
        prev = ch
    return text


def split_commands(text: str) -> list[list[str]]:
    """Shell words of each simple command of a line, redirections removed."""
    lexer = shlex.shlex(_strip_comment(text), posix=True, punctuation_chars="|&;<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    tokens = list(lexer)
    commands: list[list[str]] = [[]]
    skip_next = False
    for k, tok in enumerate(tokens):
        if skip_next:
            skip_next = False
            continue
        if tok in _OPERATORS:
            commands.append([])
        elif tok in _REDIRECTS:
            # `2>` / `2>&1`: the fd number before the operator belongs to the redirection
            if commands[-1] and commands[-1][-1].isdigit() and k > 0 and tokens[k - 1] == commands[-1][-1]:
                commands[-1].pop()
            skip_next = True
        else:
            commands[-1].append(tok)
    return [c for c in commands if c]


def ragmeter_commands(block: Block) -> list[Command]:
    """The ragmeter commands of a block, each with the env and directory the block gave it."""
    state = _State()
    found: list[Command] = []
    for number, text in logical_lines(block):
        for words in split_commands(text):
            argv, env = _program(words, state)
            if argv is not None:
                found.append(Command(block, number, text, tuple(argv), tuple(sorted(env.items())), state.cwd))
    return found


def _program(words: list[str], state: _State) -> tuple[list[str] | None, dict[str, str]]:
    """(argv after `ragmeter`, env) when ``words`` runs ragmeter; (None, {}) otherwise (state updated)."""
    env = dict(state.env)
    k = 0
    while k < len(words) and (_ASSIGN_RE.match(words[k]) or words[k] in ("time", "env")):
        if _ASSIGN_RE.match(words[k]):
            name, _, value = words[k].partition("=")
            env[name] = value
        k += 1
    rest = words[k:]
    if not rest:
        state.env.update({n: v for n, v in env.items()})  # `NAME=value` alone sets a shell variable
        return None, {}
    if rest[0] == "export":
        for word in rest[1:]:
            if _ASSIGN_RE.match(word):
                name, _, value = word.partition("=")
                state.env[name] = value
        return None, {}
    if rest[0] == "cd" and len(rest) == 2:
        state.cwd = str(Path(state.cwd) / rest[1])
        return None, {}
    if rest[0] == "ragmeter":
        return rest[1:], env
    if len(rest) >= 3 and re.fullmatch(r"python(3(\.\d+)?)?", rest[0]) and rest[1:3] == ["-m", "ragmeter"]:
        return rest[3:], env
    return None, {}


def markdown_pages(root: Path, patterns: Iterable[str]) -> list[Path]:
    """The pages under ``root`` matching ``patterns`` (globs), sorted, without duplicates."""
    pages = {p for pattern in patterns for p in root.glob(pattern) if p.is_file()}
    return sorted(pages)


@dataclass(frozen=True)
class Parsed:
    error: str | None
    params: dict[str, Any]
    path: str  # the command path, e.g. "ragmeter runs show"


def parse_command(group: click.Group, argv: list[str], prog: str = "ragmeter") -> Parsed:
    """Parse ``argv`` (what follows the program name) as click would, invoking nothing: the group's
    ``make_context``, then each resolved subcommand's, ``resilient_parsing`` off, so unknown
    options, bad values, missing arguments and paths that must exist are errors; so is a hidden
    option (an old name that ``--help`` no longer shows)."""
    args, name, parent = list(argv), prog, None
    cmd: click.Command = group
    ctx: click.Context | None = None
    try:
        while True:
            ctx = cmd.make_context(name, args, parent=parent, resilient_parsing=False)
            hidden = _hidden_options_given(ctx)
            if hidden:
                return Parsed(
                    f"{ctx.command_path}: {', '.join(hidden)} is hidden (an old name kept for old scripts); "
                    "use what --help shows",
                    dict(ctx.params),
                    ctx.command_path,
                )
            if not isinstance(cmd, click.Group):
                return Parsed(None, dict(ctx.params), ctx.command_path)
            protected = getattr(ctx, "_protected_args", None)
            rest = [*(protected if protected is not None else ctx.protected_args), *ctx.args]
            if not rest:
                if cmd.invoke_without_command:
                    return Parsed(None, dict(ctx.params), ctx.command_path)
                return Parsed(f"{ctx.command_path}: missing command", {}, ctx.command_path)
            sub_name, sub, args = cmd.resolve_command(ctx, rest)
            assert sub is not None and sub_name is not None
            cmd, name, parent = sub, sub_name, ctx
    except click.exceptions.Exit as e:  # --help, --version
        path = ctx.command_path if ctx is not None else prog
        return Parsed(None if e.exit_code == 0 else f"exit {e.exit_code}", {}, path)
    except click.UsageError as e:
        path = e.ctx.command_path if e.ctx is not None else prog
        no_args = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2: help text as message
        message = "missing command" if isinstance(e, no_args) else e.format_message()
        return Parsed(f"{path}: {message}", {}, path)


def _hidden_options_given(ctx: click.Context) -> list[str]:
    """Hidden options that the command line gave (docs should show what ``--help`` shows)."""
    from click.core import ParameterSource

    return [
        param.opts[0]
        for param in ctx.command.params
        if isinstance(param, click.Option)
        and param.hidden
        and param.name is not None
        and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE
    ]
