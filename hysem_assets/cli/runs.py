"""Runs: ``demo``, ``materialize``, ``backfill``, ``status``, ``doctor`` and the ``ui``."""

from __future__ import annotations

import json

import click

from hysem_assets.cli.errors import run_failures
from hysem_assets.cli.options import SAMPLE_QUERY, load_asset, materialize, query_option
from hysem_assets.settings import environment
from hysem_assets.settings.profile import load_settings
from hysem_assets.settings.queries import get_query, load_queries


@click.command()
@query_option("Query slug to run.", default=SAMPLE_QUERY, show_default=True, required=False)
def demo(slug: str) -> None:
    """Materialize every asset for the sample query on the embedded default and summarize."""
    get_query(slug)
    from hysem_assets.runs.launch import materialize_preference_dataset, status_rows

    result = materialize(slug, selection=None)
    dataset = materialize_preference_dataset()
    click.echo(f"\nhysem demo: query {slug!r}")
    for row in status_rows(slug):
        click.echo(
            f"  {row['asset']:<28} {'materialized' if row['materialized'] else 'missing':<13} rows={row['rows']}"
        )
    if not (result.success and dataset.success):
        for line in run_failures(result) + run_failures(dataset):
            click.echo(f"failed: {line}", err=True)
        raise click.ClickException("Some assets failed; see the log above.")


@click.command("materialize")
@query_option()
@click.option(
    "--select",
    "selection",
    help="Dagster asset selection: an asset ('answers', 'raw_metadata/pubmed'), a group ('group:acquisition'), "
    "an asset and what follows from it ('screening*'), or any of Dagster's selection syntax.",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Let a source whose pages still fail after retries replace a complete earlier fetch and flow on.",
)
def materialize_command(slug: str, selection: str | None, allow_partial: bool) -> None:
    """Materialize assets for one query partition (all of them by default)."""
    get_query(slug)
    result = materialize(slug, selection, allow_partial=allow_partial)
    if not result.success:
        failures = run_failures(result)
        for line in failures:
            click.echo(f"failed: {line}", err=True)
        raise click.ClickException(
            f"Materialization of {slug!r} failed"
            + (f" ({len(failures)} step(s), listed above)." if failures else "; see the log above.")
        )
    click.echo(f"Materialized {selection or 'all assets'} for {slug!r}.")


