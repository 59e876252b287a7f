"""Re-searching a living review: each source is asked only for what it added since the last
complete search, and what it returns is merged into the records already held."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from hysem_assets.settings.queries import EntryWindow, QuerySpec

#: ``auto``: only what is new when the query has a schedule, everything otherwise; ``new``: only what
#: is new; ``full``: everything (records no longer found leave the partition).
SearchMode = Literal["auto", "new", "full"]


@dataclass(frozen=True)
class LastSearch:
    """What a source's latest materialization recorded about the search that made it."""

    searched_through: dt.date | None
    search_key: str | None
    complete: bool


def entry_window(
    spec: QuerySpec, source: str, last: LastSearch | None, mode: SearchMode, as_of: dt.date
) -> EntryWindow | None:
    """The days to ask ``source`` about, or None for a full search.

    Only records added since the last complete search under the same query are asked for; a
    changed query, a partial or missing last search, or ``full`` searches everything again. The
    window starts on the last search's day, not after it, since records added later that day
    were not seen; records found twice are merged by their id.
    """
    if mode == "full" or (mode == "auto" and not spec.cron):
        return None
    if last is None or not last.complete or last.searched_through is None:
        return None
    if last.search_key != spec.search_key(source):
        return None
    return EntryWindow(since=min(last.searched_through, as_of), until=as_of)


def merge_found(previous: pd.DataFrame, found: pd.DataFrame) -> pd.DataFrame:
    """The records held, each replaced by its new version where the re-search returned it, then the new ones."""
    if previous.empty:
        return found.reset_index(drop=True)
    if found.empty:
        return previous.reset_index(drop=True)
    kept = previous[~previous["source_id"].isin(set(found["source_id"]))]
    return pd.concat([kept, found], ignore_index=True)


def parse_as_of(value: str) -> dt.date:
    """The day a search covers up to: ``YYYY-MM-DD``, or today (UTC) when empty."""
    if not value:
        return dt.datetime.now(dt.UTC).date()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"as_of {value!r} is not a date; write it as YYYY-MM-DD, or leave it empty for today"
        ) from None
