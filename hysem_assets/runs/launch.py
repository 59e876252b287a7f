"""Launching Dagster runs for the command line: partitions, supervised materializations, status.

The commands run in process against the persistent instance under ``$HYSEM_HOME/dagster``,
so the UI and ``hysem status`` see their runs. Every function here speaks Dagster and raises
plain exceptions; the ``hysem`` command (``hysem_assets.cli``) turns them into one-line messages.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from dagster import (
    AssetKey,
    AssetSelection,
    BetaWarning,
    DagsterError,
    Definitions,
    ExecuteInProcessResult,
)
from dagster import materialize as dagster_materialize

from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.runs.instance import get_instance
from hysem_assets.runs.integrity import stored_assets
from hysem_assets.runs.reclaim import describe_claims, stale_runs
from hysem_assets.runs.supervise import StorageErrorsInOneLine, run_supervised
from hysem_assets.settings.catalog import review_for
from hysem_assets.settings.environment import hysem_home
from hysem_assets.settings.queries import QuerySpec, append_query
from hysem_assets.stores.tables import read_table

#: Dagster's console logs at INFO, so a command shows each step's progress.
RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


class SelectionError(ValueError):
    """A ``--select`` that names no asset of a query."""


class UnknownAsset(KeyError):
    """An asset name the code location does not have."""

    def __str__(self) -> str:
        return str(self.args[0])


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _definitions() -> Definitions:
    # Imported on use: building the code location loads every stage, which a command that
    # fails early on a bad argument should not wait for.
    from hysem_assets.definitions import defs

    return defs


def register_partitions(slugs: list[str]) -> list[str]:
    """Register the partitions not yet known; returns those it added."""
    instance = get_instance()
    known = set(instance.get_dynamic_partitions(queries_partitions.name))
    missing = [s for s in slugs if s not in known]
    if missing:
        instance.add_dynamic_partitions(queries_partitions.name, missing)
    return missing


def unregister_partitions(slugs: list[str]) -> None:
    instance = get_instance()
    for slug in slugs:
        instance.delete_dynamic_partition(queries_partitions.name, slug)


def declare_query(spec: QuerySpec) -> None:
    """Register ``spec``'s partition, then append it to the queries file, so the two stay in step: when
    HYSEM_HOME cannot take the partition, the file stays as it was; when the file cannot take the query,
    the partition is withdrawn."""
    registered = register_partitions([spec.slug])
    try:
        append_query(spec)
    except BaseException:
        unregister_partitions(registered)
        raise


def supervised(command: str, launch: Callable[[Any, dict[str, str]], Any], say: Callable[[str], None] = _say):
    """One run, after dead runs are reclaimed; signals stop it cleanly and pool waits are shown."""
    instance = get_instance()
    with contextlib.redirect_stderr(StorageErrorsInOneLine(sys.stderr)):
        return run_supervised(lambda tags: launch(instance, tags), instance, command=command, say=say)


def materialize_query(
    slug: str, selection: str | None = None, *, allow_partial: bool = False, keys: list[str] | None = None
) -> ExecuteInProcessResult:
    """Materialize query ``slug``'s assets (all, a ``selection``, or the asset names ``keys``).

    A bad protocol raises :class:`~hysem_assets.settings.protocols.ProtocolError` here, naming
    its file and field, before any step starts.
    """
    review_for(slug)
    defs = _definitions()
    assets = [a for a in defs.assets or [] if a.partitions_def is not None]
    chosen = parse_selection(selection, defs) if selection else None
    if keys:
        chosen = AssetSelection.assets(
            *(AssetKey.from_user_string(key) for key in keys)
        ).required_multi_asset_neighbors()
        selection = " or ".join(f'key:"{key}"' for key in keys)
    resources = defs.resources
    if allow_partial:
        from hysem_assets.defs.resources import build_resources
        from hysem_assets.settings.profile import load_settings

        resources = build_resources(load_settings().profile.model_copy(update={"allow_partial_results": True}))
    register_partitions([slug])
    return supervised(
        f"hysem materialize --query {slug}" + (f" --select {selection}" if selection else ""),
        lambda instance, tags: dagster_materialize(
            assets,
            instance=instance,
            resources=resources,
            partition_key=slug,
            selection=chosen,
            raise_on_error=False,
            tags=tags,
            run_config=RUN_CONFIG,
        ),
    )


def rematerialize(slug: str, assets: list[str]) -> str:
    """Materialize ``assets`` of query ``slug`` again (doctor's fix for damaged files); how it went."""
    result = materialize_query(slug, keys=assets)
    ok = result is not None and result.success
    return f"materialized {', '.join(assets)} of {slug!r} again: {'done' if ok else 'the run failed, see its log'}"


def materialize_preference_dataset() -> ExecuteInProcessResult:
    """The cross-query preference dataset, from every query's materialized preference log."""
    defs = _definitions()
    return supervised(
        "hysem export-preferences",
        lambda instance, tags: dagster_materialize(
            list(defs.assets),
            instance=instance,
            resources=defs.resources,
            selection=AssetSelection.assets("preference_dataset"),
            raise_on_error=False,
            tags=tags,
            run_config=RUN_CONFIG,
        ),
    )


class RunFailed(RuntimeError):
    """A run a command launched did not succeed; its log above says why."""


def export_preference_dataset(fmt: str, output: Path | None = None) -> tuple[int, Path]:
    """Materialize ``preference_dataset`` and copy its ``fmt`` file (``jsonl``, ``parquet``) to ``output``;
    how many pairs it holds and where the file is."""
    if not materialize_preference_dataset().success:
        raise RunFailed("preference_dataset failed; see the log above.")
    exports = hysem_home() / "exports"
    source = exports / f"preferences.{fmt}"
    if output:
        shutil.copyfile(source, output)
    return len(read_table(exports / "preferences.parquet")), output or source


def stuck_run_notes() -> list[str]:
    """A note per dead run still marked in progress: one holding a pool stops later runs after ``library``."""
    notes = []
    for run in stale_runs(get_instance()):
        holds = f" and holds {describe_claims(run.claims)}" if run.claims else ""
        notes.append(
            f"Note: {run.describe()} is still marked in progress{holds}; the next `hysem materialize` "
            "reclaims it, or run `hysem doctor --fix`."
        )
    return notes


def parse_selection(text: str, defs: Definitions) -> AssetSelection:
    """``--select`` parsed and checked against the query-partitioned assets before a run starts; an asset made
    together with others (``answers`` and ``preference_log``) brings them along, as one step makes them."""
    graph = defs.resolve_asset_graph()
    partitioned = sorted(
        (key for key in graph.get_all_asset_keys() if graph.get(key).partitions_def is not None),
        key=lambda key: key.to_user_string(),
    )
    names = ", ".join(key.to_user_string() for key in partitioned)
    try:
        with warnings.catch_warnings():  # Dagster's own beta notice about group selections
            warnings.simplefilter("ignore", BetaWarning)
            selection = AssetSelection.from_string(text)
            chosen = selection.resolve(graph)
    except DagsterError as exc:
        reason = "no such asset" if "no AssetsDefinition" in str(exc) else "not an asset selection"
        raise SelectionError(f"--select {text!r}: {reason}. Assets: {names}.") from None
    if not chosen & set(partitioned):
        raise SelectionError(f"--select {text!r} selects no asset of a query. Assets: {names}.")
    return selection.required_multi_asset_neighbors()


def asset_names() -> list[str]:
    return sorted(k.to_user_string() for k in _definitions().resolve_asset_graph().get_all_asset_keys())


def load_asset(asset: str, slug: str) -> pd.DataFrame | None:
    """One asset partition read through the code location's IO manager; None when it is not
    materialized. An unknown asset name raises :class:`UnknownAsset` with the list of assets."""
    defs = _definitions()
    known = asset_names()
    if asset not in known:
        raise UnknownAsset(f"No such asset: {asset!r}. Assets: {', '.join(known)}.")
    instance = get_instance()
    if slug not in instance.get_dynamic_partitions(queries_partitions.name):
        return None  # never materialized: the partition was not even registered
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the IO manager's "Loading partition ..." lines
            return defs.load_asset_value(AssetKey.from_user_string(asset), partition_key=slug, instance=instance)
    except FileNotFoundError:
        return None


def asset_keys() -> tuple[list[AssetKey], set[AssetKey]]:
    """Every asset key of the code location, and those partitioned by query."""
    graph = _definitions().resolve_asset_graph()
    keys = sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string())
    return keys, {key for key in keys if graph.get(key).partitions_def is not None}


def status_rows(slug: str) -> list[dict]:
    """One row per asset of query ``slug``: materialized, rows, last run and any problem of its file."""
    keys, partitioned = asset_keys()
    return [
        {
            "query": slug,
            "asset": stored.asset,
            "materialized": stored.materialized and stored.problem is None,
            "rows": stored.rows,
            "last_run": stored.run_id,
            "last_materialized_at": stored.at.isoformat() if stored.at else None,
            "problem": stored.problem,
        }
        for stored in stored_assets(get_instance(), keys, slug, partitioned)
    ]
