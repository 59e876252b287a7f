"""The rows of ``extracted_fields``: which text each work is read from, and its values with their evidence.

The asset and ``hysem extract`` (records a reviewer already has) both go through here, so a
value extracted either way is the same value with the same evidence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from hysem_assets.extraction.designs import design_values
from hysem_assets.extraction.documents import Document, ProgressCallback, extract_documents_sync
from hysem_assets.extraction.evidence import evidence_for
from hysem_assets.extraction.own_text import own_texts
from hysem_assets.extraction.publication_types import record_types, with_stated_values
from hysem_assets.llm.backend import LLMBackend
from hysem_assets.retrieval.chunking import blank_reference_lists
from hysem_assets.settings.profile import ExtractionSettings
from hysem_assets.settings.protocols import Protocol


def documents_to_extract(corpus: pd.DataFrame, parsed: pd.DataFrame, *, own_values: bool = True) -> list[Document]:
    """Every work: its parsed full text (reference lists blanked) where there is one, else title and abstract.

    Closed-access works still get their fields from what the abstract says, and the row
    records which text it came from. The types the record's sources state (``publication_types``,
    ``item_type``) go along: a protocol's category field may take its value from them. With
    ``own_values``, what is not the work's own (sentences shared by several works of ``corpus``,
    affiliations, funding and the like: :mod:`~hysem_assets.extraction.own_text`) is blanked,
    and the metadata counts the sentences blanked; without, every word is read, as a comparison does.
    """
    full_text = parsed[parsed["error"].isna()].set_index("cluster_id")["markdown"].to_dict()
    texts, metadata = [], []
    for row in corpus.itertuples():
        text = blank_reference_lists(full_text.get(row.cluster_id) or "")
        source = "full_text" if text.strip() else "abstract"  # a parse that was all references has nothing else
        if source == "abstract":
            text = "\n\n".join(part for part in (row.title, row.abstract) if isinstance(part, str) and part)
        types = record_types(getattr(row, "publication_types", None), getattr(row, "item_type", None))
        texts.append(text)
        metadata.append({"title": row.title or "", "text_source": source, "publication_types": types})
    if not own_values:
        return [Document(row.cluster_id, t, m) for row, t, m in zip(corpus.itertuples(), texts, metadata, strict=True)]
    documents = []
    for row, own, meta in zip(corpus.itertuples(), own_texts(texts), metadata, strict=True):
        blanked = {"shared": own.shared, "excluded": own.excluded, "front_matter": own.front_matter}
        documents.append(Document(row.cluster_id, own.text, {**meta, "blanked": blanked}))
    return documents


def blanked_counts(documents: Sequence[Document]) -> dict[str, int]:
    """What :func:`documents_to_extract` left unread across ``documents``: sentences or lines, per rule."""
    totals = {"shared": 0, "excluded": 0, "front_matter": 0}
    for document in documents:
        for rule, count in document.metadata.get("blanked", {}).items():
            totals[rule] += count
    return totals


def extracted_rows(
    documents: Sequence[Document],
    protocol: Protocol,
    backend: LLMBackend,
    settings: ExtractionSettings,
    progress: ProgressCallback | None = None,
    *,
    own_values: bool = True,
) -> list[dict[str, Any]]:
    """One row per document: the protocol's fields, status and accounting, and the evidence as JSON text.

    A value the record's publication types state replaces what the backend read in the text. A design
    column holds one of its categories (:mod:`~hysem_assets.extraction.designs`); one left empty has
    ``{"value": null, "reason": ...}`` as its evidence. ``own_values`` False keeps the backend's answers
    and takes the first place a value stands as its evidence, as before both rules were.
    """
    results = extract_documents_sync(
        documents,
        protocol.extraction_fields(),
        backend,
        chunk_tokens=settings.chunk_tokens,
        overlap=settings.overlap,
        concurrency=settings.concurrency,
        max_attempts=settings.max_attempts,
        progress=progress,
    )
    rows = []
    for document, result in zip(documents, results, strict=True):
        designs, reasons = design_values(protocol, result.values) if own_values else (result.values, {})
        values, evidence = with_stated_values(
            protocol,
            designs,
            evidence_for(document.text, protocol, designs, parts=own_values),
            document.metadata.get("publication_types", ()),
        )
        for name, reason in reasons.items():
            if values.get(name) is None:
                evidence[name] = [{"value": None, "reason": reason}]
        rows.append({**result.as_row(), **values, "evidence": json.dumps(evidence, ensure_ascii=False)})
    return rows


def all_failed(rows: Sequence[Mapping[str, Any]], what: str = "works", shown: int = 3) -> str | None:
    """One line with the first distinct reasons when every row (one of ``what``) failed, else None.

    Some works failing is their own matter (each row keeps its reason); every work failing is the
    run's (a refused key, a model server down), and a table of errors must not pass for a result.
    """
    if not rows or any(row["status"] != "error" for row in rows):
        return None
    reasons = list(dict.fromkeys(" ".join(str(row["error"]).split()) for row in rows))
    more = f" (and {len(reasons) - shown:,} more)" if len(reasons) > shown else ""
    return f"all {len(rows):,} {what} failed extraction; first reasons: {' | '.join(reasons[:shown])}{more}"
