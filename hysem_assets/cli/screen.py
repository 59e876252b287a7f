"""``hysem screen``: the screening page, decisions in and out, and simulation on labelled reviews."""

from __future__ import annotations

import asyncio
import json
import webbrowser
from pathlib import Path

import click

from hysem_assets.cli.options import query_option
from hysem_assets.screening.decisions import DEFAULT_REVIEWER, STAGES, TITLE_ABSTRACT, DecisionsError


def reviewer_option(help: str, default: str | None = DEFAULT_REVIEWER):
    return click.option("--reviewer", default=default, show_default=default is not None, help=help)


def stage_option(help: str = "Screening stage: title and abstract, or full text."):
    return click.option("--stage", type=click.Choice(STAGES), default=TITLE_ABSTRACT, show_default=True, help=help)


def pdf_attaching(slug: str):
    """The page's way to attach a PDF to the record on screen: `hysem pdf attach`'s, under the same size cap."""
    from hysem_assets.fulltext.attach import AttachmentError, attach_pdf, attachments
    from hysem_assets.screening.web import PdfAttaching
    from hysem_assets.settings.profile import load_settings
    from hysem_assets.stores.tables import DamagedAssetError

    max_bytes = int(load_settings().profile.pdfs.max_megabytes * 2**20)

    def attach(record_id: str, data: bytes, filename: str) -> str:
        try:
            return attach_pdf(slug, record_id, data, filename, max_bytes=max_bytes).message
        except DamagedAssetError as exc:  # the corpus file went bad while the page was open
            raise AttachmentError(str(exc)) from None

    return PdfAttaching(attach, lambda: {a.cluster_id: a.filename for a in attachments(slug)}, max_bytes)


@click.group(invoke_without_command=True)
@click.option("--query", "slug", help="Query slug (partition) whose works to screen on a local page.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address the page is served on; beyond loopback, every request must carry the token printed at start.",
)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="Port; 0: any free one.")
@click.option("--open/--no-open", "open_browser", default=True, show_default=True, help="Open the page in a browser.")
@reviewer_option("Who decides (the page's name field starts with it).")
@stage_option("Screen titles and abstracts, or the full texts of the works that went on.")
@click.pass_context
def screen(
    ctx: click.Context, slug: str | None, host: str, port: int, open_browser: bool, reviewer: str, stage: str
) -> None:
    """Title and abstract screening by active learning, and full-text screening, by one reviewer or two.

    With --query, serve the screening page: one record at a time, ranked by the protocol's
    eligibility criteria and then by a classifier retrained on every decision. Keys: I
    include, M maybe, X exclude (then the reason's number), U undo. Decisions are saved as they are
    made, in $HYSEM_HOME/screening/QUERY/decisions.jsonl; materialize `screening` to pass them on."""
    if ctx.invoked_subcommand is not None:
        return
    if slug is None:
        raise click.UsageError("name the query to screen: hysem screen --query QUERY (or a subcommand)")
    from hysem_assets.screening.reviewing import ScreeningError, screening_page
    from hysem_assets.screening.web import is_loopback, serve

    try:
        page = screening_page(slug, lambda line: click.echo(line, err=True), stage, reviewer, pdf_attaching(slug))
    except (ScreeningError, DecisionsError) as exc:
        raise click.ClickException(str(exc)) from None

    if not is_loopback(host):
        click.echo(
            f"Warning: serving on {host}, beyond this machine: anyone who can reach it could screen; the page "
            "answers only requests carrying the token in the URL below, so share that URL with care",
            err=True,
        )

    def ready(url: str) -> None:
        click.echo(f"Screening {slug!r} at {url} (Ctrl+C stops; every decision is saved as it is made)", err=True)
        if open_browser:
            webbrowser.open(url)

    try:
        asyncio.run(serve(page, host, port, ready))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        raise click.ClickException(f"cannot serve on {host}:{port} ({exc.strerror}); choose another --port") from exc
    click.echo("Stopped.", err=True)


@screen.command("decide")
@click.argument("record_id")
@click.argument("action", type=click.Choice(["included", "maybe", "excluded"]))
@query_option("Query slug (partition) the work belongs to.")
@click.option("--reason", help="Why it is excluded: one of the protocol's reasons for the stage.")
@click.option("--note", help="A note on the work, kept with the decision.")
@reviewer_option("Who decides.")
@stage_option()
@click.option("--resolve", is_flag=True, help="The decision resolves the reviewers' conflict on the work.")
def screen_decide(
    record_id: str,
    action: str,
    slug: str,
    reason: str | None,
    note: str | None,
    reviewer: str,
    stage: str,
    resolve: bool,
) -> None:
    """Record one decision on the work RECORD_ID: included, maybe (title and abstract only) or excluded."""
    from hysem_assets.screening.reviewing import ScreeningError, record_decision

    try:
        decision = record_decision(
            slug, stage, record_id, action, reason=reason, note=note, reviewer=reviewer, resolution=resolve
        )
    except (ScreeningError, DecisionsError) as exc:
        raise click.ClickException(str(exc)) from None
    made = "resolved" if decision.resolution else "decided"
    click.echo(f"{decision.reviewer} {made} {record_id}: {decision.action} at {stage}")