@click.command()
@click.option("--queries", "slugs", required=True, help="Comma-separated query slugs (partitions), e.g. a,b.")
@click.option(
    "--select", "assets", help="Comma-separated asset keys (e.g. raw_metadata/pubmed); default: the whole graph."
)
@click.option(
    "--url",
    default="http://127.0.0.1:3000",
    show_default=True,
    envvar="HYSEM_DAGSTER_URL",
    help="The running Dagster webserver (`hysem ui`).",
)
@click.option("--wait", is_flag=True, help="Wait until every run has finished; fail if any did not succeed.")
def backfill(slugs: str, assets: str | None, url: str, wait: bool) -> None:
    """Backfill several queries through the Dagster daemon, as the UI's backfill does."""
    from hysem_assets.runs.backfill import GraphQLError, launch_backfill, wait_for_backfill

    names = [s.strip() for s in slugs.split(",") if s.strip()]
    for slug in names:
        get_query(slug)
    selection = [a.strip() for a in assets.split(",") if a.strip()] if assets else None
    try:
        backfill_id = launch_backfill(url, names, assets=selection)
        click.echo(f"Launched backfill {backfill_id} for {', '.join(names)}: {url.rstrip('/')}/runs/b/{backfill_id}")
        if not wait:
            return
        result = wait_for_backfill(url, backfill_id, on_update=_backfill_progress)
    except (GraphQLError, TimeoutError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not result.succeeded:
        raise click.ClickException(
            f"Backfill {backfill_id} ended {result.status}" + (f": {result.error}" if result.error else ".")
        )
    click.echo(f"Backfill {backfill_id} succeeded ({len(result.runs)} runs).")


def _backfill_progress(state) -> None:
    runs = ", ".join(f"{r.partition} {r.status.lower()}" for r in state.runs) or "no runs yet"
    click.echo(f"  {state.status}: {runs}", err=True)


@click.command()
@query_option("Only this query.", required=False)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(slug: str | None, as_json: bool) -> None:
    """Per asset and partition: materialized or not, row count, last run."""
    from hysem_assets.runs.launch import status_rows, stuck_run_notes

    slugs = [slug] if slug else list(load_queries())
    if slug:
        get_query(slug)
    rows = [row for s in slugs for row in status_rows(s)]
    updates = {s: _last_update(s) for s in slugs}
    if as_json:
        for row in rows:
            if row["asset"] == "updates":
                row["last_update"] = updates[row["query"]]
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = "materialized" if row["materialized"] else "damaged" if row["problem"] else "missing"
        line = f"{row['query']:<28} {row['asset']:<28} {state:<13} rows={row['rows']}  {row['last_run'] or ''}"
        click.echo(line + (f"  ({row['problem']}; `hysem doctor --fix`)" if row["problem"] else ""))
    for s, line in updates.items():
        if line is not None:
            click.echo(f"{s}: last {line}")
    for note in stuck_run_notes():
        click.echo(note, err=True)


def _last_update(slug: str) -> str | None:
    """The query's latest update in one line, when ``updates`` is materialized and readable."""
    from hysem_assets.review.updates import last_update_line
    from hysem_assets.stores.tables import DamagedAssetError

    try:
        history = load_asset("updates", slug)
    except DamagedAssetError:  # the status line above names the file
        return None
    return None if history is None else last_update_line(history)


@click.command()
@click.option(
    "--fix",
    is_flag=True,
    help="Reclaim dead runs and their pool slots, materialize damaged assets again, rebuild incomplete chunk stores.",
)
@click.option(
    "--profile",
    help="Check this profile (a name in resources/ or a path; default HYSEM_PROFILE): for one that reaches real "
    "services, each API, the contact address and the model server first.",
)
def doctor(fix: bool, profile: str | None) -> None:
    """List what keeps runs from going on (unreachable services, refused keys, dead runs, held pool slots,
    damaged asset files, store locks, incomplete stores)."""
    if profile:  # before the code location loads: its resources are this profile's too
        environment.use_profile(profile)
    from hysem_assets.runs.doctor import diagnose

    settings = load_settings()
    click.echo(f"  {'state':<12} {settings.home} (chosen by {settings.home_origin})")
    services, findings = diagnose(settings.profile)
    for check in services:
        click.echo(f"{'!' if check.problem else ' '} {check.service:<12} {check.text}")
    for finding in findings:
        click.echo(f"{'!' if finding.problem else ' '} {finding.kind:<12} {finding.text}")
    fixable = [f for f in findings if f.problem and f.fix is not None]
    if fix:
        for finding in fixable:
            click.echo(f"  fixed: {finding.fix()}")
    elif fixable:
        raise click.ClickException(f"{len(fixable)} problem(s); `hysem doctor --fix` fixes them.")
    if unready := [check.service for check in services if check.problem]:
        raise click.ClickException(f"not ready for a run: {', '.join(unready)} (see above; --fix cannot fix these).")
    if unfixable := [f.kind for f in findings if f.problem and f.fix is None]:
        raise click.ClickException(f"{len(unfixable)} problem(s) --fix cannot fix: {', '.join(unfixable)} (see above).")
    click.echo("Nothing to fix." if not fixable else f"Fixed {len(fixable)} problem(s).")


@click.command()
@click.option(
    "--port",
    default=3000,
    show_default=True,
    envvar="HYSEM_UI_PORT",
    type=click.IntRange(1, 65535),
    help="Port on 127.0.0.1.",
)
def ui(port: int) -> None:
    """Start the Dagster UI and daemon (`dagster dev`) on 127.0.0.1 with hysem's instance.

    A port already taken stops it at once, before the daemon (which launches runs) starts.
    """
    from hysem_assets.runs.instance import PortInUse, start_ui

    try:
        start_ui(port)
    except PortInUse as exc:
        raise click.ClickException(
            f"port {port} on 127.0.0.1 is not free ({exc.strerror}); is another `hysem ui` running? "
            "Choose another with --port or HYSEM_UI_PORT."
        ) from None


COMMANDS = (demo, materialize_command, backfill, status, doctor, ui)
