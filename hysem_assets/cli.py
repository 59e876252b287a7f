"""The ``hysem`` command: declare queries, materialize, inspect and export assets."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sys
from pathlib import Path

import click
import pandas as pd

from hysem_assets import cli_errors
from hysem_assets.parsing.options import OCR_ENGINES, PIPELINES, ParseOptions
from hysem_assets.screening.cli import screen
from hysem_assets.settings import environment, redaction
from hysem_assets.settings.protocols import (
    DEFAULT_PROTOCOL,
    ProtocolError,
    available_protocols,
    load_protocol,
    load_protocols,
)
from hysem_assets.settings.queries import (
    METADATA_SOURCES,
    QueryError,
    append_query,
    get_query,
    load_queries,
    new_query_spec,
)
from hysem_assets.stores.graph_schema import SchemaError, graph_schema

SAMPLE_QUERY = "air-pollution-cardio-ml"


class HysemGroup(click.Group):
    """Every error becomes one line and a non-zero exit; ``--debug`` adds the traceback."""

    def invoke(self, ctx: click.Context):
        redaction.install()
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            exc.message = redaction.redact(exc.message)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if ctx.params.get("debug"):
                click.echo(cli_errors.traceback_text(exc), err=True)
            raise click.ClickException(cli_errors.one_line(exc)) from None


@click.group(cls=HysemGroup)
@click.version_option(package_name="hysem")
@click.option("--debug", is_flag=True, envvar="HYSEM_DEBUG", help="Show the traceback of an error.")
def main(debug: bool) -> None:
    """hysem: literature-review assets (metadata, full text, graph, answers) per query."""


# --- queries ---------------------------------------------------------------------------


@main.group()
def query() -> None:
    """Declare and list search queries (each one is a partition)."""


@query.command("add")
@click.argument("text", required=False)
@click.option("--slug", help="Partition key; derived from the title or text when omitted.")
@click.option("--title", default="", help="Human-readable name.")
@click.option("--pubmed", "pubmed_text", help="PubMed syntax, when it differs from TEXT.")
@click.option("--openalex", "openalex_text", help="OpenAlex search text, when it differs from TEXT.")
@click.option("--scopus", "scopus_text", help="Scopus syntax, when it differs from TEXT.")
@click.option("--sources", default=",".join(METADATA_SOURCES), show_default=True, help="Comma-separated sources.")
@click.option("--from", "date_from", type=click.DateTime(["%Y-%m-%d"]), help="First publication date.")
@click.option("--to", "date_to", type=click.DateTime(["%Y-%m-%d"]), help="Last publication date.")
@click.option("--max-records", type=int, default=10_000, show_default=True, help="Cap per source.")
@click.option("--mailto", help="Contact e-mail for the APIs' polite pools.")
@click.option("--protocol", help=f"Review protocol of config/protocols (default {DEFAULT_PROTOCOL}).")
@click.option(
    "--schedule",
    help="A living review: daily, weekly, monthly or a cron string (UTC); each tick searches for what is new.",
)
def query_add(
    text,
    slug,
    title,
    pubmed_text,
    openalex_text,
    scopus_text,
    sources,
    date_from,
    date_to,
    max_records,
    mailto,
    protocol,
    schedule,
):
    """Append a query to config/queries.yaml and register its partition."""
    try:
        spec = new_query_spec(
            text,
            slug=slug,
            title=title,
            sources=[s.strip() for s in sources.split(",") if s.strip()],
            per_source={"pubmed": pubmed_text, "openalex": openalex_text, "scopus": scopus_text},
            date_from=_date(date_from),
            date_to=_date(date_to),
            max_records=max_records,
            mailto=mailto,
            protocol=protocol,
            schedule=schedule,
        )
    except QueryError as exc:
        raise click.UsageError(str(exc)) from exc
    contact = environment.mailto(spec.mailto)  # a bad HYSEM_MAILTO stops here, before anything is written
    # The partition first: when HYSEM_HOME cannot take it, the queries file stays as it was,
    # and when the file cannot take the query, the partition is withdrawn; the two stay in step.
    from hysem_assets.runs.launch import register_partitions, unregister_partitions

    registered = register_partitions([spec.slug])
    try:
        append_query(spec)
    except BaseException:
        unregister_partitions(registered)
        raise
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
        title = spec.title or spec.text_for(spec.sources[0])[:60]
        columns = [
            spec.slug,
            spec.protocol or DEFAULT_PROTOCOL,
            ", ".join(spec.sources),
            dates,
            spec.schedule or "once",
        ]
        click.echo("\t".join([*columns, title]))


@main.group()
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


# --- runs ------------------------------------------------------------------------------


@main.command()
@click.option("--query", "slug", default=SAMPLE_QUERY, show_default=True, help="Query slug to run.")
def demo(slug: str) -> None:
    """Materialize every asset for the sample query on the embedded default and summarize."""
    get_query(slug)
    from hysem_assets.runs.launch import materialize_preference_dataset, status_rows

    result = _materialize(slug, selection=None)
    dataset = materialize_preference_dataset()
    click.echo(f"\nhysem demo: query {slug!r}")
    for row in status_rows(slug):
        click.echo(
            f"  {row['asset']:<28} {'materialized' if row['materialized'] else 'missing':<13} rows={row['rows']}"
        )
    if not (result.success and dataset.success):
        for line in cli_errors.run_failures(result) + cli_errors.run_failures(dataset):
            click.echo(f"failed: {line}", err=True)
        raise click.ClickException("Some assets failed; see the log above.")


@main.command()
@click.option("--query", "slug", required=True, help="Query slug (partition).")
@click.option(
    "--select", "selection", help="Dagster asset selection, e.g. 'raw_metadata/pubmed' or 'group:acquisition'."
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Let a source whose pages still fail after retries replace a complete earlier fetch and flow on.",
)
def materialize(slug: str, selection: str | None, allow_partial: bool) -> None:
    """Materialize assets for one query partition (all of them by default)."""
    get_query(slug)
    result = _materialize(slug, selection, allow_partial=allow_partial)
    if not result.success:
        failures = cli_errors.run_failures(result)
        for line in failures:
            click.echo(f"failed: {line}", err=True)
        raise click.ClickException(
            f"Materialization of {slug!r} failed"
            + (f" ({len(failures)} step(s), listed above)." if failures else "; see the log above.")
        )
    click.echo(f"Materialized {selection or 'all assets'} for {slug!r}.")


@main.command()
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
        result = wait_for_backfill(
            url,
            backfill_id,
            on_update=lambda s: click.echo(
                f"  {s.status}: " + (", ".join(f"{r.partition} {r.status.lower()}" for r in s.runs) or "no runs yet"),
                err=True,
            ),
        )
    except (GraphQLError, TimeoutError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not result.succeeded:
        raise click.ClickException(
            f"Backfill {backfill_id} ended {result.status}" + (f": {result.error}" if result.error else ".")
        )
    click.echo(f"Backfill {backfill_id} succeeded ({len(result.runs)} runs).")


@main.command()
@click.option("--query", "slug", help="Only this query.")
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
        history = _load_asset("updates", slug)
    except DamagedAssetError:  # the status line above names the file
        return None
    return None if history is None else last_update_line(history)


@main.command()
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
    from hysem_assets.defs.resources import build_resources
    from hysem_assets.runs.doctor import examine
    from hysem_assets.runs.instance import get_instance
    from hysem_assets.runs.launch import asset_keys, rematerialize
    from hysem_assets.runs.services import check_services
    from hysem_assets.settings.profile import load_profile

    services = check_services(load_profile())
    for check in services:
        click.echo(f"{'!' if check.problem else ' '} {check.service:<12} {check.text}")
    keys, partitioned = asset_keys()
    findings = examine(get_instance(), build_resources(), keys, partitioned, rematerialize)
    for finding in findings:
        click.echo(f"{'!' if finding.problem else ' '} {finding.kind:<12} {finding.text}")
    problems = [f for f in findings if f.problem]
    if fix:
        for finding in problems:
            if finding.fix is not None:
                click.echo(f"  fixed: {finding.fix()}")
    elif problems:
        raise click.ClickException(f"{len(problems)} problem(s); `hysem doctor --fix` fixes them.")
    if unready := [check.service for check in services if check.problem]:
        raise click.ClickException(f"not ready for a run: {', '.join(unready)} (see above; --fix cannot fix these).")
    click.echo("Nothing to fix." if not problems else f"Fixed {len(problems)} problem(s).")


def _outside_home(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """An ``-o`` path, refused inside ``HYSEM_HOME`` (assets, stores and caches live there) but for its
    deliverable folders."""
    if value is not None and str(value) != "-" and environment.inside_state(value):
        raise click.BadParameter(
            f"{value} is inside HYSEM_HOME ({environment.hysem_home()}), where hysem keeps its assets and stores; "
            "write it somewhere else (or under its review/ or exports/ folder).",
            ctx,
            param,
        )
    return value


def _output_option(help: str, *, required: bool = False, allow_dash: bool = False):
    """The ``-o``/``--output`` file of a command, refused among HYSEM_HOME's assets and stores."""
    return click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False, allow_dash=allow_dash, path_type=Path),
        required=required,
        callback=_outside_home,
        help=help,
    )


