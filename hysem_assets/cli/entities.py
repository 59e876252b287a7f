"""``hysem entities tag`` and ``relate``: the shipped entity model on files of text."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path

import click

from hysem_assets.cli.options import output_option
from hysem_assets.entities.corpus import DISEASE, SCIENTIFIC

_TYPES = (*SCIENTIFIC, *DISEASE)


@click.group()
def entities() -> None:
    """Named entities (methods, tasks, metrics, materials, diseases, ...) and the relations between them."""


def _open(output: Path | None):
    return nullcontext(sys.stdout) if output is None else output.open("w", encoding="utf-8")


def _say(line: str) -> None:
    click.echo(line, err=True)


@entities.command("tag")
@click.argument("input_file", metavar="INPUT", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_option("JSON Lines file (default: stdout).")
@click.option("--types", "types", multiple=True, type=click.Choice(_TYPES), help="Keep only these types (repeatable).")
def tag(input_file: Path, output: Path | None, types: tuple[str, ...]) -> None:
    """Tag entities in INPUT: JSON Lines of {"id", "text"}, or a CoNLL file (token first, blank line between
    sentences). One JSON line per document (text) or per sentence (CoNLL) with ``tokens`` and BIO ``tags``."""
    from hysem_assets.entities.files import tag_file
    from hysem_assets.entities.tagger import load

    try:
        with _open(output) as out:
            written, found = tag_file(load(), input_file, out, types or _TYPES, _say)
    except (ValueError, UnicodeDecodeError) as exc:
        raise click.ClickException(str(exc)) from exc
    _say(f"{written} lines, {found} entities")


@entities.command("relate")
@click.argument("input_file", metavar="INPUT", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_option("JSON Lines file (default: stdout).")
def relate(input_file: Path, output: Path | None) -> None:
    """Label the relation between two entities marked [[ … ]] and << … >> in each JSON line's ``text``.

    Each line is written back with ``label`` and ``probability``; a line without both markers is named on
    stderr and written with no label, the others are still labelled, and the exit status is 1."""
    from hysem_assets.entities.files import relate_file
    from hysem_assets.entities.tagger import load

    with _open(output) as out:
        labelled, refused = relate_file(load(), input_file, out, _say)
    _say(f"{labelled} labelled" + (f", {refused} refused" if refused else ""))
    if refused:
        raise click.exceptions.Exit(1)


COMMANDS = (entities,)
