"""The normalized record shape shared by every metadata source.

Each source parser returns plain dicts with exactly these keys, so that the
raw_metadata assets, the dedup stage and the tests agree on one schema.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

#: Columns every raw_metadata table carries, in this order.
CORE_COLUMNS: tuple[str, ...] = (
    "source",  # "pubmed" | "openalex" | "scopus"
    "source_id",  # the source's own id: PMID, OpenAlex W-id, Scopus EID
    "doi",  # normalized DOI (lower case, no resolver prefix) or None
    "title",
    "abstract",  # plain text; structured sections as "LABEL: text" paragraphs
    "authors",  # list of "Surname, Given" strings (collectives as given)
    "first_author",  # surname of the first author, or the collective name
    "year",  # int or None
    "journal",
    "volume",
    "issue",
    "pages",
    "item_type",  # source's own type, lower case ("journal-article", "erratum", "book", ...)
    "publication_types",  # every type the source states, "; "-separated (PubMed's PublicationType list)
    "notice_of",  # what a notice is about: "erratum:pmid:N", "retraction:doi:D", "; "-separated (PubMed, Crossref)
    "language",  # ISO 639 code as the source gives it
    "pmid",
    "pmcid",  # PubMed Central id, "PMC1234567" (the key of a JATS full text)
    "openalex_id",  # "W123..." without the URL prefix
    "oa_url",  # best open-access URL the source knows of
    "raw",  # the untouched source record (JSON text, or XML text for PubMed)
)


def empty_record(source: str, source_id: str) -> dict[str, Any]:
    """A record with every core column present and unknown values as None."""
    record: dict[str, Any] = dict.fromkeys(CORE_COLUMNS)
    record.update(source=source, source_id=source_id, authors=[])
    return record


def to_json_text(value: Any) -> str:
    """Serialize a raw source record compactly and stably (keys kept in source order)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Build a DataFrame with the core columns in order and stable dtypes."""
    frame = pd.DataFrame.from_records(records, columns=list(CORE_COLUMNS))
    frame["year"] = frame["year"].astype("Int64")
    for column in CORE_COLUMNS:
        if column not in ("year", "authors"):
            frame[column] = frame[column].astype("string")
    return frame
