"""Records a reviewer already has: ``dedupe`` a bibliography export, ``extract`` a protocol's fields."""

from __future__ import annotations

from pathlib import Path

import click

from hysem_assets.cli.options import output_option
from hysem_assets.settings.protocols import DEFAULT_PROTOCOL, load_protocol

_INPUT = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command()
@click.argument("input_path", metavar="INPUT", type=_INPUT)
@output_option("Where to write the rows with a cluster_id column (.csv, .tsv, .parquet or .json).")
@click.option(
    "--explain",
    nargs=2,
    metavar="ID1 ID2",
    help="Print why these two records were or were not merged, instead of writing the rows.",
)
def dedupe(input_path: Path, output: Path | None, explain: tuple[str, str] | None) -> None:
    """Find duplicates in a bibliography export (CSV, RIS or BibTeX) with hysem's matcher.

    Writes the same rows in the same order with a ``cluster_id`` column: rows that
    share one are the same work. Problems in the input are reported, never dropped.
    ``--explain ID1 ID2`` prints the evidence for and against merging two records.
    """
    from hysem_assets.dedup.tabular import (
        BibliographyError,
        dedupe_table,
        explain_table,
        read_bibliography,
        write_table,
    )

    if not explain and output is None:
        raise click.UsageError("Give -o FILE for the deduplicated rows, or --explain ID1 ID2.")
    try:
        frame = read_bibliography(input_path)
        explanation, warnings = explain_table(frame, *explain) if explain else (None, [])
    except (BibliographyError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    if explanation is not None:
        for warning in (w for w in warnings if any(f"'{record_id}'" in w for record_id in explain)):
            click.echo(f"warning: {warning}", err=True)
        click.echo("\n".join(explanation.lines()))
        return
    result, warnings = dedupe_table(frame)
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    write_table(result, output)
    clusters = result["cluster_id"].nunique()
    click.echo(
        f"{len(result):,} records -> {clusters:,} works ({len(result) - clusters:,} duplicates); wrote {output}",
        err=True,
    )


@click.command()
@click.argument("input_path", metavar="INPUT", type=_INPUT)
@click.option(
    "--protocol",
    "protocol_name",
    default=DEFAULT_PROTOCOL,
    show_default=True,
    help="Review protocol of config/protocols whose fields to extract.",
)
@output_option("JSON Lines file of the results ('-' for standard output).", required=True, allow_dash=True)
def extract(input_path: Path, protocol_name: str, output: Path) -> None:
    """Extract a protocol's fields from records you already have, without the graph.

    INPUT is JSON Lines or CSV with ``id``, ``title``, ``abstract``, an optional full
    ``text`` and optional ``publication_types`` (PubMed's, "; "-separated). Each record is
    read as ``extracted_fields`` reads a work, by the profile's backend; the output has one
    JSON object per record: ``id``, each field's value, ``evidence`` (per field: each value's
    sentence and character offsets in the text read), ``status`` and ``error``. A line that
    cannot be read is reported with its number and skipped; the others are still written, and
    the exit status is 1 so a pipeline notices the records left out. When every record failed
    (a refused key, a model server down) the exit status is 1 too, with the first reasons.
    """
    from hysem_assets.extraction.records_file import RecordsFileError, extract_file

    protocol = load_protocol(protocol_name)

    def warn(problem) -> None:
        click.echo(f"warning: {input_path}, {problem}; skipped (fix the line and run again)", err=True)

    try:
        done = extract_file(input_path, protocol, lambda: click.open_file(str(output), "w", encoding="utf-8"), warn)
    except RecordsFileError as error:
        raise click.ClickException(str(error)) from None
    skipped = f"{len(done.problems):,} line{'' if len(done.problems) == 1 else 's'} of {input_path} skipped"
    click.echo(
        f"{done.records:,} records extracted with {protocol.name} ({done.statuses}); {skipped}; wrote {output}",
        err=True,
    )
    if done.all_failed:
        raise click.ClickException(f"{input_path}: {done.all_failed}; each record's reason is in {output}")
    if done.problems:
        raise click.ClickException(f"{skipped} (see the warnings above); the other records are in {output}")


COMMANDS = (dedupe, extract)
