"""The fields that Crossref and OpenAlex can backfill on a merged record."""

from __future__ import annotations

#: Columns added to (or backfilled on) the deduplicated corpus by enrichment.
ENRICHMENT_COLUMNS: tuple[str, ...] = (
    "abstract",
    "item_type",
    "cited_by_count",
    "primary_topic",
    "is_retracted",
    "is_published",
    "openalex_id",
    "license",
    "oa_status",
    "corrects",
)

#: Item types that mark a version not (yet) published in a journal or book.
UNPUBLISHED_TYPES = frozenset({"preprint", "posted-content", "posted content"})

#: Crossref update types that withdraw a work.
RETRACTION_TYPES = frozenset({"retraction", "withdrawal", "removal"})

#: Crossref update types that correct a work without withdrawing it.
CORRECTION_TYPES = frozenset({"correction", "erratum", "corrigendum"})
