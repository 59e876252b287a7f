"""What an answer may cite: library records, and retrieved chunks carrying their metadata object.

A citation is the metadata object itself (document, chunk, DOI, Zotero key, in-text and
full citation), not a free-form string, so the post-hoc audit can check every part of it
against the library and against what was actually retrieved.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

#: The keys of a metadata object, as prompts and answers spell them.
METADATA_KEYS = ("PDF_DocIndex", "PDF_ChunkIndex", "DOI", "ZoteroKey", "InTextCitation", "FullCitation")


def clean(value: Any) -> Any:
    """None for missing values of any kind (NaN, NA, empty string), numpy scalars as Python ones."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if value is None or value is pd.NA or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


@dataclass(frozen=True)
class SourceMetadata:
    """One citable source: a chunk of a document (``PDF_ChunkIndex`` None: the whole article)."""

    PDF_DocIndex: str
    PDF_ChunkIndex: int | None
    DOI: str | None
    ZoteroKey: str | None
    InTextCitation: str | None
    FullCitation: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def locator(self) -> tuple[str, int | None]:
        return (self.PDF_DocIndex, self.PDF_ChunkIndex)


@dataclass(frozen=True)
class LibraryRecord:
    cluster_id: str
    doi: str | None
    zotero_key: str | None
    in_text_citation: str | None
    full_citation: str | None

    def metadata(self, chunk_index: int | None) -> SourceMetadata:
        return SourceMetadata(
            self.cluster_id, chunk_index, self.doi, self.zotero_key, self.in_text_citation, self.full_citation
        )


Library = Mapping[str, LibraryRecord]


def library_records(library: pd.DataFrame) -> dict[str, LibraryRecord]:
    """The ``library`` asset's rows by cluster id: the authority every citation is checked against."""
    return {
        str(row["cluster_id"]): LibraryRecord(
            str(row["cluster_id"]),
            clean(row.get("doi")),
            clean(row.get("zotero_key")),
            clean(row.get("in_text_citation")),
            clean(row.get("full_citation")),
        )
        for row in library.to_dict("records")
    }


@dataclass(frozen=True)
class ContextChunk:
    """A retrieved chunk as the generator sees it; ``routes`` says which retrievers found it."""

    chunk_id: str
    section: str
    text: str
    metadata: SourceMetadata
    score: float
    routes: tuple[str, ...]


@dataclass(frozen=True)
class ChunkRow:
    chunk_id: str
    cluster_id: str
    chunk_index: int
    section: str
    text: str


def chunk_rows(chunks: pd.DataFrame) -> dict[str, ChunkRow]:
    """The ``vector_index`` asset's chunk table by chunk id (texts for hits from any retriever)."""
    return {
        str(row["chunk_id"]): ChunkRow(
            str(row["chunk_id"]),
            str(row["cluster_id"]),
            int(row["chunk_index"]),
            clean(row.get("section")) or "",
            row["text"],
        )
        for row in chunks.to_dict("records")
    }


def context_chunks(
    ranked: Iterable[tuple[str, float, tuple[str, ...]]], chunks: Mapping[str, ChunkRow], library: Library
) -> list[ContextChunk]:
    """Context from ranked ``(chunk id, score, routes)``; chunks without a library record cannot be cited and are left out."""
    context = []
    for chunk_id, score, routes in ranked:
        row = chunks.get(chunk_id)
        record = library.get(row.cluster_id) if row else None
        if row is None or record is None:
            continue
        context.append(ContextChunk(chunk_id, row.section, row.text, record.metadata(row.chunk_index), score, routes))
    return context
