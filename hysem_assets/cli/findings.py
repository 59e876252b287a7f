"""``hysem findings classify``: what a trial found for each comparison asked of it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hysem_assets.cli.options import output_option


@click.group()
def findings() -> None:
    """Findings of studies: the direction of a comparison's result and its evidence sentence."""


@findings.command("classify")
@click.argument("prompts", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--articles",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    required=True,
    help="Folder of the articles' texts, one PMC<PMCID>.txt each.",
)
@output_option("JSON Lines file (default: stdout).")
def classify(prompts: Path, articles: Path, output: Path | None) -> None:
    """Judge each prompt (PromptID, PMCID, Outcome, Intervention, Comparator columns) from its article.

    One JSON line per prompt: PromptID, label (significantly increased, significantly decreased or
    no significant difference), evidence (the sentence), confidence and section. A prompt whose
    article is missing is named on stderr; the others are still judged, and the exit status is 1.
    """
    from hysem_assets.findings.prompts_file import classify as classify_file

    def say(line: str) -> None:
        click.echo(line, err=True)

    try:
        if output is None:
            problems = classify_file(prompts, articles, sys.stdout, say)
        else:
            with output.open("w", encoding="utf-8") as handle:
                problems = classify_file(prompts, articles, handle, say)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    for problem in problems:
        say(problem)
    if problems:
        raise click.exceptions.Exit(1)


COMMANDS = (findings,)
