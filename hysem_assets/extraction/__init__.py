"""Structured fields from parsed documents: definitions, chunking, incremental extraction, merging."""

from hysem_assets.extraction.chunking import TOKENIZER_NAME, Chunk, chunk_text, count_tokens
from hysem_assets.extraction.documents import (
    Document,
    ExtractionResult,
    extract_document,
    extract_documents,
    extract_documents_sync,
)
from hysem_assets.extraction.fields import FieldSpec, record_model, response_schema
from hysem_assets.extraction.merge import merge_records

__all__ = [
    "TOKENIZER_NAME",
    "Chunk",
    "Document",
    "ExtractionResult",
    "FieldSpec",
    "chunk_text",
    "count_tokens",
    "extract_document",
    "extract_documents",
    "extract_documents_sync",
    "merge_records",
    "record_model",
    "response_schema",
]
