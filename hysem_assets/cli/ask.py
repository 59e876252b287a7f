"""``hysem ask``: a question answered from a materialized query, with citations from its library."""

from __future__ import annotations

import json

import click

from hysem_assets.cli.options import query_option
from hysem_assets.settings import environment
from hysem_assets.settings.queries import get_query


@click.command()
@click.argument("question")
@query_option("Query slug (partition) whose indexes to search.")
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


COMMANDS = (ask,)
