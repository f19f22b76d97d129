"""The extractor and parser behind test_docs_commands.py, on small made-up pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.doc_commands import extract_blocks, parse_command, ragmeter_commands, split_commands
from ragmeter.cli.main import cli


def _commands(tmp_path: Path, text: str) -> list[tuple[int, tuple[str, ...], dict[str, str], str]]:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return [(c.line, c.argv, dict(c.env), c.cwd) for b in extract_blocks(page) for c in ragmeter_commands(b)]


def test_only_shell_blocks_are_read(tmp_path: Path) -> None:
    page = """# t

```
ragmeter synopsis DATA [--x]
```

```python
ragmeter = 1
```

```text
ragmeter evaluate out.jsonl
```

```bash
ragmeter metrics
```

```sh
ragmeter metrics --json
```

~~~shell
ragmeter metrics --lang zh
~~~
"""
    assert [(line, argv) for line, argv, _, _ in _commands(tmp_path, page)] == [
        (16, ("metrics",)),
        (20, ("metrics", "--json")),
        (24, ("metrics", "--lang", "zh")),
    ]


def test_continuations_chains_pipes_comments_and_redirections(tmp_path: Path) -> None:
    page = r"""```bash
pip install -e . && ragmeter evaluate examples/rag_samples.jsonl   # the main job
ragmeter evaluate data.jsonl \
    --judge openai:gpt-4o-mini \
    -m faithfulness 2>&1 | tee log.txt
ragmeter runs list --json > runs.jsonl; ragmeter metrics
# ragmeter evaluate commented-out.jsonl
ragmeter evaluate "a file.jsonl" --base-url http://h/v1#frag --map "question=my col"
pip install ragmeter
```
"""
    assert [(line, argv) for line, argv, _, _ in _commands(tmp_path, page)] == [
        (2, ("evaluate", "examples/rag_samples.jsonl")),
        (3, ("evaluate", "data.jsonl", "--judge", "openai:gpt-4o-mini", "-m", "faithfulness")),
        (6, ("runs", "list", "--json")),
        (6, ("metrics",)),
        (8, ("evaluate", "a file.jsonl", "--base-url", "http://h/v1#frag", "--map", "question=my col")),
    ]


def test_console_prompts_output_and_continuation_prompts(tmp_path: Path) -> None:
    page = r"""```console
$ ragmeter evaluate examples/rag_samples.jsonl -m token_f1 \
> --out runs
run 2026 ... ragmeter evaluate is not a command here
$ ragmeter runs show latest --out runs
```
"""
    assert [(line, argv) for line, argv, _, _ in _commands(tmp_path, page)] == [
        (2, ("evaluate", "examples/rag_samples.jsonl", "-m", "token_f1", "--out", "runs")),
        (5, ("runs", "show", "latest", "--out", "runs")),
    ]


def test_env_prefixes_exports_cd_and_python_m(tmp_path: Path) -> None:
    page = """```bash
export DEEPSEEK_API_KEY=sk-x
PYTHONPATH=examples/docs time ragmeter evaluate t.jsonl --retriever toy:retrieve
cd examples
python -m ragmeter evaluate rag_samples.jsonl
python3 -m ragmeter metrics
```
"""
    found = _commands(tmp_path, page)
    assert found[0][1:] == (
        ("evaluate", "t.jsonl", "--retriever", "toy:retrieve"),
        {"DEEPSEEK_API_KEY": "sk-x", "PYTHONPATH": "examples/docs"},
        ".",
    )
    assert found[1][1:] == (("evaluate", "rag_samples.jsonl"), {"DEEPSEEK_API_KEY": "sk-x"}, "examples")
    assert found[2][1] == ("metrics",)


def test_indented_fence_in_a_list(tmp_path: Path) -> None:
    page = """- step one:

  ```bash
  ragmeter metrics --lang zh
  ```
"""
    assert _commands(tmp_path, page)[0][:2] == (4, ("metrics", "--lang", "zh"))


def test_expected_exit_marker(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- docs-test: exit=1 -->\n```bash\nragmeter metrics\n```\n\n```bash\nx\n```\n")
    assert [b.expect_exit for b in extract_blocks(page)] == [1, 0]
    page.write_text("<!-- docs-test: skip -->\n```bash\nragmeter metrics\n```\n")
    with pytest.raises(ValueError, match=r"page.md:1: bad docs-test marker"):
        extract_blocks(page)


def test_split_commands_keeps_quoted_operators() -> None:
    assert split_commands("ragmeter x --criteria 'a | b && c' | head -n 2") == [
        ["ragmeter", "x", "--criteria", "a | b && c"],
        ["head", "-n", "2"],
    ]


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["metrics", "--lang", "zh"], None),
        (["evaluate", "x.jsonl", "-m", "faithfulness", "--judge", "openai:gpt-4o-mini"], None),
        (["runs", "show", "latest", "--samples"], None),
        (["evaluate", "--help"], None),
        (["--version"], None),
        (
            ["metrics", "--lang", "fr"],
            "ragmeter metrics: Invalid value for '--lang': 'fr' is not one of 'en', 'zh'.",
        ),
        (["evaluate", "x.jsonl", "--no-such-option"], "ragmeter evaluate: No such option"),
        (
            ["evaluate", "x.jsonl", "--structured", "json"],
            "ragmeter evaluate: Invalid value for '--structured'",
        ),
        (["evaluat", "x.jsonl"], "ragmeter: No such command 'evaluat'."),
        (["runs", "sho", "latest"], "ragmeter runs: No such command 'sho'."),
        (["runs"], "ragmeter runs: missing command"),
        (
            ["agreement", "no/such/file.jsonl"],
            "ragmeter agreement: Invalid value for 'FILE... | RUN'",
        ),
        (["compare", "v1"], "ragmeter compare: Missing argument 'RUN_B'."),
        (
            ["evaluate", "x.jsonl", "--judge-concurrency", "2"],
            "ragmeter evaluate: --judge-concurrency is hidden",
        ),
    ],
)
def test_parse_command(argv: list[str], error: str | None) -> None:
    parsed = parse_command(cli, argv)
    if error is None:
        assert parsed.error is None
    else:
        assert parsed.error is not None and parsed.error.startswith(error), parsed.error


def test_parse_command_gives_the_leaf_parameters() -> None:
    parsed = parse_command(cli, ["evaluate", "x.jsonl", "-m", "faithfulness,token_f1", "--lang", "zh"])
    assert parsed.path == "ragmeter evaluate"
    assert parsed.params["metrics"] == "faithfulness,token_f1" and parsed.params["lang"] == "zh"