@main.command()
@click.argument("asset")
@click.option("--query", "slug", required=True, help="Query slug (partition).")
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "parquet"]), default="csv", show_default=True)
@_output_option("File to write (default: stdout).")
def show(asset: str, slug: str, fmt: str, output: Path | None) -> None:
    """Export one materialized asset partition, e.g. ``hysem show raw_metadata/pubmed --query X``.

    CSV cells that a spreadsheet would evaluate (``=``, ``+``, ``-``, ``@``) start with an apostrophe.
    """
    from hysem_assets.core.spreadsheets import csv_text

    if output is not None and not output.parent.is_dir():
        raise click.UsageError(f"-o {output}: the folder {output.parent} does not exist.")
    frame = _load_asset(asset, slug)
    if frame is None:
        raise click.ClickException(f"{asset} is not materialized for {slug!r}. Run `hysem materialize --query {slug}`.")
    if fmt == "parquet":
        if output is None:
            raise click.UsageError("--format parquet needs -o FILE.")
        frame.to_parquet(output, index=False)
    else:
        text = csv_text(frame) if fmt == "csv" else _json_records(frame)
        if output:
            output.write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
    if output:
        click.echo(f"Wrote {len(frame):,} rows to {output}.", err=True)


@main.command()
@click.option("--query", "slug", required=True, help="Query slug (partition).")
@_output_option("The report to write: .html (self-contained page) or .md.", required=True)
def report(slug: str, output: Path) -> None:
    """Write a query's review report: PRISMA flow, topic map, evidence table, saved reports, answers."""
    from hysem_assets.review.report import NotMaterialized, render_html, render_markdown, stored_report

    suffix = output.suffix.lower()
    if suffix not in (".html", ".htm", ".md"):
        raise click.UsageError(f"-o {output}: the report is written as .html or .md.")
    spec = get_query(slug)
    try:
        review = stored_report(slug, spec.title or slug, lambda key: _load_asset(key, slug))
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


