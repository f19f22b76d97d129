"""ragmeter generate: a labelled test set from documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ragmeter.cli.common import (
    JUDGE_OPTION_NAMES,
    echo_json,
    handle_errors,
    judge_from_spec,
    judge_options,
    judge_spec_from_options,
    resolve_concurrency,
)


@click.command("generate")
@click.argument("docs", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@click.option("--n", "n", type=int, default=50, show_default=True, help="Rows to generate.")
@click.option(
    "--out",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path("testset.jsonl"),
    show_default=True,
    help="Output JSONL (written as rows are made).",
)
@judge_options
@click.option(
    "--offline",
    is_flag=True,
    help="No model: fill-in-the-blank questions from sentences (dates, numbers, names).",
)
@click.option("--lang", default=None, help="Language of the questions (default: each document's own).")
@click.option("--chunk-size", type=int, default=800, show_default=True, help="Chunk size in characters.")
@click.option("--overlap", type=int, default=150, show_default=True, help="Chunk overlap in characters.")
@click.option(
    "--kinds",
    default="single_hop",
    show_default=True,
    help="Comma-separated: single_hop, multi_hop, reasoning, user_style.",
)
@click.option("--num-questions-per-chunk", type=int, default=1, show_default=True, help="Questions per task.")
@click.option(
    "--no-verify", is_flag=True, help="Keep answers the chunk does not support (skips verify_claims)."
)
@click.option(
    "--drop-answerable-without-context",
    is_flag=True,
    help="Drop questions the model answers without the chunk (2 more calls per question).",
)
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(min=1),
    default=None,
    help="Tasks in flight, each asking the judge one request at a time [default: 4].",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the task order.")
@click.option(
    "--dry-run", is_flag=True, help="Count chunks and estimate calls, tokens and cost; call nothing."
)
@click.option("--resume", is_flag=True, help="Continue OUT, skipping the tasks already done.")
@click.option("--overwrite", is_flag=True, help="Replace OUT when it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar (default: when stderr is a terminal)."
)
@handle_errors
def generate_cmd(
    docs: tuple[Path, ...],
    n: int,
    out: Path,
    offline: bool,
    lang: str | None,
    chunk_size: int,
    overlap: int,
    kinds: str,
    num_questions_per_chunk: int,
    no_verify: bool,
    drop_answerable_without_context: bool,
    concurrency: int | None,
    seed: int,
    dry_run: bool,
    resume: bool,
    overwrite: bool,
    as_json: bool,
    progress: bool | None,
    **judge_opts: Any,
) -> None:
    """Generate a test set (questions, reference answers, reference contexts) from DOCS
    (.txt, .md, .html, .pdf files or folders). The output is JSONL that `ragmeter evaluate` reads.

    Needs an LLM judge (--judge); without one, --offline makes fill-in-the-blank questions.
    """
    from ragmeter.errors import ConfigError
    from ragmeter.judges.factory import is_local_spec
    from ragmeter.run.sync import run_sync
    from ragmeter.testset.estimate import estimate_generation
    from ragmeter.testset.generate import agenerate_testset

    opts = {k: judge_opts.get(k) for k in JUDGE_OPTION_NAMES}
    concurrency = resolve_concurrency(concurrency, opts.get("judge_concurrency"), default=4)
    if is_local_spec(opts.get("judge")) and not offline:
        raise ConfigError(
            "generating questions needs an LLM judge and none was named. Name one (--judge openai:gpt-4o-mini, "
            "or --judge openai-compatible:MODEL --base-url URL), or run offline with --offline: "
            "fill-in-the-blank questions built from sentences with a date, number or name as the answer "
            "(marked generator='offline-cloze')"
        )
    if offline and not is_local_spec(opts.get("judge")):
        raise ConfigError("give --offline or --judge, not both")
    recipe = judge_spec_from_options(opts, out.parent)
    # a dry run builds no judge (no API key needed): the prices come from the options
    judge = None if offline or dry_run else judge_from_spec(recipe)
    if judge is not None:
        from ragmeter.run.executor import apply_run_concurrency

        apply_run_concurrency(judge, concurrency)
    args: dict[str, Any] = dict(
        n=n,
        judge=judge,
        offline=offline,
        kinds=None if offline and kinds == "single_hop" else kinds,
        num_questions_per_chunk=num_questions_per_chunk,
        chunk_size=chunk_size,
        overlap=overlap,
        verify=not no_verify,
        drop_answerable_without_context=drop_answerable_without_context,
        seed=seed,
    )
    from ragmeter.judges.config import JudgeConfig

    estimate = estimate_generation(list(docs), price_config=JudgeConfig(**recipe["config"]), **args)
    if dry_run or not as_json:
        if as_json:
            echo_json(estimate.to_dict())
        else:
            click.echo(estimate.render(), err=not dry_run)
        if dry_run:
            return

    async def main() -> Any:
        try:
            return await agenerate_testset(
                list(docs),
                out=out,
                resume=resume,
                overwrite=overwrite,
                lang=lang,
                concurrency=concurrency,
                progress=progress,
                **args,
            )
        finally:
            if judge is not None:
                await judge.aclose()

    result = run_sync(main())
    stats = result.stats
    if as_json:
        echo_json({"out": str(out), "generator": result.generator, **stats.to_dict()})
        return
    click.echo(
        f"wrote {stats.n_rows} row(s) to {out} ({result.generator}); {stats.n_rows_resumed} from before"
    )
    if stats.dropped:
        click.echo("dropped: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.dropped.items())))
    for failure in stats.failed_tasks[:10]:
        click.echo(f"failed task: {failure}", err=True)
    if stats.n_rows < n:
        click.echo(
            f"note: {n} row(s) asked, {stats.n_rows} made: the documents gave no more "
            "(more documents, a smaller --chunk-size, more --kinds or --num-questions-per-chunk give more)",
            err=True,
        )
