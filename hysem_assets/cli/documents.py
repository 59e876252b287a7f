"""``hysem parse``: one PDF to Markdown with the code of the ``parsed_docs`` asset."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from hysem_assets.cli.options import output_option
from hysem_assets.parsing.options import OCR_ENGINES, PIPELINES, ParseOptions


@click.command()
@click.argument("pdf", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_option("Markdown file (default: stdout).")
@click.option(
    "--pipeline",
    type=click.Choice(PIPELINES),
    default="native",
    show_default=True,
    help="native: no model weights; standard: Docling's layout models from --artifacts-path.",
)
@click.option(
    "--artifacts-path",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder made by `docling-tools models download -o DIR` (standard pipeline).",
)
@click.option(
    "--ocr-engine",
    type=click.Choice(OCR_ENGINES),
    default=ParseOptions().ocr_engine,
    show_default=True,
    help="Native pipeline: OCR engine for pages without a usable text layer.",
)
def parse(pdf: Path, output: Path | None, pipeline: str, artifacts_path: Path | None, ocr_engine: str) -> None:
    """Parse one PDF to Markdown with the same code as the parsed_docs asset; exits 1 when it cannot."""
    from hysem_assets.parsing.parse import parse_pdf

    try:
        options = ParseOptions(pipeline=pipeline, artifacts_path=artifacts_path, ocr_engine=ocr_engine)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    document = parse_pdf(pdf, options)
    if document.error:
        raise click.ClickException(f"{pdf}: {document.error}")
    if not output:
        sys.stdout.write(document.markdown)
        return
    output.write_text(document.markdown, encoding="utf-8")
    unreadable = f", {document.unreadable_pages} unreadable" if document.unreadable_pages else ""
    click.echo(
        f"{pdf}: {document.pages} pages ({document.status}, {document.ocr_pages} by OCR{unreadable}), "
        f"{len(json.loads(document.furniture_json))} lines of page furniture left out, "
        f"{document.token_count:,} tokens ({document.parser}) -> {output}",
        err=True,
    )


COMMANDS = (parse,)
