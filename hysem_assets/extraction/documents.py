"""Context-aware incremental extraction over documents: the logic behind ``extracted_fields``.

Each document is split into token chunks read in order; every prompt carries the record
merged from the chunks before it, so the model can keep spellings consistent and refine
rather than repeat. Chunks of one document are therefore sequential, while documents run
concurrently up to a bound. Every answer is validated against the response schema
(extra keys, missing keys and wrong types are all invalid, never empty fields); an invalid
one is sent back with the reason and retried, and a document whose chunk stays invalid
(or whose backend fails) keeps its row with status ``error`` and the reason. The cache
keeps only valid answers, so a re-run asks again where the server answered wrongly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from hysem_assets.extraction.chunking import chunk_text
from hysem_assets.extraction.merge import merge_records
from hysem_assets.extraction.prompts import correction_message, extraction_messages
from hysem_assets.llm.backend import LLMBackend
from hysem_assets.llm.completion import LLMError, Message, TokenUsage, UnreadableText
from hysem_assets.llm.validation import MAX_PROBLEMS, not_json_reason
from hysem_assets.settings.backends import GenerationParams
from hysem_assets.settings.fields import FieldSpec, empty_record, record_model, response_schema

Status = Literal["ok", "error", "empty"]
#: Called with (documents finished, documents in total) after each document.
ProgressCallback = Callable[[int, int | None], None]


@dataclass(frozen=True)
class Document:
    """One parsed document: its id, full text, and metadata (a ``title`` is shown to the model)."""

    doc_id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


#: Columns after the fields in an extraction row: how the document went and what it cost.
EXTRACTION_RUN_COLUMNS = ("status", "error", "chunks", "prompt_tokens", "completion_tokens", "cache_hits")


@dataclass(frozen=True)
class ExtractionResult:
    """The row of one document. Tokens are those this run spent on it (answers replayed from cache cost none).

    ``values`` holds every field; for an ``error`` row, the values merged from the
    chunks before the failure.
    """

    doc_id: str
    values: dict[str, Any]
    status: Status
    error: str | None
    prompt_tokens: int
    completion_tokens: int
    chunks: int
    cache_hits: int = 0

    def as_row(self) -> dict[str, Any]:
        """A flat mapping for a DataFrame: the document id, each field, then status and accounting."""
        return {
            "doc_id": self.doc_id,
            **self.values,
            "status": self.status,
            "error": self.error,
            "chunks": self.chunks,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cache_hits": self.cache_hits,
        }


def _model_problems(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in problem['loc']) or 'answer'}: {problem['msg']}"
        for problem in error.errors()[:MAX_PROBLEMS]
    )


async def _valid_answer(
    backend: LLMBackend,
    messages: list[Message],
    schema: dict[str, Any],
    model: type[BaseModel],
    params: GenerationParams | None,
    max_attempts: int,
    usage: TokenUsage,
) -> dict[str, Any]:
    """One validated answer, sending each invalid one back with its reason; LLMError when attempts run out.

    The backend checked the answer against ``schema`` (``invalid`` says why it fails);
    ``model`` then reads a valid one into the record's values.
    """
    reason = ""
    for _ in range(max_attempts):
        completion = await backend.complete(messages, schema=schema, params=params)
        usage.add(completion)
        if completion.invalid is None and completion.parsed_json is not None:
            try:
                return model.model_validate(completion.parsed_json).model_dump()
            except ValidationError as exc:
                reason = _model_problems(exc)
        else:
            reason = completion.invalid or not_json_reason(completion)
        messages = [*messages, {"role": "assistant", "content": completion.text}, correction_message(reason)]
    raise LLMError(f"invalid output after {max_attempts} attempts: {reason}")


async def extract_document(
    document: Document,
    fields: Sequence[FieldSpec],
    backend: LLMBackend,
    *,
    chunk_tokens: int = 8000,
    overlap: int = 500,
    max_attempts: int = 3,
    params: GenerationParams | None = None,
) -> ExtractionResult:
    """The merged record of one document, chunk by chunk."""
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1 (got {max_attempts})")
    model, schema = record_model(fields), response_schema(fields)
    chunks = chunk_text(document.text, chunk_tokens=chunk_tokens, overlap=overlap)
    record, usage = empty_record(fields), TokenUsage()

    def result(status: Status, error: str | None = None) -> ExtractionResult:
        return ExtractionResult(
            document.doc_id,
            record,
            status,
            error,
            usage.prompt_tokens,
            usage.completion_tokens,
            len(chunks),
            usage.cache_hits,
        )

    if not chunks:
        return result("empty", "no text to extract from")
    unreadable = None
    for chunk in chunks:
        messages = extraction_messages(
            fields,
            chunk.text,
            number=chunk.index + 1,
            count=len(chunks),
            record_so_far=record,
            title=document.metadata.get("title"),
        )
        try:
            answer = await _valid_answer(backend, messages, schema, model, params, max_attempts, usage)
        except UnreadableText as exc:  # this excerpt adds nothing; the others may
            unreadable = f"chunk {chunk.index + 1} of {len(chunks)}: {exc}" if len(chunks) > 1 else str(exc)
            continue
        except LLMError as exc:
            return result("error", f"chunk {chunk.index + 1} of {len(chunks)}: {exc}")
        record = merge_records(fields, record, answer)
    return result("empty", unreadable) if unreadable and record == empty_record(fields) else result("ok")


async def extract_documents(
    documents: Sequence[Document],
    fields: Sequence[FieldSpec],
    backend: LLMBackend,
    *,
    chunk_tokens: int = 8000,
    overlap: int = 500,
    concurrency: int = 4,
    max_attempts: int = 3,
    params: GenerationParams | None = None,
    progress: ProgressCallback | None = None,
) -> list[ExtractionResult]:
    """One result per document, in input order, whatever happened to it.

    ``concurrency`` bounds documents in flight; the backend bounds requests in flight.
    ``max_attempts`` is how often one chunk is asked before its document is an error.
    """
    semaphore = asyncio.Semaphore(concurrency)
    finished = 0

    async def one(document: Document) -> ExtractionResult:
        nonlocal finished
        async with semaphore:
            result = await extract_document(
                document,
                fields,
                backend,
                chunk_tokens=chunk_tokens,
                overlap=overlap,
                max_attempts=max_attempts,
                params=params,
            )
        finished += 1
        if progress:
            progress(finished, len(documents))
        return result

    return list(await asyncio.gather(*(one(document) for document in documents)))


def extract_documents_sync(
    documents: Sequence[Document], fields: Sequence[FieldSpec], backend: LLMBackend, **options: Any
) -> list[ExtractionResult]:
    """:func:`extract_documents` from synchronous code (an asset); closes the backend's connections after.

    The backend stays usable: it reopens connections in the next event loop.
    """

    async def run() -> list[ExtractionResult]:
        try:
            return await extract_documents(documents, fields, backend, **options)
        finally:
            await backend.aclose()

    return asyncio.run(run())
