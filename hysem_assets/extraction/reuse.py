"""Which extractions a re-run can skip: a work's row is kept by its text and everything that reads it.

The key holds the text the work is read from, its title (the model sees both) and its
publication types (:mod:`~hysem_assets.extraction.publication_types`), the
protocol's fingerprint, the backend's model id (the embedded extractor's names its rules,
settings and dictionaries), the backend settings that change answers
(:func:`~hysem_assets.settings.backends.answer_settings`), the chunking and attempts, and
:data:`EXTRACT_CODE`. Rows with status ``error`` are not kept: a backend that failed may
answer next time. A reused row keeps its values, status and evidence, and counts no tokens
and no cache hits, since this run spent nothing on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hysem_assets.extraction.documents import Document
from hysem_assets.settings.backends import answer_settings
from hysem_assets.settings.profile import ExtractionSettings
from hysem_assets.stores.work_cache import CachedRun, Row, WorkCache, content_key

#: Change when hysem's extraction code (prompts, merging, evidence) changes what it writes.
EXTRACT_CODE = "extract-3"
#: What a row says this run spent on the work.
ACCOUNTING = ("prompt_tokens", "completion_tokens", "cache_hits")


def reader_of(protocol_fingerprint: str, model: str, settings: ExtractionSettings) -> dict[str, Any]:
    """What reads every work of a run, the part of each key that is not the work's own."""
    return {
        "protocol": protocol_fingerprint,
        "model": model,
        "backend": answer_settings(settings.llm),
        "chunk_tokens": settings.chunk_tokens,
        "overlap": settings.overlap,
        "max_attempts": settings.max_attempts,
    }


def extraction_key(document: Document, reader: Mapping[str, Any]) -> str:
    metadata = document.metadata
    return content_key(
        "extracted_fields",
        EXTRACT_CODE,
        document.text,
        metadata.get("title"),
        metadata.get("publication_types"),
        reader,
    )


def reuse_or_extract(
    cache: WorkCache,
    partition: str,
    works: Sequence[str],
    documents: Sequence[Document],
    reader: Mapping[str, Any],
    extract: Callable[[list[Document]], list[Row]],
) -> CachedRun:
    """The extracted rows of ``documents`` (of the works ``works``), extracting only the works the cache lacks.

    ``reader`` is :func:`reader_of` this run; ``extract`` takes the documents to read and returns their rows in order.
    """
    keys = [extraction_key(document, reader) for document in documents]
    run = cache.reuse_or_compute(
        partition,
        works,
        [(key,) for key in keys],
        lambda positions: extract([documents[p] for p in positions]),
        lambda position, row: keys[position] if row["status"] != "error" else None,
    )
    for row, reused in zip(run.rows, run.reused, strict=True):
        if reused:
            row.update(dict.fromkeys(ACCOUNTING, 0))
    return run
