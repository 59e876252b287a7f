"""``hysem query`` and ``hysem protocol``: the searches a review declares and the fields each extracts."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hysem_assets.cli.options import day
from hysem_assets.settings import environment
from hysem_assets.settings.protocols import (
    DEFAULT_PROTOCOL,
    ProtocolError,
    available_protocols,
    load_protocol,
    load_protocols,
)
from hysem_assets.settings.queries import QueryError, get_query, load_queries, new_query_spec
from hysem_assets.sources.registry import Kind, default_searched, of_kind, query_sources, searched
from hysem_assets.stores.graph_schema import SchemaError, graph_schema


def source_text_options(command):
    """``--pubmed``, ``--openalex``, ...: one option per searched source of the registry, for its own syntax."""
    for entry in reversed(of_kind(Kind.SEARCH)):
        command = click.option(
            f"--{entry.name}", f"{entry.name}_text", help=f"{entry.label} syntax, when it differs from TEXT."
        )(command)
    return command


@click.group()
def query() -> None:
    """Declare and list search queries (each one is a partition)."""


@query.command("add")
@click.argument("text", required=False)
@click.option("--slug", help="Partition key; derived from the title or text when omitted.")
@click.option("--title", default="", help="Human-readable name.")
@source_text_options
@click.option("--sources", default=",".join(default_searched()), show_default=True, help="Comma-separated sources.")
@click.option("--from", "date_from", type=click.DateTime(["%Y-%m-%d"]), help="First publication date.")
@click.option("--to", "date_to", type=click.DateTime(["%Y-%m-%d"]), help="Last publication date.")
@click.option("--max-records", type=int, default=10_000, show_default=True, help="Cap per source.")
@click.option("--mailto", help="Contact e-mail for the APIs' polite pools.")
@click.option("--protocol", help=f"Review protocol of config/protocols (default {DEFAULT_PROTOCOL}).")
@click.option(
    "--schedule",
    help="A living review: daily, weekly, monthly or a cron string (UTC); each tick searches for what is new.",
)
def query_add(text, slug, title, sources, date_from, date_to, **options):
    """Append a query to config/queries.yaml and register its partition."""
    from hysem_assets.runs.launch import declare_query

    per_source = {name: options.pop(f"{name}_text") for name in searched()}
    try:
        spec = new_query_spec(
            text,
            slug=slug,
            title=title,
            sources=[s.strip() for s in sources.split(",") if s.strip()],
            per_source=per_source,
            date_from=day(date_from),
            date_to=day(date_to),
            **options,
        )
        query_sources(spec)
    except QueryError as exc:
        raise click.UsageError(str(exc)) from exc
    contact = environment.mailto(spec.mailto)  # a bad HYSEM_MAILTO stops here, before anything is written
    declare_query(spec)
    click.echo(f"Added query {spec.slug!r} and registered its partition.")
    if spec.cron:
        click.echo(f"It is searched again on the schedule {spec.cron!r} (UTC) while the Dagster daemon runs.")
    if not contact:
        click.echo(f"Warning: {environment.MISSING_CONTACT} Full texts fail until one is set.", err=True)


@query.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def query_list(as_json: bool) -> None:
    """Show the declared queries."""
    specs = load_queries()
    if as_json:
        click.echo(json.dumps([s.model_dump(mode="json") for s in specs.values()], indent=2, ensure_ascii=False))
        return
    for spec in specs.values():
        dates = f"{spec.date_from or '…'} to {spec.date_to or '…'}"
        title = spec.title or spec.texts()[0][:60]
        columns = [
            spec.slug,
            spec.protocol or DEFAULT_PROTOCOL,
            ", ".join(spec.sources or default_searched()),
            dates,
            spec.schedule or "once",
        ]
        click.echo("\t".join([*columns, title]))


@query.command("import")
@click.option("--query", "slug", required=True, help="The query (partition) the records join.")
@click.option("--source", help="Source name the records are counted under (e.g. embase); default: the file's name.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def query_import(slug: str, source: str | None, path: Path) -> None:
    """Import a database export (RIS, NBIB/MEDLINE, Web of Science, CSV) as a source of a query's records."""
    from hysem_assets.acquisition.imports import import_export

    get_query(slug)
    outcome = import_export(slug, path, source)
    entry = outcome.entry
    if not outcome.new:
        click.echo(f"{path.name} was imported as {entry.source!r} on {entry.imported}; nothing changed.")
        return
    for warning in outcome.read.warnings:
        click.echo(f"Warning: {warning}", err=True)
    click.echo(
        f"Read {entry.records:,} records from {path.name} as {entry.format} ({entry.encoding}); imported as source "
        f"{entry.source!r} into {slug!r}. Run `hysem materialize --query {slug}` to take them in."
    )


@click.group()
def protocol() -> None:
    """Review protocols: the fields each query extracts (config/protocols)."""


@protocol.command("list")
def protocol_list() -> None:
    """Show the protocols with their fields, each checked."""
    for name in available_protocols():
        try:
            loaded = load_protocol(name)
        except ProtocolError as exc:
            click.echo(f"{name}\tINVALID: {exc}")
            continue
        click.echo(f"{name}\t{loaded.title}\t{', '.join(spec.name for spec in loaded.fields)}")


@protocol.command("check")
@click.argument("names", nargs=-1)
def protocol_check(names: tuple[str, ...]) -> None:
    """Validate protocols (all when none is named) and the graph schema they make together."""
    try:
        checked = [load_protocol(name) for name in names or available_protocols()]
        graph_schema(load_protocols())
    except (ProtocolError, SchemaError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{len(checked)} protocol(s) valid: {', '.join(p.name for p in checked)}")


COMMANDS = (query, protocol)
