"""Parse one PDF into a ``ParsedDocument``; failures become the document's error, never exceptions."""

from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path

from docling.datamodel.base_models import ConversionStatus
from docling.datamodel.document import ConversionResult
from docling.document_converter import DocumentConverter
from docling_core.types.doc import DoclingDocument, TableItem

from hysem_assets.minilm import TOKENIZER_NAME, count_tokens
from hysem_assets.parsing.export import equations_json, markdown, tables_json
from hysem_assets.parsing.native import native_converter
from hysem_assets.parsing.ocr import TURN_ON_HINT
from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.preflight import NO_TEXT_NO_OCR, NO_TEXT_OCR_OFF, NO_TEXT_WITH_OCR, open_problem
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
    """Status and line counts: OCR pages from the pages' cells, the rest from the reconstruction."""
    ocr_pages = sum(
        any(c.from_ocr for c in page.parsed_page.textline_cells)
        for page in result.pages
        if page.parsed_page is not None
    )
    reconstruction: Reconstruction | None = getattr(result, "_hysem_reconstruction", None)
    row: dict[str, object] = {"status": "ocr" if ocr_pages else "native", "ocr_pages": ocr_pages}
    if reconstruction is not None:
        row.update(
            dropped_lines=sum(reconstruction.dropped.values()),
            dropped_json=json.dumps(reconstruction.dropped),
            restored_lines=reconstruction.restored,
            docling_order_pages=reconstruction.docling_order_pages,
        )
    return row


def parse_pdf(path: str | Path, options: ParseOptions = ParseOptions()) -> ParsedDocument:
    """Markdown, tables, equations and a token count for one PDF, or the reason it has none."""
    path = Path(path)
    started = time.perf_counter()
    row = {"path": str(path), "tokenizer": TOKENIZER_NAME, "parser": options.parser, "device": options.device}
    pages = 0
    try:
        problem, pages = open_problem(path)
        if problem:
            raise _Unparseable(problem)
        result = converter(options).convert(path, raises_on_error=False)
        if result.status == ConversionStatus.FAILURE:
            details = "; ".join(dict.fromkeys(e.error_message for e in result.errors)) or "no details"
            raise _Unparseable(f"Docling could not convert the document: {details}")
        doc = result.document
        if not _has_text(doc):
            details = "; ".join(dict.fromkeys(e.error_message for e in result.errors))
            raise _Unparseable(_no_text_message(options) + (f" ({details})" if details else ""))
        text = markdown(doc)
        return ParsedDocument(
            **row,
            **_report(result),
            markdown=text,
            tables_json=tables_json(doc),
            equations_json=equations_json(doc),
            token_count=count_tokens(text),
            pages=pages,
            seconds=time.perf_counter() - started,
        )
    except Exception as error:  # Docling and its backends raise many kinds; the row must survive all
        message = str(error) if isinstance(error, _Unparseable) else f"{type(error).__name__}: {error}"
        return ParsedDocument(**row, pages=pages, seconds=time.perf_counter() - started, error=message)


class _Unparseable(Exception):
    """A document that cannot be parsed, with the reason its row should show."""