@main.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_output_option("Where to write the rows with a cluster_id column (.csv, .tsv, .parquet or .json).")
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
    from hysem_assets.core.spreadsheets import write_csv
    from hysem_assets.dedup.tabular import BibliographyError, dedupe_table, explain_table, read_bibliography

    if not explain and output is None:
        raise click.UsageError("Give -o FILE for the deduplicated rows, or --explain ID1 ID2.")
    try:
        frame = read_bibliography(input_path)
    except BibliographyError as exc:
        raise click.ClickException(str(exc)) from None
    if explain:
        try:
            explanation, warnings = explain_table(frame, *explain)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
        mentioned = [w for w in warnings if any(f"'{record_id}'" in w for record_id in explain)]
        for warning in mentioned:
            click.echo(f"warning: {warning}", err=True)
        for line in explanation.lines():
            click.echo(line)
        return
    result, warnings = dedupe_table(frame)
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    suffix = output.suffix.lower()
    if suffix == ".parquet":
        result.to_parquet(output, index=False)
    elif suffix == ".json":
        result.to_json(output, orient="records", force_ascii=False, indent=2)
    else:
        write_csv(result, output, sep="\t" if suffix == ".tsv" else ",")
    clusters = result["cluster_id"].nunique()
    click.echo(
        f"{len(result):,} records -> {clusters:,} works ({len(result) - clusters:,} duplicates); wrote {output}",
        err=True,
    )


