"""Options and small conversions that several command groups share."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click
import pandas as pd

from hysem_assets.settings import environment
from hysem_assets.settings.protocols import ProtocolError

SAMPLE_QUERY = "air-pollution-cardio-ml"


def query_option(help: str = "Query slug (partition).", **kwargs):
    """``--query SLUG``, the partition a command works on."""
    return click.option("--query", "slug", help=help, **({"required": True} | kwargs))


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


def output_option(help: str, *, required: bool = False, allow_dash: bool = False):
    """The ``-o``/``--output`` file of a command, refused among HYSEM_HOME's assets and stores."""
    return click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False, allow_dash=allow_dash, path_type=Path),
        required=required,
        callback=_outside_home,
        help=help,
    )


def day(value: dt.datetime | None) -> dt.date | None:
    """A ``click.DateTime`` option's value as the date it names."""
    return value.date() if value else None


def materialize(slug: str, selection: str | None, allow_partial: bool = False):
    """:func:`hysem_assets.runs.launch.materialize_query`, its errors as one line each."""
    from hysem_assets.runs.launch import SelectionError, materialize_query

    try:
        return materialize_query(slug, selection, allow_partial=allow_partial)
    except ProtocolError as exc:
        raise click.ClickException(str(exc)) from exc
    except SelectionError as exc:
        raise click.UsageError(str(exc)) from None


def load_asset(asset: str, slug: str) -> pd.DataFrame | None:
    """One asset partition, None when it is not materialized; an unknown name stops the command."""
    from hysem_assets.runs.launch import UnknownAsset
    from hysem_assets.runs.launch import load_asset as load

    try:
        return load(asset, slug)
    except UnknownAsset as exc:
        raise click.ClickException(str(exc)) from None
