"""``hysem screen``: the screening page, decisions in and out, and simulation on labelled reviews."""

from __future__ import annotations

import asyncio
import json
import webbrowser
from pathlib import Path

import click
import pandas as pd

from hysem_assets.screening.decisions import DecisionLog, DecisionsError, current_decisions, decisions_path
from hysem_assets.settings.environment import asset_file

CORPUS = "deduped_corpus"


def _corpus(slug: str) -> pd.DataFrame:
    from hysem_assets.settings.queries import get_query
    from hysem_assets.stores.tables import read_table

    get_query(slug)  # an undeclared query is refused with the queries it could be
    path = asset_file(CORPUS, slug)
    if not path.is_file():
        raise click.ClickException(
            f"{CORPUS} is not materialized for {slug!r}; run `hysem materialize --query {slug} --select {CORPUS}` "
            "first, then screen its works"
        )
    return read_table(path)


@click.group(invoke_without_command=True)
@click.option("--query", "slug", help="Query slug (partition) whose works to screen on a local page.")
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address the page is served on (no login: keep it local)."
)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="Port; 0: any free one.")
@click.option("--open/--no-open", "open_browser", default=True, show_default=True, help="Open the page in a browser.")
@click.pass_context
def screen(ctx: click.Context, slug: str | None, host: str, port: int, open_browser: bool) -> None:
    """Title and abstract screening by active learning.

    With --query, serve the screening page: one record at a time, ranked by the protocol's
    eligibility criteria and then by a classifier retrained on every decision. Keys: I
    include, X exclude (then the reason's number), U undo. Decisions are saved as they are
    made, in $HYSEM_HOME/screening/QUERY/decisions.jsonl; materialize `screening` to pass them on."""
    if ctx.invoked_subcommand is not None:
        return
    if slug is None:
        raise click.UsageError("name the query to screen: hysem screen --query QUERY (or a subcommand)")
    from hysem_assets.screening.session import Screening, review_criteria
    from hysem_assets.screening.web import ScreeningPage, serve
    from hysem_assets.settings.catalog import review_for
    from hysem_assets.settings.profile import load_profile

    corpus = _corpus(slug)
    criteria = review_criteria(review_for(slug))
    if criteria.note:
        click.echo(f"Note: {criteria.note}.", err=True)
    click.echo(f"Ranking {len(corpus):,} works of {slug!r} ...", err=True)
    session = Screening(corpus[["cluster_id", "title", "abstract"]], criteria)
    target = load_profile().assets.screening.target_recall
    page = ScreeningPage(slug, session, corpus, DecisionLog(decisions_path(slug)), target)

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


@screen.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--query", "slug", required=True, help="Query slug (partition) the decisions belong to.")
@click.option("--replace", is_flag=True, help="Let imported decisions change decisions already made.")
def screen_import(path: Path, slug: str, replace: bool) -> None:
    """Add the decisions of PATH, an ASReview export (CSV or RIS) or a file of `hysem screen export`.

    Rows are matched to works by id, DOI, then title; the import is taken whole or not at all."""
    from hysem_assets.screening.exchange import read_decisions_file

    corpus = _corpus(slug)
    log = DecisionLog(decisions_path(slug))
    try:
        imported = read_decisions_file(path, corpus)
        current = current_decisions(log.read())
    except DecisionsError as exc:
        raise click.ClickException(str(exc)) from exc
    new = [d for d in imported if d.record_id not in current]
    changed = [
        d
        for d in imported
        if d.record_id in current and (current[d.record_id].action, current[d.record_id].reason) != (d.action, d.reason)
    ]
    if changed and not replace:
        first = changed[0]
        raise click.ClickException(
            f"{path}: {len(changed)} decision(s) differ from ones already made (first: work {first.record_id!r}, "
            f"{_said(current[first.record_id])} here, {_said(first)} in the file); nothing was imported. "
            "Add --replace to take the file's"
        )
    log.append([*new, *changed])
    same = len(imported) - len(new) - len(changed)
    click.echo(f"Imported {len(new):,} new and {len(changed):,} changed decision(s); {same:,} already so.")


def _said(decision) -> str:
    return decision.action + (f" ({decision.reason})" if decision.reason else "")


@screen.command("export")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--query", "slug", required=True, help="Query slug (partition) whose decisions to export.")
def screen_export(path: Path, slug: str) -> None:
    """Write every work with its decision to PATH: CSV (.csv, .tsv) or RIS (.ris), as ASReview reads them."""
    from hysem_assets.screening.exchange import export_decisions

    corpus = _corpus(slug)
    try:
        decisions = DecisionLog(decisions_path(slug)).current()
        rows = export_decisions(corpus, decisions, path)
    except DecisionsError as exc:
        raise click.ClickException(str(exc)) from exc
    decided = sum(record in decisions for record in corpus["cluster_id"].astype(str))
    click.echo(f"Wrote {rows:,} works ({decided:,} decided) to {path}")


@screen.command("simulate")
@click.argument("dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--prior-included", default=1, show_default=True, type=click.IntRange(min=1), help="Included priors.")
@click.option("--prior-excluded", default=1, show_default=True, type=click.IntRange(min=1), help="Excluded priors.")
@click.option("--seed", default=0, show_default=True, help="Seed of the priors' draw.")
@click.option("--json", "as_json", is_flag=True, help="The measures and the screening order as JSON.")
def screen_simulate(dataset: Path, prior_included: int, prior_excluded: int, seed: int, as_json: bool) -> None:
    """Screen DATASET, a labelled review in ASReview's CSV layout (record_id, title, abstract,
    label_included), with hysem's ranker, the recorded decisions answering; print WSS@95 and
    the recall after 10% of the records are screened."""
    from hysem_assets.screening.simulation import DatasetError, draw_priors, read_dataset, simulate_review

    try:
        frame = read_dataset(dataset)
        priors = draw_priors(frame["label_included"].to_numpy(), prior_included, prior_excluded, seed)
    except DatasetError as exc:
        raise click.ClickException(str(exc)) from exc
    result = simulate_review(frame, priors)
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
