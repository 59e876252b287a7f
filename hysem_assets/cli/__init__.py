"""The ``hysem`` command: one module per command group, each command a thin shell over one domain function.

Commands parse their options, call the function of the package that owns the work and print
what it returns; errors become one line here (:mod:`hysem_assets.cli.errors`).
"""

from __future__ import annotations

import warnings

import click

from hysem_assets.cli import (
    ask,
    assets,
    documents,
    entities,
    export,
    findings,
    models,
    pdf,
    queries,
    records,
    runs,
    screen,
    shared,
)
from hysem_assets.cli.errors import one_line, traceback_text
from hysem_assets.cli.options import SAMPLE_QUERY
from hysem_assets.settings import redaction

__all__ = ["SAMPLE_QUERY", "HysemGroup", "main"]


def quiet_third_party_warnings() -> None:
    """Deprecation notices that libraries raise about one another (Dagster on pydantic, ...) are theirs to
    fix, not the user's: a command shows those of hysem's own code only."""
    for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category)
        warnings.filterwarnings("default", category=category, module=r"hysem_assets(\.|$)")


class HysemGroup(click.Group):
    """Every error becomes one line and a non-zero exit; ``--debug`` adds the traceback."""

    def main(self, *args, **kwargs):
        with warnings.catch_warnings():  # the filters are the command's, not the calling process's
            quiet_third_party_warnings()
            return super().main(*args, **kwargs)

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
                click.echo(traceback_text(exc), err=True)
            raise click.ClickException(one_line(exc)) from None


@click.group(cls=HysemGroup)
@click.version_option(package_name="hysem")
@click.option("--debug", is_flag=True, envvar="HYSEM_DEBUG", help="Show the traceback of an error.")
def main(debug: bool) -> None:
    """hysem: literature-review assets (metadata, full text, graph, answers) per query."""


for _module in (
    queries,
    runs,
    assets,
    ask,
    records,
    documents,
    findings,
    entities,
    models,
    screen,
    export,
    pdf,
    shared,
):
    for _command in _module.COMMANDS:
        main.add_command(_command)
