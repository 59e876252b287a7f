"""Fold each cluster of duplicates into one record with per-field provenance.

The canonical record is the member with most fields filled (ties: source
authority, then record id). Each field takes the most complete value any member
has (longest abstract, author list with most names), ties going to the more
authoritative source and then to the canonical record, so a value is never
replaced by an empty one. Fields that describe one source record (source,
source_id, raw) come from the canonical record; ``authors`` and ``first_author``
come together from one member, so that they agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from hysem_assets.core.records import CORE_COLUMNS
from hysem_assets.dedup.cluster import ClusterResult
from hysem_assets.dedup.normalize import is_missing, split_authors

#: Field -> how complete a value is; fields not listed: any value is as good as another.
_COMPLETENESS: dict[str, Callable[[Any], int]] = {
    "abstract": lambda value: len(str(value).strip()),
    "authors": lambda value: len(split_authors(value)),
    "journal": lambda value: len(str(value).strip()),
    "pages": lambda value: len(str(value).strip()),
    "publication_types": lambda value: len(str(value).split(";")),
}
#: Fields describing one source record: they come from the canonical record.
_IDENTITY = ("source", "source_id", "raw")
#: Fields taken together from the member that supplies the group's first field.
_GROUPS = (_IDENTITY, ("authors", "first_author"))
_FIELD_GROUPS = (*_GROUPS, *((f,) for f in CORE_COLUMNS if not any(f in g for g in _GROUPS)))
MERGED_COLUMNS = ("cluster_id", "record_ids", "sources", *CORE_COLUMNS, "provenance", "merge_evidence")


def _completeness(field: str, value: Any) -> int:
    return _COMPLETENESS.get(field, lambda _: 1)(value)


def _best(members: list[dict[str, Any]], field: str, rank: Callable[[dict[str, Any]], tuple]) -> dict[str, Any] | None:
    """The member with the most complete value of ``field``; ties by ``rank``."""
    holders = [m for m in members if not is_missing(m.get(field))]
    if not holders:
        return None
    return min(holders, key=lambda m: (-_completeness(field, m[field]), rank(m)))


def _merge_cluster(cluster_id: str, members: list[dict[str, Any]], authority: Sequence[str]) -> dict[str, Any]:
    def authority_rank(member: dict[str, Any]) -> int:
        source = member.get("source")
        return authority.index(source) if source in authority else len(authority)

    filled = {id(m): sum(not is_missing(m.get(f)) for f in CORE_COLUMNS) for m in members}
    order = sorted(members, key=lambda m: (-filled[id(m)], authority_rank(m), m["record_id"]))
    position = {id(m): index for index, m in enumerate(order)}

    def rank(member: dict[str, Any]) -> tuple[int, int]:
        return authority_rank(member), position[id(member)]

    merged: dict[str, Any] = dict.fromkeys(CORE_COLUMNS)
    merged["authors"] = []
    provenance: dict[str, str] = {}
    for group in _FIELD_GROUPS:
        donor = order[0] if group is _IDENTITY else _best(order, group[0], rank)
        for field in group:
            holder = donor
            if holder is None or is_missing(holder.get(field)):
                holder = _best(order, field, rank)
            if holder is not None:
                merged[field], provenance[field] = holder[field], holder["record_id"]
    sources = (m.get("source") for m in members)
    return {
        "cluster_id": cluster_id,
        "record_ids": [m["record_id"] for m in members],
        "sources": list(dict.fromkeys(str(s) for s in sources if not is_missing(s))),
        **merged,
        "provenance": provenance,
    }


def _links_by_cluster(clusters: ClusterResult, record_ids: list[str], cluster_ids: pd.Series) -> dict[str, list[dict]]:
    """The links that built each cluster, as plain dicts (record ids, rule, score,
    points, evidence), so that a reviewer can see why records were merged."""
    cluster_of = dict(zip(record_ids, cluster_ids))
    links: dict[str, list[dict]] = {}
    for link in clusters.pairs.astype(object).where(clusters.pairs.notna(), None).to_dict("records"):
        links.setdefault(cluster_of[link["record_id_a"]], []).append(link)
    return links


def merge_clusters(
    frame: pd.DataFrame,
    clusters: ClusterResult,
    authority: Sequence[str] = (),
) -> pd.DataFrame:
    """One row per cluster: ``cluster_id``, ``record_ids``, ``sources``, the canonical
    value of every core column, ``provenance`` (field -> record_id it came from) and
    ``merge_evidence`` (the links that merged the cluster's records; empty for one record).

    ``frame`` needs ``record_id``; ``clusters`` must come from ``cluster_records`` on
    the same rows. Every record id appears in exactly one output row. ``authority`` names
    sources most trusted first (the source registry's order); sources it leaves out come last.
    """
    if "record_id" not in frame.columns:
        raise ValueError("merge_clusters needs a 'record_id' column identifying each row")
    cluster_ids = clusters.cluster_id.reindex(frame.index)
    if cluster_ids.isna().any():
        raise ValueError("clusters do not cover every row of frame; cluster the same frame")
    columns = ["record_id", *(c for c in CORE_COLUMNS if c in frame.columns)]
    rows = frame[columns].astype(object).to_dict("records")
    members: dict[str, list[dict[str, Any]]] = {}
    for cluster_id, row in zip(cluster_ids, rows):
        row["record_id"] = str(row["record_id"])
        members.setdefault(cluster_id, []).append(row)
    merged = [_merge_cluster(cid, group, tuple(authority)) for cid, group in members.items()]
    links = _links_by_cluster(clusters, [row["record_id"] for row in rows], cluster_ids)
    for row in merged:
        row["merge_evidence"] = links.get(row["cluster_id"], [])
    table = pd.DataFrame(merged, columns=list(MERGED_COLUMNS))
    # Typed as in the source tables, so the type does not depend on whether a year is missing or no record came.
    table["year"] = table["year"].astype("Int64")
    return table
