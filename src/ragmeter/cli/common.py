"""Options and error handling shared by the commands. The environment is read here, at the edge."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ragmeter.errors import ConfigError, DatasetError, RagmeterError, RunError

if TYPE_CHECKING:
    from ragmeter.report.gates import GateCheck

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_GATE_FAILED = 1  # a gate failed: --fail-under, --max-invalid, --fail-on-invalid, --fail-on-regression
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def judge_options(f: F) -> F:
    """--judge, --base-url, --api-key-env, --embeddings, limits, cache, prices."""
    opts = [
        click.option(
            "--judge",
            "judge",
            default=None,
            metavar="SPEC",
            help="Judge: 'local' (default, offline), 'local:FILE' (with a calibration file that "
            "`ragmeter calibrate` wrote), 'openai:MODEL', 'openai-compatible:MODEL' "
            "(with --base-url), 'azure:DEPLOYMENT', 'ollama:MODEL', 'vllm:MODEL'.",
        ),
        click.option("--base-url", default=None, help="Base URL of an OpenAI-compatible endpoint (…/v1)."),
        click.option(
            "--api-key-env",
            default=None,
            metavar="VAR",
            help="Environment variable holding the API key (default OPENAI_API_KEY for openai:).",
        ),
        click.option(
            "--embeddings",
            default=None,
            metavar="SPEC",
            help="Embeddings for metrics that embed: 'local' (default) or a provider spec like --judge.",
        ),
        click.option("--embeddings-base-url", default=None, help="Base URL for --embeddings."),
        click.option(
            "--judge-concurrency",
            type=click.IntRange(min=1),
            default=None,
            hidden=True,
            help="Old name of --concurrency (requests in flight per endpoint).",
        ),
        click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per request."),
        click.option(
            "--max-retries", type=int, default=6, show_default=True, help="Retries on 429/5xx/timeout."
        ),
        click.option("--rpm", type=int, default=None, help="Requests-per-minute limit."),
        click.option("--tpm", type=int, default=None, help="Tokens-per-minute limit."),
        click.option(
            "--structured",
            type=click.Choice(
                [
                    "auto",
                    "json_schema",
                    "json_object_schema",
                    "guided_json",
                    "ollama_format",
                    "json_object",
                    "none",
                ]
            ),
            default="auto",
            show_default=True,
            help="How the JSON schema of a reply is sent to the server.",
        ),
        click.option("--price-prompt", type=float, default=None, help="Price per 1k prompt tokens."),
        click.option("--price-completion", type=float, default=None, help="Price per 1k completion tokens."),
        click.option(
            "--price-cached-prompt",
            type=float,
            default=None,
            help="Price per 1k prompt tokens served from the server's prompt cache (default: --price-prompt).",
        ),
        click.option(
            "--cache-dir",
            type=click.Path(path_type=Path),
            default=None,
            help="LLM cache directory (default: the --out directory). ",
        ),
        click.option("--no-cache", is_flag=True, help="Do not read or write the LLM cache."),
        click.option(
            "--prompts-dir",
            type=click.Path(path_type=Path, exists=True, file_okay=False),
            default=None,
            help="Directory of prompt overrides (same layout as ragmeter/judges/prompts).",
        ),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


JUDGE_OPTION_NAMES = (
    "judge",
    "base_url",
    "api_key_env",
    "embeddings",
    "embeddings_base_url",
    "judge_concurrency",
    "timeout",
    "max_retries",
    "rpm",
    "tpm",
    "structured",
    "price_prompt",
    "price_completion",
    "price_cached_prompt",
    "cache_dir",
    "no_cache",
    "prompts_dir",
)


#: the run's default for --concurrency (requests in flight per endpoint)
DEFAULT_CONCURRENCY = 16


def concurrency_option(help_text: str) -> Callable[[F], F]:
    """--concurrency / -c: requests in flight per judge endpoint (``RunConfig.concurrency``)."""
    return click.option(
        "--concurrency",
        "-c",
        type=click.IntRange(min=1),
        default=None,
        help=f"{help_text} [default: {DEFAULT_CONCURRENCY}]",
    )


def resolve_concurrency(
    concurrency: int | None, judge_concurrency: int | None, default: int = DEFAULT_CONCURRENCY
) -> int:
    """The run's --concurrency, accepting the old --judge-concurrency as another name for it."""
    if judge_concurrency is not None:
        if concurrency is not None and concurrency != judge_concurrency:
            raise click.UsageError(
                f"--judge-concurrency is the old name of --concurrency; give one of them, not "
                f"--concurrency {concurrency} and --judge-concurrency {judge_concurrency}"
            )
        click.echo(
            "note: --judge-concurrency is now --concurrency (requests in flight per endpoint)", err=True
        )
        return judge_concurrency
    return default if concurrency is None else concurrency


