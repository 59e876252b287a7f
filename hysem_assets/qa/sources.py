"""What an answer may cite: library records, and retrieved chunks carrying their metadata object.

A citation is the metadata object itself (document, chunk, DOI, Zotero key, in-text and
full citation), not a free-form string, so the post-hoc audit can check every part of it
against the library and against what was actually retrieved. It also says the level of
evidence (``Evidence``: ``abstract`` for a work known only by its title and abstract, ``full
text`` for its parsed paper), so a reader knows how much of the work stood behind a claim.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from hysem_assets.core.matcher import matchable

#: The keys of a metadata object, as prompts and answers spell them.
METADATA_KEYS = ("PDF_DocIndex", "PDF_ChunkIndex", "DOI", "ZoteroKey", "InTextCitation", "FullCitation", "Evidence")
#: Levels of evidence of a chunk (the ``evidence`` column of the ``vector_index`` chunk table).
ABSTRACT_EVIDENCE = "abstract"
FULL_TEXT_EVIDENCE = "full text"


def clean(value: Any) -> Any:
    """None for missing values of any kind (NaN, NA, empty string), numpy scalars as Python ones."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if value is None or value is pd.NA or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


@dataclass(frozen=True)
class SourceMetadata:
    """One citable source: a chunk of a document (``PDF_ChunkIndex`` None: the whole article,
    ``Evidence`` None then too)."""

    PDF_DocIndex: str
    PDF_ChunkIndex: int | None
    DOI: str | None
    ZoteroKey: str | None
    InTextCitation: str | None
    FullCitation: str | None
    Evidence: str | None = None

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
    #: the work was retracted: answers leave it out unless a user asks for it (with a warning)
    retracted: bool = False
    #: the work's published corrections (errata), which an answer citing it names
    correction: str | None = None

    def metadata(self, chunk_index: int | None, evidence: str | None = None) -> SourceMetadata:
        return SourceMetadata(
            self.cluster_id, chunk_index, self.doi, self.zotero_key, self.in_text_citation, self.full_citation, evidence
        )


Library = Mapping[str, LibraryRecord]


def library_records(library: pd.DataFrame, retracted: Iterable[str] = ()) -> dict[str, LibraryRecord]:
    """The ``library`` asset's rows by cluster id: the authority every citation is checked against;
    ``retracted``: cluster ids of retracted works."""
    retracted = set(retracted)
    return {
        str(row["cluster_id"]): LibraryRecord(
            str(row["cluster_id"]),
            clean(row.get("doi")),
            clean(row.get("zotero_key")),
            clean(row.get("in_text_citation")),
            clean(row.get("full_citation")),
            str(row["cluster_id"]) in retracted,
            clean(row.get("correction")),
        )
        for row in library.to_dict("records")
    }


def retracted_works(chunks: pd.DataFrame) -> set[str]:
    """Cluster ids the ``vector_index`` chunk table flags as retracted (``is_retracted``)."""
    if "is_retracted" not in chunks or chunks.empty:
        return set()
    flagged = chunks["is_retracted"].astype("boolean").fillna(False).astype(bool)
    return set(chunks.loc[flagged, "cluster_id"].astype(str))


@dataclass(frozen=True)
class ContextChunk:
    """A retrieved chunk as the generator sees it; ``routes`` says which retrievers found it."""

    chunk_id: str
    section: str
    text: str
    metadata: SourceMetadata
    score: float
    routes: tuple[str, ...]
    #: the chunk's work was retracted (in a context only when a user included retracted works)
    retracted: bool = False
    #: cosine similarity of the question and the chunk as indexed, when dense search scored it
    similarity: float | None = None

    @property
    def evidence(self) -> str:
        return self.metadata.Evidence or FULL_TEXT_EVIDENCE


@dataclass(frozen=True)
class ChunkRow:
    chunk_id: str
    cluster_id: str
    chunk_index: int
    section: str
    text: str
    evidence: str = FULL_TEXT_EVIDENCE


def chunk_rows(chunks: pd.DataFrame) -> dict[str, ChunkRow]:
    """The ``vector_index`` asset's chunk table by chunk id (texts for hits from any retriever)."""
    return {
        str(row["chunk_id"]): ChunkRow(
            str(row["chunk_id"]),
            str(row["cluster_id"]),
            int(row["chunk_index"]),
            clean(row.get("section")) or "",
            row["text"],
            clean(row.get("evidence")) or FULL_TEXT_EVIDENCE,
        )
        for row in chunks.to_dict("records")
    }


def _squeezed(text: str) -> str:
    return " ".join(matchable(text).split()).casefold()


def evidence_citation(
    cluster_id: str, evidence: str | None, library: Library, chunks: Sequence[ChunkRow]
) -> SourceMetadata | None:
    """The chunk of the work (``chunks``: its chunks) that holds its ``evidence`` sentence, else the work itself;
    None for a work without a library record, which cannot be cited."""
    record = library.get(cluster_id)
    if record is None:
        return None
    if evidence:
        wanted = _squeezed(evidence)
        for chunk in chunks:
            if wanted in _squeezed(chunk.text):
                return record.metadata(chunk.chunk_index, chunk.evidence)
    return record.metadata(None)


def context_chunks(
    ranked: Iterable[tuple[str, float, tuple[str, ...]]],
    chunks: Mapping[str, ChunkRow],
    library: Library,
    similarity: Mapping[str, float] | None = None,
) -> list[ContextChunk]:
    """Context from ranked ``(chunk id, score, routes)``, with each chunk's dense ``similarity`` to
    the question where known; chunks without a library record cannot be cited and are left out."""
    similarity = similarity or {}
    context = []
    for chunk_id, score, routes in ranked:
        row = chunks.get(chunk_id)
        record = library.get(row.cluster_id) if row else None
        if row is None or record is None:
            continue
        metadata = record.metadata(row.chunk_index, row.evidence)
        context.append(
            ContextChunk(
                chunk_id, row.section, row.text, metadata, score, routes, record.retracted, similarity.get(chunk_id)
            )
        )
    return context