@screen.command("undo")
@query_option("Query slug (partition) whose decision to take back.")
@reviewer_option("Whose latest decision to take back.")
@stage_option()
def screen_undo(slug: str, reviewer: str, stage: str) -> None:
    """Take back the reviewer's latest decision still standing at the stage (a resolution too)."""
    from hysem_assets.screening.reviewing import ScreeningError, undo_decision

    try:
        record = undo_decision(slug, stage, reviewer)
    except (ScreeningError, DecisionsError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{reviewer} has no decision standing at {stage}" if record is None else f"Undid {reviewer}'s {record}")


@screen.command("conflicts")
@query_option("Query slug (partition) whose conflicts to list.")
@stage_option()
def screen_conflicts(slug: str, stage: str) -> None:
    """List the works two reviewers disagree on and no resolution settled, and their Cohen's kappa.

    Resolve one with `hysem screen decide RECORD ACTION --resolve` (or on the page)."""
    from hysem_assets.screening.reviewing import ScreeningError, conflicts

    try:
        found, agreement = conflicts(slug, stage)
    except (ScreeningError, DecisionsError) as exc:
        raise click.ClickException(str(exc)) from None
    if agreement is None:
        click.echo(f"No two reviewers have decided the same work at {stage}: no agreement to measure.")
    else:
        click.echo(f"{agreement.said} at {stage}")
    for conflict in found:
        votes = "; ".join(f"{v.reviewer}: {v.action}" + (f" ({v.reason})" if v.reason else "") for v in conflict.votes)
        click.echo(f"{conflict.record_id}\t{votes}\t{conflict.title}")
    click.echo(f"{len(found):,} unresolved conflict(s) at {stage}")


@screen.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@query_option("Query slug (partition) the decisions belong to.")
@click.option("--replace", is_flag=True, help="Let imported decisions change decisions already made.")
@reviewer_option("Whose decisions the rows that name no reviewer are.")
@stage_option("The stage of the rows that name none.")
def screen_import(path: Path, slug: str, replace: bool, reviewer: str, stage: str) -> None:
    """Add the decisions of PATH, an ASReview export (CSV or RIS) or a file of `hysem screen export`.

    Rows are matched to works by id, DOI, then title; the import is taken whole or not at all."""
    from hysem_assets.screening.reviewing import ScreeningError, import_decisions

    try:
        done = import_decisions(path, slug, reviewer=reviewer, stage=stage, replace=replace)
    except (ScreeningError, DecisionsError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"Imported {done.new:,} new and {done.changed:,} changed decision(s); {done.same:,} already so.")


@screen.command("export")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@query_option("Query slug (partition) whose decisions to export.")
@reviewer_option("Export this reviewer's own decisions (default: the resolved ones).", default=None)
@stage_option()
def screen_export(path: Path, slug: str, reviewer: str | None, stage: str) -> None:
    """Write every work with its decision to PATH: CSV (.csv, .tsv) or RIS (.ris), as ASReview reads them."""
    from hysem_assets.screening.reviewing import ScreeningError, export_query_decisions

    try:
        rows, decided = export_query_decisions(path, slug, stage=stage, reviewer=reviewer)
    except (ScreeningError, DecisionsError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"Wrote {rows:,} works ({decided:,} decided) to {path}")


@screen.command("simulate")
@click.argument("dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--prior-included", default=1, show_default=True, type=click.IntRange(min=1), help="Included priors.")
@click.option("--prior-excluded", default=1, show_default=True, type=click.IntRange(min=1), help="Excluded priors.")
@click.option("--seed", default=0, show_default=True, help="Seed of the priors' draw.")
@click.option("--json", "as_json", is_flag=True, help="The measures and the screening order as JSON.")
@click.option(
    "--progress-every",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds between progress lines on stderr; 0: one per record screened.",
)
def screen_simulate(
    dataset: Path, prior_included: int, prior_excluded: int, seed: int, as_json: bool, progress_every: float
) -> None:
    """Screen DATASET, a labelled review in ASReview's CSV layout (record_id, title, abstract,
    label_included), with hysem's ranker, the recorded decisions answering; print WSS@95 and
    the recall after 10% of the records are screened. It stops once both are known, and says
    on stderr how far it is."""
    from hysem_assets.core.progress import Progress, StderrLines
    from hysem_assets.screening.simulation import DatasetError, draw_priors, read_dataset, simulate_review

    try:
        frame = read_dataset(dataset)
        priors = draw_priors(frame["label_included"].to_numpy(), prior_included, prior_excluded, seed)
    except DatasetError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"Simulating {len(frame):,} records: featurizing, then screening until both measures are known", err=True
    )
    progress = Progress(StderrLines(), "screened", unit="records", interval_s=progress_every)
    try:
        result = simulate_review(frame, priors, progress=progress)
    finally:
        progress.close()
    measures = {
        "records": len(frame),
        "included": int(frame["label_included"].sum()),
        "priors": [str(frame["record_id"].iloc[k]) for k in priors],
        "wss@95": round(result.wss(), 4),
        "recall@10%": round(result.recall_after(), 4),
    }
    if as_json:
        order = [str(frame["record_id"].iloc[k]) for k in result.order]
        click.echo(json.dumps({**measures, "screened": order}, indent=2))
        return
    click.echo(
        f"{dataset.name}: {measures['records']:,} records, {measures['included']:,} included; priors "
        f"{', '.join(measures['priors'])}\nWSS@95 {measures['wss@95']:.3f}, recall after 10% screened "
        f"{measures['recall@10%']:.3f}"
    )


COMMANDS = (screen,)
