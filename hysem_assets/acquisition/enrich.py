"""Non-destructive backfill of the merged corpus from Crossref and OpenAlex lookups by DOI.

A value the sources already gave is never replaced; enrichment only fills gaps, adds
fields the searches do not return (citation counts, topics, licences), and raises
retraction flags from any evidence: a Crossref ``updated-by`` retraction, a Crossref
notice's ``update-to`` target, OpenAlex ``is_retracted``, or a PubMed record typed
"retracted publication".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from hysem_assets.dedup.normalize import is_missing
from hysem_assets.sources.enrichment_fields import UNPUBLISHED_TYPES
from hysem_assets.sources.lookups import LookupOutcome

#: Fields filled only where the merged record has none, first lookup source first.
BACKFILLED = ("abstract", "item_type", "openalex_id", "primary_topic", "license", "oa_status", "notice_of")
#: Columns the corpus gains from enrichment.
ADDED_COLUMNS = ("cited_by_count", "primary_topic", "is_retracted", "is_published", "license", "oa_status")
RETRACTED_ITEM_TYPES = frozenset({"retracted publication"})


def retracted_clusters(raw: pd.DataFrame, cluster_ids: pd.Series) -> set[str]:
    """Clusters holding a source record that its source typed as retracted."""
    flagged = raw["item_type"].fillna("").str.lower().isin(RETRACTED_ITEM_TYPES)
    return set(cluster_ids[flagged.to_numpy()])


def apply_enrichment(
    corpus: pd.DataFrame, lookups: Iterable[LookupOutcome], retracted_cluster_ids: set[str] = frozenset()
) -> pd.DataFrame:
    """The corpus with :data:`ADDED_COLUMNS` and gaps filled; ``provenance`` names every donor."""
    lookups = list(lookups)
    notices = set().union(*(outcome.retracted for outcome in lookups))
    rows = [
        _enrich_row(row, lookups, notices, row["cluster_id"] in retracted_cluster_ids)
        for row in corpus.astype(object).to_dict("records")
    ]
    columns = list(dict.fromkeys([*corpus.columns, *ADDED_COLUMNS]))
    enriched = pd.DataFrame(rows, columns=columns).astype(corpus.dtypes.to_dict())  # types survive the rows
    enriched["cited_by_count"] = enriched["cited_by_count"].astype("Int64")
    for flag in ("is_retracted", "is_published"):
        enriched[flag] = enriched[flag].astype("boolean")
    return enriched


def _lookup_origin(source: str, doi: str) -> str:
    """Provenance of an enriched value; distinct from the ``source:id`` of source records."""
    return f"enrichment:{source}:{doi}"


def _enrich_row(
    row: dict[str, Any], lookups: list[LookupOutcome], notices: set[str], typed_retracted: bool
) -> dict[str, Any]:
    doi = row.get("doi") if not is_missing(row.get("doi")) else None
    found = [(o.source, o.found[doi]) for o in lookups if doi and doi in o.found]
    provenance = dict(row.get("provenance") or {})
    for column in ADDED_COLUMNS:
        row.setdefault(column, None)
    for field in BACKFILLED:
        if is_missing(row.get(field)):
            donor = next(((s, v[field]) for s, v in found if not is_missing(v.get(field))), None)
            if donor:
                row[field], provenance[field] = donor[1], _lookup_origin(donor[0], doi)
    counts = [(v["cited_by_count"], s) for s, v in found if isinstance(v.get("cited_by_count"), int)]
    if counts:
        row["cited_by_count"], source = max(counts)
        provenance["cited_by_count"] = _lookup_origin(source, doi)
    retraction_evidence = [s for s, v in found if v.get("is_retracted")]
    if doi in notices:
        retraction_evidence.append("crossref notice")
    if typed_retracted:
        retraction_evidence.append("source record type")
    row["is_retracted"] = bool(retraction_evidence)
    if retraction_evidence:
        provenance["is_retracted"] = ", ".join(retraction_evidence)
    published = [v["is_published"] for _, v in found if v.get("is_published") is not None]
    item_type = str(row.get("item_type") or "").lower()
    row["is_published"] = published[0] if published else (item_type not in UNPUBLISHED_TYPES if item_type else None)
    row["provenance"] = provenance
    return row
