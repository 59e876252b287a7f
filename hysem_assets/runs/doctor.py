"""``hysem doctor``: what keeps runs from going on, and the fix for each.

It lists runs still marked in progress whose process is gone, pool slots held or awaited
by runs that can no longer release them, asset files that are not what their last
materialization recorded (missing, unreadable, other row counts), the embedded stores and
who holds their locks, graph loads that are not what ``knowledge_graph`` recorded, and
chunk stores that cannot be read back or do not hold exactly their chunk table. With
``--fix`` it reclaims those runs and slots, materializes the damaged assets of each
partition again, loads those graphs again, and rebuilds those chunk stores (a damaged
shard whole, from every query's chunk table; vectors from the cache where it has them). A
store held by a live process is only named: it is released when that process ends, and
stopping someone's run is the user's call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from dagster import AssetKey, DagsterInstance, RunsFilter

from hysem_assets.core.owner import ProcessOwner
from hysem_assets.runs.reclaim import (
    IN_PROGRESS,
    describe_claims,
    ended_run_claims,
    free_ended_claims,
    pool_claims,
    reclaim_run,
    stale_runs,
)
from hysem_assets.runs.services import ServiceCheck, check_services
from hysem_assets.settings.profile import Profile


@dataclass
class Finding:
    """One line of the report; ``fix`` is set for a problem ``--fix`` can solve."""

    kind: str
    text: str
    problem: bool = True
    fix: Callable[[], str] | None = None


def run_findings(instance: DagsterInstance) -> list[Finding]:
    """Stale runs, slots of ended runs, and (for information) the runs in progress."""
    findings = []
    stale = stale_runs(instance, untagged=True)
    for run in stale:
        holds = f"; claims {describe_claims(run.claims)}" if run.claims else ""
        findings.append(Finding("stale run", run.describe() + holds, fix=lambda run=run: reclaim_run(instance, run)))
    ended = ended_run_claims(instance)
    if ended:
        runs = ", ".join(sorted({c.run_id[:8] for c in ended}))
        findings.append(
            Finding(
                "held slot",
                f"{describe_claims(ended)} still held or awaited by ended run(s) {runs}",
                fix=lambda: " ".join(free_ended_claims(instance, ended)),
            )
        )
    stale_ids = {run.run_id for run in stale}
    claims = pool_claims(instance)
    for record in instance.get_run_records(RunsFilter(statuses=IN_PROGRESS)):
        run = record.dagster_run
        if run.run_id in stale_ids:
            continue
        owner = ProcessOwner.from_tags(run.tags)
        if owner is None:
            who = "launched by the Dagster daemon or UI (Dagster's run monitoring watches it)"
        elif owner.state() == "elsewhere":
            who = f"{owner.describe()}: another host, check it there"
        else:
            who = f"{owner.describe()}, running"
        held = [c for c in claims if c.run_id == run.run_id]
        holds = f"; {describe_claims(held)}" if held else ""
        findings.append(Finding("run", f"run {run.run_id[:8]} {run.status.value}: {who}{holds}", problem=False))
    return findings


def asset_findings(
    instance: DagsterInstance,
    keys: list[AssetKey],
    partitioned: set[AssetKey],
    rematerialize: Callable[[str, list[str]], str],
) -> list[Finding]:
    """Per query, the asset files that are not what their last materialization recorded; the fix
    materializes those assets again for that query (in one run, upstream first)."""
    from hysem_assets.defs.partitions import queries_partitions
    from hysem_assets.runs.integrity import stored_assets

    findings = []
    for query in instance.get_dynamic_partitions(queries_partitions.name):
        damaged = [stored for stored in stored_assets(instance, keys, query, partitioned) if stored.problem]
        if damaged:
            text = "; ".join(f"{stored.asset} ({stored.path}: {stored.problem})" for stored in damaged)
            names = [stored.asset for stored in damaged]
            findings.append(Finding("asset file", f"{query}: {text}", fix=lambda q=query, n=names: rematerialize(q, n)))
    return findings


def store_findings(resources: dict[str, Any]) -> list[Finding]:
    """Who holds the embedded stores' locks (a dead process never does: its lock ends with it), and a store
    still open in a process whose lock file was deleted (a problem no fix here can solve)."""
    from hysem_assets.settings.environment import hysem_home
    from hysem_assets.stores.connect import chunk_store_folder
    from hysem_assets.stores.locking import ORPHANED, lock_holder, orphaned_holder

    stores = []
    graph = resources["graph_database"].settings
    if graph.backend == "ladybug":
        stores.append(("graph store", Path(graph.path) if graph.path else hysem_home() / "graph" / "kg.lbug"))
    vectors = resources["chunk_store"].settings
    if not vectors.url:
        stores.append(("chunk store", chunk_store_folder(vectors) / vectors.collection))
    findings = []
    for what, path in stores:
        if not path.exists():
            continue
        if (orphan := orphaned_holder(path)) is not None:  # its lock looks free: a second opener would get in
            findings.append(Finding("store lock", f"{what} {path}: open in {orphan.describe()}, {ORPHANED}"))
            continue
        holder = lock_holder(path)
        state = f"open in {holder.describe()}; released when it ends" if holder else "free"
        findings.append(Finding("store lock", f"{what} {path}: {state}", problem=False))
    return findings


def graph_findings(
    instance: DagsterInstance, resources: dict[str, Any], rematerialize: Callable[[str, list[str]], str]
) -> list[Finding]:
    """Queries whose graph load is not the one ``knowledge_graph`` recorded: no load at all (never loaded into
    this store, or the store is new), or other relationship counts. The fix loads the partition again."""
    from hysem_assets.defs.partitions import queries_partitions
    from hysem_assets.settings.environment import asset_file
    from hysem_assets.stores.connect import open_graph_store
    from hysem_assets.stores.graph import GraphStoreError, partition_loaded, partition_relationships
    from hysem_assets.stores.tables import file_problem, read_table

    recorded = {
        query: read_table(asset_file("knowledge_graph", query))
        for query in instance.get_dynamic_partitions(queries_partitions.name)
        if asset_file("knowledge_graph", query).is_file() and file_problem(asset_file("knowledge_graph", query)) is None
    }
    if not recorded:
        return []
    try:  # without waiting: a store another process has open is reported by store_findings
        store = open_graph_store(resources["graph_database"].settings.model_copy(update={"lock_timeout_s": 0}))
    except (GraphStoreError, TimeoutError) as exc:
        return [Finding("graph", f"not checked: {exc}", problem=False)]
    findings = []
    try:
        for query, table in recorded.items():
            expected = {row.type: int(row.count) for row in table.itertuples() if row.kind == "relationship"}
            if not partition_loaded(store, query):
                problem = "the graph store holds no load of it"
            else:
                found = partition_relationships(store, query, list(expected))
                wrong = [f"{t} {found[t]:,} (recorded {n:,})" for t, n in expected.items() if found[t] != n]
                problem = f"relationships differ from its load: {', '.join(wrong)}" if wrong else None
            if problem:
                findings.append(
                    Finding("graph", f"{query}: {problem}", fix=lambda q=query: rematerialize(q, ["knowledge_graph"]))
                )
    finally:
        store.close()
    return findings


def chunk_store_findings(instance: DagsterInstance, resources: dict[str, Any]) -> list[Finding]:
    """Partitions whose chunk store does not hold exactly their chunk table, and a store that cannot be read
    back (its fix rebuilds the shared collection from every query's chunk table)."""
    from hysem_assets.defs.partitions import queries_partitions
    from hysem_assets.retrieval.completeness import expected_points, index_state
    from hysem_assets.retrieval.indexing import index_chunks
    from hysem_assets.retrieval.repair import chunk_tables, rebuild_chunk_store
    from hysem_assets.stores.chunks import DamagedStoreError, VectorStoreError
    from hysem_assets.stores.connect import open_chunk_store

    chunk_store = resources["chunk_store"]
    # a damaged chunk table is an asset finding: materializing it again refills the store
    tables = chunk_tables(instance.get_dynamic_partitions(queries_partitions.name))
    if not tables:
        return []

    def rebuild_all() -> str:
        return rebuild_chunk_store(chunk_store.settings, chunk_store.encoder(), tables).describe()

    try:  # without waiting: a store another process has open is reported, not waited for
        store = open_chunk_store(chunk_store.settings.model_copy(update={"lock_timeout_s": 0}))
    except DamagedStoreError as exc:
        return [Finding("chunk store", f"damaged: {exc}", fix=rebuild_all)]
    except VectorStoreError as exc:
        return [Finding("chunk store", f"not checked: {exc}", problem=False)]
    findings = []
    try:
        for query, chunks in tables.items():
            try:
                for _ in store.points(query, with_vectors=True):  # every vector read back once
                    pass
                state = index_state(expected_points(chunks, query), query=query, store=store)
            except DamagedStoreError as exc:
                return [Finding("chunk store", f"damaged: {exc}", fix=rebuild_all)]
            if state.complete:
                continue

            def rebuild(query: str = query, chunks: pd.DataFrame = chunks) -> str:
                store = chunk_store.open()
                try:
                    summary = index_chunks(chunks, query=query, store=store, embedder=chunk_store.encoder())
                finally:
                    store.close()
                return f"Rebuilt the chunk stores of {query!r}: {summary.chunks} chunks ({summary.embedded} embedded again)."

            findings.append(Finding("chunk store", f"{query}: {state.describe()}", fix=rebuild))
    finally:
        store.close()
    return findings


def examine(
    instance: DagsterInstance,
    resources: dict[str, Any],
    keys: list[AssetKey],
    partitioned: set[AssetKey],
    rematerialize: Callable[[str, list[str]], str],
) -> list[Finding]:
    """Every finding; ``rematerialize(query, assets)`` runs those assets again and says how it went."""
    return [
        *run_findings(instance),
        *asset_findings(instance, keys, partitioned, rematerialize),
        *store_findings(resources),
        *graph_findings(instance, resources, rematerialize),
        *chunk_store_findings(instance, resources),
    ]


def diagnose(profile: Profile) -> tuple[list[ServiceCheck], list[Finding]]:
    """What ``hysem doctor`` reports: the services ``profile`` reaches, then every finding of this state."""
    from hysem_assets.defs.resources import build_resources
    from hysem_assets.runs.instance import get_instance
    from hysem_assets.runs.launch import asset_keys, rematerialize

    services = check_services(profile)
    keys, partitioned = asset_keys()
    return services, examine(get_instance(), build_resources(profile), keys, partitioned, rematerialize)
