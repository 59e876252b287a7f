"""Parse one PDF into a ``ParsedDocument``; failures become the document's error, never exceptions."""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from docling.datamodel.base_models import ConversionStatus
from docling.datamodel.document import ConversionResult
from docling.datamodel.settings import DEFAULT_PAGE_RANGE
from docling.document_converter import DocumentConverter
from docling_core.types.doc import ContentLayer, DoclingDocument, TableItem

from hysem_assets.embedding.minilm import TOKENIZER_NAME, count_tokens
from hysem_assets.parsing.export import equations_json, markdown, tables_json
from hysem_assets.parsing.limits import OUT_OF_MEMORY, RESOURCE_LIMIT, LimitExceeded, out_of_memory
from hysem_assets.parsing.native import native_converter
from hysem_assets.parsing.ocr import MIN_CONFIDENCE, TURN_ON_HINT, page_confidence
from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.preflight import (
    NO_READABLE_TEXT,
    NO_TEXT_NO_OCR,
    NO_TEXT_OCR_OFF,
    NO_TEXT_WITH_OCR,
    open_problem,
)
from hysem_assets.parsing.reconstruct import Reconstruction
from hysem_assets.parsing.result import ParsedDocument
from hysem_assets.parsing.standard import standard_converter


@lru_cache(maxsize=4)
def converter(options: ParseOptions) -> DocumentConverter:
    """One converter per distinct options in a process: Docling keeps its loaded models in it."""
    if options.pipeline == "native":
        return native_converter(
            parser_threads=options.num_threads, document_timeout_s=options.document_timeout_s, ocr=options.ocr_engine
        )
    return standard_converter(
        options.artifacts_path,
        device=options.device,
        num_threads=options.num_threads,
        table_structure=options.table_structure,
        formula_enrichment=options.formula_enrichment,
        ocr=options.ocr,
        layout_heuristics=options.layout_heuristics,
        document_timeout_s=options.document_timeout_s,
    )


def _has_text(doc: DoclingDocument) -> bool:
    return any(item.text.strip() for item in doc.texts) or any(
        cell.text.strip() for table in doc.tables if isinstance(table, TableItem) for cell in table.data.table_cells
    )


def _no_text_message(options: ParseOptions) -> str:
    if options.pipeline == "native":
        return NO_TEXT_WITH_OCR if options.ocr_engine != "off" else f"{NO_TEXT_OCR_OFF}: {TURN_ON_HINT}"
    return NO_TEXT_WITH_OCR if options.ocr else NO_TEXT_NO_OCR


def _report(result: ConversionResult) -> dict[str, object]:
    """Status, OCR confidence and line counts: OCR from the pages' cells, the rest from the reconstruction."""
    confidence = {
        str(page.page_no): round(score, 3)
        for page in result.pages
        if page.parsed_page is not None and (score := page_confidence(page.parsed_page.textline_cells)) is not None
    }
    reconstruction: Reconstruction | None = getattr(result, "_hysem_reconstruction", None)
    row = {
        **_ocr_fields(confidence),
        "furniture_json": json.dumps(_furniture(result, reconstruction), ensure_ascii=False),
    }
    if reconstruction is not None:
        row.update(
            dropped_lines=sum(reconstruction.dropped.values()),
            dropped_json=json.dumps(reconstruction.dropped),
            restored_lines=reconstruction.restored,
            docling_order_pages=reconstruction.docling_order_pages,
            docling_pages=reconstruction.docling_pages,
        )
    return row


def _ocr_fields(confidence: dict[str, float]) -> dict[str, object]:
    """Status and OCR columns from each OCR page's confidence (page number as text -> confidence)."""
    return {
        "status": "ocr" if confidence else "native",
        "ocr_pages": len(confidence),
        "ocr_confidence_json": json.dumps(confidence),
        "unreadable_pages": sum(score < MIN_CONFIDENCE for score in confidence.values()),
    }


def _furniture(result: ConversionResult, reconstruction: Reconstruction | None) -> list[dict[str, object]]:
    """The furniture left out of the Markdown: what hysem's rules removed, or what Docling's layout labelled so."""
    if reconstruction is not None:
        return reconstruction.furniture
    return [
        {"page": item.prov[0].page_no if item.prov else None, "rule": str(item.label), "text": item.text}
        for item in result.document.texts
        if item.content_layer == ContentLayer.FURNITURE and item.text.strip()
    ]


@dataclass
class _Part:
    """What one page range gave, kept as text so the range's Docling objects can be freed."""

    markdown: str
    tables: list
    equations: list
    report: dict[str, object]
    has_text: bool
    errors: list[str]


def page_ranges(pages: int, per_range: int) -> list[tuple[int, int]]:
    """1-based inclusive page ranges covering the document; one range (all pages) when it is short."""
    if pages <= per_range:
        return [DEFAULT_PAGE_RANGE]
    return [(first, min(first + per_range - 1, pages)) for first in range(1, pages + 1, per_range)]