def judge_spec_from_options(opts: dict[str, Any], default_cache_dir: Path | None) -> dict[str, Any]:
    """The JSON-able recipe of a judge: stored in the run record so ``--resume`` can rebuild it."""
    cache_dir = opts.get("cache_dir") or default_cache_dir
    spec = opts.get("judge")
    if isinstance(spec, str) and spec.strip().startswith("local:") and spec.strip()[6:].strip():
        # a calibration file by its absolute path: --resume may run from another directory
        spec = "local:" + str(Path(spec.strip()[6:].strip()).expanduser().resolve())
    return {
        "spec": spec,
        "base_url": opts.get("base_url"),
        "api_key_env": opts.get("api_key_env"),
        "embeddings": opts.get("embeddings"),
        "embeddings_base_url": opts.get("embeddings_base_url"),
        "config": {
            "timeout_s": opts.get("timeout", 60.0),
            "max_retries": opts.get("max_retries", 6),
            "rpm": opts.get("rpm"),
            "tpm": opts.get("tpm"),
            "structured": opts.get("structured", "auto"),
            "prompt_price_per_1k": opts.get("price_prompt"),
            "completion_price_per_1k": opts.get("price_completion"),
            "cached_prompt_price_per_1k": opts.get("price_cached_prompt"),
        },
        "cache_path": None
        if opts.get("no_cache") or cache_dir is None
        else str(Path(cache_dir) / "llm-cache.sqlite"),
        "prompts_dir": None if opts.get("prompts_dir") is None else str(opts["prompts_dir"]),
    }


def judge_from_spec(recipe: dict[str, Any]) -> Any:
    """Build the judge a recipe describes (see :func:`judge_spec_from_options`)."""
    from ragmeter.judges.factory import make_judge_from_recipe

    # The CLI's one concurrency knob is --concurrency, handed to the judge by the run; a limit
    # that a run recorded before that (the old --judge-concurrency) does not override it.
    config = {k: v for k, v in (recipe.get("config") or {}).items() if k != "concurrency"}
    return make_judge_from_recipe({**recipe, "config": config})


def handle_errors(f: F) -> F:
    """Map ragmeter errors to exit codes with a one-paragraph message on stderr."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except KeyboardInterrupt:
            click.echo("interrupted: finished jobs are recorded; resume with --resume RUN", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except DatasetError as e:
            problems = getattr(e, "problems", None)
            if problems:
                click.echo(f"error: {len(problems)} problem(s) in the input:", err=True)
                for p in problems[:50]:
                    click.echo(f"  {p}", err=True)
                if len(problems) > 50:
                    click.echo(f"  ... and {len(problems) - 50} more", err=True)
            else:
                click.echo(f"error: {e}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except (ConfigError, RunError) as e:
            click.echo(f"error: {e}", err=True)
            _echo_notes(e)
            sys.exit(EXIT_BAD_INPUT)
        except RagmeterError as e:
            click.echo(f"error: {type(e).__name__}: {e}", err=True)
            _echo_notes(e)
            sys.exit(EXIT_BAD_INPUT)

    return wrapper  # type: ignore[return-value]


def out_option(f: F) -> F:
    """--out/-o: the run store directory."""
    return click.option(
        "--out",
        "-o",
        type=click.Path(path_type=Path, file_okay=False),
        default=Path("ragmeter-runs"),
        show_default=True,
        help="Run store directory (SQLite).",
    )(f)


def junit_option(f: F) -> F:
    return click.option(
        "--junit",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        metavar="FILE",
        help="Write the gates as JUnit XML (one test case per metric gate) for CI test reports.",
    )(f)


def finish_gates(
    checks: Sequence[GateCheck],
    *,
    junit: Path | None,
    suite: str,
    enforce: bool = True,
    properties: Mapping[str, Any] | None = None,
) -> None:
    """Write ``--junit``, name every failed gate on stderr, and exit 1 when one failed and
    ``enforce`` (the one place a gate turns into an exit code)."""
    from ragmeter.report.gates import write_junit

    if junit is not None:
        path = write_junit(junit, checks, suite, properties)
        click.echo(f"JUnit report written to {path}", err=True)
    failed = [c for c in checks if not c.passed]
    for c in failed:
        click.echo(f"{'gate failed' if enforce else 'gate not met (not enforced)'}: {c.message}", err=True)
    if failed and enforce:
        click.echo(f"{len(failed)} of {len(checks)} gate(s) failed", err=True)
        sys.exit(EXIT_GATE_FAILED)


def _echo_notes(error: BaseException) -> None:
    for note in getattr(error, "__notes__", ()):
        click.echo(f"  {note}", err=True)


def echo_json(obj: Any) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, default=str))


def parse_metric_list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise ConfigError("--metrics is empty")
    return names
