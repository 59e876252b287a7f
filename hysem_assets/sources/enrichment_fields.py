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
    "notice_of",
)

#: Item types that mark a version not (yet) published in a journal or book.
UNPUBLISHED_TYPES = frozenset({"preprint", "posted-content", "posted content"})

#: Crossref update types that withdraw a work.
RETRACTION_TYPES = frozenset({"retraction", "withdrawal", "removal"})

#: Crossref update types of a notice about a work: it corrects or withdraws it.
NOTICE_TYPES = RETRACTION_TYPES | {"correction", "erratum", "corrigendum", "expression_of_concern"}
