"""``hysem pdf``: PDFs the reviewer obtained, attached to works so that ``pdfs`` takes them up."""

from __future__ import annotations

from pathlib import Path

import click

from hysem_assets.cli.options import query_option


@click.group()
def pdf() -> None:
    """PDFs obtained outside open access (a library copy, an author's reprint), attached to works of a query.

    An attached PDF is checked like a download, kept under $HYSEM_HOME/attachments/QUERY/, and taken by
    `pdfs` before any download for its work; materialize `pdfs` and what follows to pass it on."""


@pdf.command("attach")
@click.argument("work")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@query_option("Query slug (partition) the work belongs to.")
def pdf_attach(work: str, path: Path, slug: str) -> None:
    """Attach the PDF at PATH to WORK (its DOI, PMID or cluster id): refused, with nothing written, when
    it is not a whole PDF, is over the profile's size cap, or is attached to another work already.
    Another file replaces the work's attachment."""
    from hysem_assets.fulltext.attach import attach_file

    click.echo(attach_file(slug, work, path).message)


@pdf.command("list")
@query_option("Query slug (partition) whose attached PDFs to list.")
def pdf_list(slug: str) -> None:
    """The attached PDFs: work, DOI or PMID, file name, size, when attached."""
    from hysem_assets.fulltext.attach import attachments
    from hysem_assets.settings.queries import get_query

    get_query(slug)
    attached = attachments(slug)
    for a in attached:
        named = a.doi or (f"pmid:{a.pmid}" if a.pmid else "-")
        click.echo(f"{a.cluster_id}\t{named}\t{a.filename}\t{a.bytes:,} bytes\t{a.attached_at}")
    click.echo(f"{len(attached):,} PDF(s) attached to works of {slug!r}.", err=True)


@pdf.command("detach")
@click.argument("work")
@query_option("Query slug (partition) the work belongs to.")
def pdf_detach(work: str, slug: str) -> None:
    """Take the attached PDF off WORK (its DOI, PMID or cluster id) and delete the kept copy; the next
    `pdfs` run looks for an open-access copy again."""
    from hysem_assets.fulltext.attach import detach_pdf

    removed = detach_pdf(slug, work)
    click.echo(f"Detached {removed.filename} from {removed.work}. Materialize pdfs (and what follows) to pass it on.")


COMMANDS = (pdf,)
