"""``export``: a query's included studies (or all its works) as a bibliography or a table."""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd

from hysem_assets.cli.options import output_option, query_option
from hysem_assets.library.exports import EXPORT_FORMATS
from hysem_assets.settings.queries import get_query

CORPUS, SCREENING = "deduped_corpus", "screening"


@click.command("export")
@query_option()
@click.argument("fmt", metavar="FORMAT", type=click.Choice(EXPORT_FORMATS))
@click.option(
    "--included/--all",
    "included_only",
    default=True,
    show_default=True,
    help="Export the review's included studies (screening's `included` column), or every work of deduped_corpus.",
)
@output_option("File to write.", required=True)
def export(slug: str, fmt: str, included_only: bool, output: Path) -> None:
    """Export a query's included studies as BibTeX, RIS, CSV or XLSX, e.g. ``hysem export --query X bibtex -o
    review.bib``.

    The included studies are those the ``screening`` asset marks ``included`` (retracted works and notices
    never are); ``--all`` exports every work of ``deduped_corpus`` instead. BibTeX keys are those of the
    ``library`` asset whichever set is exported. CSV and XLSX hold one row per work with its authors and
    other lists as items joined with "; ", and no cell a spreadsheet would evaluate.
    """
    from hysem_assets.library.exports import write_works

    get_query(slug)
    if not output.parent.is_dir():
        raise click.UsageError(f"-o {output}: the folder {output.parent} does not exist.")
    corpus = _stored(CORPUS, slug)
    only = _included_ids(slug) if included_only else None
    count = write_works(corpus, fmt, output, only)
    what = "included studies" if included_only else "works"
    click.echo(f"Wrote {count:,} {what} of {slug!r} to {output} ({fmt}).", err=True)


def _stored(asset: str, slug: str) -> pd.DataFrame:
    """One stored asset table of query ``slug``; one line saying what to run when it is not materialized."""
    from hysem_assets.stores.tables import stored_asset

    return stored_asset(asset, slug, "export again", click.ClickException)


def _included_ids(slug: str) -> list[str]:
    """The cluster ids ``screening`` marks included."""
    from hysem_assets.screening.outcome import included_ids

    return included_ids(_stored(SCREENING, slug))


COMMANDS = (export,)
