"""What a query's assets give people: ``show`` (one asset as a file), ``report`` and ``export-preferences``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hysem_assets.cli.options import load_asset, output_option, query_option
from hysem_assets.settings.queries import get_query


@click.command()
@click.argument("asset")
@query_option()
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "parquet"]), default="csv", show_default=True)
@output_option("File to write (default: stdout).")
def show(asset: str, slug: str, fmt: str, output: Path | None) -> None:
    """Export one materialized asset partition, e.g. ``hysem show raw_metadata/pubmed --query X``.

    CSV cells that a spreadsheet would evaluate (``=``, ``+``, ``-``, ``@``) start with an apostrophe, and a
    list is its items joined with "; ".
    """
    from hysem_assets.core.exports import frame_text

    if output is not None and not output.parent.is_dir():
        raise click.UsageError(f"-o {output}: the folder {output.parent} does not exist.")
    frame = load_asset(asset, slug)
    if frame is None:
        raise click.ClickException(f"{asset} is not materialized for {slug!r}. Run `hysem materialize --query {slug}`.")
    if fmt == "parquet":
        if output is None:
            raise click.UsageError("--format parquet needs -o FILE.")
        frame.to_parquet(output, index=False)
    elif output:
        output.write_text(frame_text(frame, fmt), encoding="utf-8")
    else:
        sys.stdout.write(frame_text(frame, fmt))
    if output:
        click.echo(f"Wrote {len(frame):,} rows to {output}.", err=True)


@click.command()
@query_option()
@output_option("The report to write: .html (self-contained page) or .md.", required=True)
def report(slug: str, output: Path) -> None:
    """Write a query's review report: PRISMA flow, topic map, evidence table, saved reports, answers."""
    from hysem_assets.review.report import NotMaterialized, render_html, render_markdown, stored_report

    suffix = output.suffix.lower()
    if suffix not in (".html", ".htm", ".md"):
        raise click.UsageError(f"-o {output}: the report is written as .html or .md.")
    spec = get_query(slug)
    try:
        review = stored_report(slug, spec.title or slug, lambda key: load_asset(key, slug))
    except NotMaterialized as exc:
        raise click.ClickException(str(exc)) from None
    text = render_markdown(review) if suffix == ".md" else render_html(review)
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"Cannot write {output}: {exc.strerror}.") from None
    click.echo(
        f"Wrote the review report of {slug!r} ({len(review.evidence):,} included studies) to {output}.", err=True
    )


@click.command("export-preferences")
@output_option("Copy the dataset to this file.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "parquet"]), default="jsonl", show_default=True)
def export_preferences(output: Path | None, fmt: str) -> None:
    """Materialize preference_dataset from every query's preference log (DPO: prompt, chosen, rejected)."""
    from hysem_assets.runs.launch import RunFailed, export_preference_dataset

    try:
        pairs, written = export_preference_dataset(fmt, output)
    except RunFailed as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{pairs:,} preference pairs -> {written}")


COMMANDS = (show, report, export_preferences)