@main.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--protocol",
    "protocol_name",
    default=DEFAULT_PROTOCOL,
    show_default=True,
    help="Review protocol of config/protocols whose fields to extract.",
)
@_output_option("JSON Lines file of the results ('-' for standard output).", required=True, allow_dash=True)
def extract(input_path: Path, protocol_name: str, output: Path) -> None:
    """Extract a protocol's fields from records you already have, without the graph.

    INPUT is JSON Lines or CSV with ``id``, ``title``, ``abstract``, an optional full
    ``text`` and optional ``publication_types`` (PubMed's, "; "-separated). Each record is
    read as ``extracted_fields`` reads a work, by the profile's backend; the output has one
    JSON object per record: ``id``, each field's value, ``evidence`` (per field: each value's
    sentence and character offsets in the text read), ``status`` and ``error``. A line that
    cannot be read is reported with its number and skipped; the others are still written, and
    the exit status is 1 so a pipeline notices the records left out.
    """
    import logging

    from hysem_assets.core.progress import Progress
    from hysem_assets.extraction.backends import build_backend
    from hysem_assets.extraction.inputs import read_records
    from hysem_assets.extraction.rows import documents_to_extract, extracted_rows
    from hysem_assets.settings.environment import hysem_home
    from hysem_assets.settings.profile import load_profile

    protocol = load_protocol(protocol_name)
    try:
        records, problems = read_records(input_path)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    for problem in problems:
        click.echo(f"warning: {input_path}, {problem}; skipped (fix the line and run again)", err=True)
    settings = load_profile().assets.extracted_fields
    backend = build_backend(settings.llm, cache_dir=hysem_home() / "llm_cache" / "extracted_fields", protocol=protocol)
    corpus = records.rename(columns={"id": "cluster_id"})
    full_texts = pd.DataFrame({"cluster_id": corpus["cluster_id"], "markdown": corpus["text"], "error": None})
    documents = documents_to_extract(corpus, full_texts)
    log = logging.getLogger("hysem.extract")
    if not log.handlers:
        log.addHandler(logging.StreamHandler(sys.stderr))
        log.setLevel(logging.INFO)
        log.propagate = False
    progress = Progress(log, "extract", unit="records")
    try:
        rows = extracted_rows(documents, protocol, backend, settings, progress)
    finally:
        progress.close()
    names = [spec.name for spec in protocol.fields]
    with click.open_file(str(output), "w", encoding="utf-8") as handle:
        for document, row in zip(documents, rows, strict=True):
            result = {"id": document.doc_id, "text_source": document.metadata["text_source"]}
            result |= {name: row[name] for name in names}
            result |= {"evidence": json.loads(row["evidence"]), "status": row["status"], "error": row["error"]}
            handle.write(json.dumps(result, ensure_ascii=False) + "\n")
    statuses = pd.Series([row["status"] for row in rows], dtype="object").value_counts().to_dict()
    skipped = f"{len(problems):,} line{'' if len(problems) == 1 else 's'} of {input_path} skipped"
    click.echo(
        f"{len(rows):,} records extracted with {protocol.name} ({statuses}); {skipped}; wrote {output}", err=True
    )
    if problems:
        raise click.ClickException(f"{skipped} (see the warnings above); the other records are in {output}")