def _convert(path: Path, options: ParseOptions, page_range: tuple[int, int]) -> _Part:
    result = converter(options).convert(path, raises_on_error=False, page_range=page_range)
    errors = list(dict.fromkeys(e.error_message for e in result.errors))
    if any(out_of_memory(e) for e in errors):
        raise LimitExceeded(RESOURCE_LIMIT, f"{OUT_OF_MEMORY}: {'; '.join(errors)}")
    if result.status == ConversionStatus.FAILURE:
        raise _Unparseable(f"Docling could not convert the document: {'; '.join(errors) or 'no details'}")
    doc = result.document
    return _Part(
        markdown=markdown(doc),
        tables=json.loads(tables_json(doc)),
        equations=json.loads(equations_json(doc)),
        report=_report(result),
        has_text=_has_text(doc),
        errors=errors,
    )


def _joined_report(parts: list[_Part]) -> dict[str, object]:
    if len(parts) == 1:
        return parts[0].report
    dropped: Counter[str] = Counter()
    confidence: dict[str, float] = {}
    for part in parts:
        dropped.update(json.loads(str(part.report.get("dropped_json", "{}"))))
        confidence.update(json.loads(str(part.report["ocr_confidence_json"])))
    furniture = [item for part in parts for item in json.loads(str(part.report["furniture_json"]))]
    row = {**_ocr_fields(confidence), "furniture_json": json.dumps(furniture, ensure_ascii=False)}
    if any("dropped_json" in p.report for p in parts):
        row.update(
            dropped_lines=sum(dropped.values()),
            dropped_json=json.dumps(dict(dropped)),
            **{
                key: sum(int(p.report.get(key, 0)) for p in parts)  # type: ignore[call-overload]
                for key in ("restored_lines", "docling_order_pages", "docling_pages")
            },
        )
    return row


def _unreadable(report: dict[str, object], pages: int) -> str | None:
    """Why a document whose every page was read by OCR, none of them well, has no text worth keeping."""
    confidence = json.loads(str(report["ocr_confidence_json"]))
    if not confidence or len(confidence) < pages or report["unreadable_pages"] < len(confidence):
        return None
    best = max(confidence.values())
    return (
        f"{NO_READABLE_TEXT}: every page was read by OCR with a confidence below {MIN_CONFIDENCE} "
        f"(best {best:.2f}): handwriting, drawings, or a script OCR's language data does not cover"
    )


def parse_pdf(path: str | Path, options: ParseOptions = ParseOptions()) -> ParsedDocument:
    """Markdown, tables, equations and a token count for one PDF, or the reason it has none.

    A document longer than ``options.pages_per_range`` is converted range by range and
    joined, so the memory it needs is that of one range.
    """
    path = Path(path)
    started = time.perf_counter()
    row = {"path": str(path), "tokenizer": TOKENIZER_NAME, "parser": options.parser, "device": options.device}
    pages = 0
    try:
        problem, pages = open_problem(
            path, max_pages=options.max_pages, max_page_content_mb=options.max_page_content_mb
        )
        if problem:
            raise _Unparseable(problem)
        parts = [_convert(path, options, pages_) for pages_ in page_ranges(pages, options.pages_per_range)]
        if not any(part.has_text for part in parts):
            details = "; ".join(dict.fromkeys(e for part in parts for e in part.errors))
            raise _Unparseable(_no_text_message(options) + (f" ({details})" if details else ""))
        report = _joined_report(parts)
        unreadable = _unreadable(report, pages)
        if unreadable:
            raise _Unparseable(unreadable, report)
        text = "\n\n".join(part.markdown for part in parts if part.markdown)
        return ParsedDocument(
            **row,
            **report,
            markdown=text,
            tables_json=json.dumps([t for part in parts for t in part.tables], ensure_ascii=False),
            equations_json=json.dumps([e for part in parts for e in part.equations], ensure_ascii=False),
            token_count=count_tokens(text),
            pages=pages,
            seconds=time.perf_counter() - started,
        )
    except LimitExceeded as error:
        return ParsedDocument(
            **row,
            pages=pages or error.pages,
            seconds=time.perf_counter() - started,
            status=error.status,
            error=str(error),
        )
    except MemoryError as error:
        return ParsedDocument(
            **row,
            pages=pages,
            seconds=time.perf_counter() - started,
            status=RESOURCE_LIMIT,
            error=f"{OUT_OF_MEMORY}: MemoryError {error}".rstrip(),
        )
    except Exception as error:  # Docling and its backends raise many kinds; the row must survive all
        if isinstance(error, _Unparseable):
            return ParsedDocument(
                **row, **error.report, pages=pages, seconds=time.perf_counter() - started, error=str(error)
            )
        message = f"{type(error).__name__}: {error}"
        return ParsedDocument(**row, pages=pages, seconds=time.perf_counter() - started, error=message)


class _Unparseable(Exception):
    """A document that cannot be parsed, with the reason its row should show and what its parse found."""

    def __init__(self, message: str, report: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.report = {key: value for key, value in (report or {}).items() if key != "status"}
