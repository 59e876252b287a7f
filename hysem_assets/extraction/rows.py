"""The rows of ``extracted_fields``: which text each work is read from, and its values with their evidence.

The asset and ``hysem extract`` (records a reviewer already has) both go through here, so a
value extracted either way is the same value with the same evidence.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from hysem_assets.extraction.documents import Document, ProgressCallback, extract_documents_sync
from hysem_assets.extraction.evidence import evidence_for
from hysem_assets.llm.backend import LLMBackend
from hysem_assets.profile import ExtractionSettings
from hysem_assets.protocols import Protocol
from hysem_assets.retrieval.chunking import blank_reference_lists


def documents_to_extract(corpus: pd.DataFrame, parsed: pd.DataFrame) -> list[Document]:
    """Every work: its parsed full text (reference lists blanked) where there is one, else title and abstract.

    Closed-access works still get their fields from what the abstract says, and the row
    records which text it came from.
    """
    full_text = parsed[parsed["error"].isna()].set_index("cluster_id")["markdown"].to_dict()
    documents = []
    for row in corpus.itertuples():
        text = blank_reference_lists(full_text.get(row.cluster_id) or "")
        source = "full_text" if text.strip() else "abstract"  # a parse that was all references has nothing else
        if source == "abstract":
            text = "\n\n".join(part for part in (row.title, row.abstract) if isinstance(part, str) and part)
        documents.append(Document(row.cluster_id, text, {"title": row.title or "", "text_source": source}))
    return documents


def extracted_rows(
    documents: Sequence[Document],
    protocol: Protocol,
    backend: LLMBackend,
    settings: ExtractionSettings,
    progress: ProgressCallback | None = None,
) -> list[dict[str, Any]]:
    """One row per document: the protocol's fields, status and accounting, and the evidence as JSON text."""
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
    return [
        {
            **result.as_row(),
            "evidence": json.dumps(evidence_for(document.text, protocol, result.values), ensure_ascii=False),
        }
        for document, result in zip(documents, results, strict=True)
    ]
