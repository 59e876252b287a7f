"""Turn a fetch outcome into materialization metadata and a verdict."""

from __future__ import annotations

from typing import Any

import pandas as pd
from dagster import MetadataValue

from hysem_assets.core.empty import empty_note
from hysem_assets.defs.metadata import table_preview
from hysem_assets.sources.base import Failure, FetchOutcome

PREVIEW_COLUMNS = ["source_id", "doi", "year", "first_author", "title"]


def fatal_error(outcome: FetchOutcome) -> str | None:
    """A message when the source returned nothing at all because requests failed, else None."""
    if outcome.records or not outcome.failures:
        return None
    first = outcome.failures[0]
    return (
        f"{outcome.source} returned no records: {len(outcome.failures)} request(s) failed, "
        f"first at {first.where}: {first.reason}. Check the base URL and network, then re-materialize."
    )


def partial_summary(outcome: FetchOutcome, records: int, expected: int | None) -> str:
    """One line: what is missing from a partial fetch and where it first failed."""
    first = outcome.failures[0]
    held = f"{records:,} of {expected:,}" if expected is not None and expected > records else f"{records:,}"
    return (
        f"{outcome.source} fetch is partial: {len(outcome.failures)} request(s) still failed after retries "
        f"(first at {first.where}: {first.reason}); it holds {held} records"
    )


def failures_table(failures: list[Failure], limit: int = 50) -> str:
    rows = [f"| {f.where} | {f.reason.replace('|', '/')} |" for f in failures[:limit]]
    more = [f"| … | {len(failures) - limit} more |"] if len(failures) > limit else []
    return "\n".join(["| where | reason |", "|---|---|", *rows, *more])


def outcome_metadata(outcome: FetchOutcome, frame: pd.DataFrame, endpoint_url: str, seconds: float) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "dagster/row_count": len(frame),
        **empty_note(len(frame), outcome.skipped or f"{outcome.source} returned no record for this query"),
        "source_url": endpoint_url,
        "total_available": outcome.total_available if outcome.total_available is not None else -1,
        "requests": outcome.stats.requests,
        "retries": outcome.stats.retries,
        "partial": outcome.partial,
        "failures": len(outcome.failures),
        "rejected_records": len(outcome.rejected),
        "with_doi": int(frame["doi"].notna().sum()),
        "with_abstract": int(frame["abstract"].notna().sum()),
        "seconds": round(seconds, 2),
        "preview": table_preview(frame, PREVIEW_COLUMNS, empty="_no records_"),
    }
    if outcome.failures:
        metadata["failure_details"] = MetadataValue.md(failures_table(outcome.failures))
    if outcome.rejected:
        metadata["rejected_details"] = MetadataValue.md(failures_table(outcome.rejected))
    if outcome.notes:
        metadata["notes"] = MetadataValue.md("\n".join(f"- {note}" for note in outcome.notes))
    if outcome.skipped:
        metadata["skipped"] = outcome.skipped
    return metadata