@main.group()
def train() -> None:
    """Rebuild the models hysem ships from labelled data."""


@train.command("tagger")
@click.option(
    "--data",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path(__file__).resolve().parents[2] / "shared" / "realdata" / "pico_ebmnlp",
    show_default=True,
    help="Folder with crowd_960.conll and interventions_1978.conll (EBM-NLP).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write the model (default: the package's pico/model, which extraction loads).",
)
def train_tagger(data: Path, output: Path | None) -> None:
    """Train the participants / interventions / outcomes span tagger (CPU, fixed seed, about 45 minutes)."""
    import logging

    from hysem_assets.pico.build import build
    from hysem_assets.pico.tagger import MODEL_DIR

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    card = build(data, output or MODEL_DIR, progress=lambda line: click.echo(line, err=True))
    click.echo(f"wrote {output or MODEL_DIR} (sha256 {card['sha256'][:12]})")


@main.command()
@click.argument("pdf", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_output_option("Markdown file (default: stdout).")
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
    from hysem_assets.parsing.options import ParseOptions
    from hysem_assets.parsing.parse import parse_pdf

    try:
        options = ParseOptions(pipeline=pipeline, artifacts_path=artifacts_path, ocr_engine=ocr_engine)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    document = parse_pdf(pdf, options)
    if document.error:
        raise click.ClickException(f"{pdf}: {document.error}")
    if output:
        output.write_text(document.markdown, encoding="utf-8")
        unreadable = f", {document.unreadable_pages} unreadable" if document.unreadable_pages else ""
        click.echo(
            f"{pdf}: {document.pages} pages ({document.status}, {document.ocr_pages} by OCR{unreadable}), "
            f"{len(json.loads(document.furniture_json))} lines of page furniture left out, "
            f"{document.token_count:,} tokens ({document.parser}) -> {output}",
            err=True,
        )
    else:
        sys.stdout.write(document.markdown)


@main.command()
@click.argument("question")
@click.option("--query", "slug", required=True, help="Query slug (partition) whose indexes to search.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="The whole answer record as JSON: route, why and the routes tried, claims, citations, verdicts, and for "
    "numeric answers each row's value, unit and evidence.",
)
@click.option(
    "--include-retracted",
    is_flag=True,
    help="Answer from retracted works too (the answer warns about each); by default they are left out and named.",
)
@click.option("--fresh", is_flag=True, help="Answer anew instead of reading a repeated question from the answer cache.")
def ask(question: str, slug: str, as_json: bool, include_retracted: bool, fresh: bool) -> None:
    """Answer QUESTION from a materialized query, with citations from its library.

    Tables are read from their files and the model runs without torch where it can, so a
    new process answers in seconds; a repeated question is read from the query's answer
    cache while the tables, the profile and the version are unchanged.
    """
    from hysem_assets.qa.ask import TablesMissing
    from hysem_assets.qa.ask import ask as ask_question

    get_query(slug)
    environment.require_free_space()  # the stores are memory-mapped: on a full disk they would die of SIGBUS
    try:
        answer, _ = ask_question(slug, question, include_retracted=include_retracted, use_cache=not fresh)
    except TablesMissing as exc:
        raise click.ClickException(str(exc)) from exc
    except ValueError as exc:
        from hysem_assets.qa.answer import QAInputError  # imported only when needed: it pulls in the engine

        if not isinstance(exc, QAInputError):
            raise
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(answer, indent=2, ensure_ascii=False, default=str) if as_json else answer["markdown"])


main.add_command(screen)


