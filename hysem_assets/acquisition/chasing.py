"""Citation searching kept incremental: what was chased before is held, only new studies are chased.

Each chased record says how it was found (``found_via``: ``backward:W1`` for a work study W1
cites, ``forward:W1`` for a work citing it); a work found from several studies is one record
with every route, so screening and PRISMA count it once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import pandas as pd

from hysem_assets.core.records import records_frame

FOUND_VIA = "found_via"


def seeds_of(corpus: pd.DataFrame, included: Iterable[str]) -> list[str]:
    """OpenAlex ids of the included works, in the corpus's order; works without one cannot be chased."""
    chosen = corpus[corpus["cluster_id"].astype(str).isin(set(included))]
    return [str(value) for value in chosen["openalex_id"].dropna().unique()]


def chased_frame(records: list[dict], found_via: Mapping[str, list[str]]) -> pd.DataFrame:
    """The chased records as a raw_metadata table, each with its routes as JSON text."""
    frame = records_frame(records)
    routes = [sorted(set(found_via.get(source_id, []))) for source_id in frame["source_id"]]
    return frame.assign(**{FOUND_VIA: pd.Series([json.dumps(r) for r in routes], dtype="string")})


def merge_chased(held: pd.DataFrame, found: pd.DataFrame) -> pd.DataFrame:
    """Held records, each taking the new version and the routes of both where it was found again, then the new."""
    if held.empty:
        return found.reset_index(drop=True)
    if found.empty:
        return held.reset_index(drop=True)
    earlier = dict(zip(held["source_id"], held[FOUND_VIA].map(json.loads)))
    routes = [
        json.dumps(sorted(set(json.loads(now)) | set(earlier.get(source_id, []))))
        for source_id, now in zip(found["source_id"], found[FOUND_VIA])
    ]
    found = found.assign(**{FOUND_VIA: pd.Series(routes, dtype="string", index=found.index)})
    kept = held[~held["source_id"].isin(set(found["source_id"]))]
    return pd.concat([kept, found], ignore_index=True)


def chased_studies(frame: pd.DataFrame) -> set[str]:
    """The studies whose citations a table already holds."""
    return {route.split(":", 1)[1] for routes in frame.get(FOUND_VIA, []) for route in json.loads(routes)}