@main.command("export-preferences")
@_output_option("Copy the dataset to this file.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "parquet"]), default="jsonl", show_default=True)
def export_preferences_command(output: Path | None, fmt: str) -> None:
    """Materialize preference_dataset from every query's preference log (DPO: prompt, chosen, rejected)."""
    import shutil

    from hysem_assets.runs.launch import materialize_preference_dataset
    from hysem_assets.settings.environment import hysem_home
    from hysem_assets.stores.tables import read_table

    if not materialize_preference_dataset().success:
        raise click.ClickException("preference_dataset failed; see the log above.")
    source = hysem_home() / "exports" / f"preferences.{fmt}"
    if output:
        shutil.copyfile(source, output)
    pairs = len(read_table(hysem_home() / "exports" / "preferences.parquet"))
    click.echo(f"{pairs:,} preference pairs -> {output or source}")


@main.command("eval-retrieval")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--method", type=click.Choice(["bm25", "dense", "hybrid", "all"]), default="all", show_default=True)
@click.option("--split", default="test", show_default=True, help="qrels/<split>.tsv to score against.")
def eval_retrieval(folder: Path, method: str, split: str) -> None:
    """nDCG@10 and Recall@100 on a BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/).

    Uses the chunking, indexes and search of the vector_index asset and the QA stage;
    hybrid is Qdrant's Reciprocal Rank Fusion (k = 60) of the dense and BM25 lists.
    """
    from hysem_assets.defs.resources import build_resources
    from hysem_assets.retrieval.beir import evaluate_beir

    try:
        results = evaluate_beir(folder, method, embedder=build_resources()["chunk_store"].encoder(), split=split)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(f"{folder}: {exc}") from exc
    click.echo(f"{'method':<8} {'nDCG@10':>8} {'Recall@100':>11} {'queries':>8}")
    for metrics in results.values():
        click.echo(
            f"{metrics.method:<8} {metrics.ndcg_at_10:>8.4f} {metrics.recall_at_100:>11.4f} {metrics.queries:>8}"
        )


@main.command()
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
    import os
    import socket

    from hysem_assets.runs.instance import prepare_dagster_home

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise click.ClickException(
                f"port {port} on 127.0.0.1 is not free ({exc.strerror}); is another `hysem ui` running? "
                "Choose another with --port or HYSEM_UI_PORT."
            ) from None
    prepare_dagster_home()
    command = ["dagster", "dev", "-h", "127.0.0.1", "-p", str(port), "-m", "hysem_assets.definitions"]
    os.execv(sys.executable, [sys.executable, "-m", *command])


# --- helpers ---------------------------------------------------------------------------


def _date(value: dt.datetime | None) -> dt.date | None:
    return value.date() if value else None


def _materialize(slug: str, selection: str | None, allow_partial: bool = False):
    """:func:`hysem_assets.runs.launch.materialize_query`, its errors as one line each."""
    from hysem_assets.runs.launch import SelectionError, materialize_query

    try:
        return materialize_query(slug, selection, allow_partial=allow_partial)
    except ProtocolError as exc:
        raise click.ClickException(str(exc)) from exc
    except SelectionError as exc:
        raise click.UsageError(str(exc)) from None


def _load_asset(asset: str, slug: str) -> pd.DataFrame | None:
    from hysem_assets.runs.launch import UnknownAsset, load_asset

    try:
        return load_asset(asset, slug)
    except UnknownAsset as exc:
        raise click.ClickException(str(exc)) from None


def _json_records(frame: pd.DataFrame) -> str:
    """Rows as a JSON array; lists and records an asset keeps as JSON text become JSON again."""

    def decoded(value: object) -> object:
        if isinstance(value, str) and value[:1] in ("[", "{"):
            with contextlib.suppress(ValueError):
                return json.loads(value)
        return value

    rows = json.loads(frame.to_json(orient="records", force_ascii=False))
    return json.dumps(
        [{key: decoded(value) for key, value in row.items()} for row in rows], ensure_ascii=False, indent=2
    )
