"""Docling's model-free pipeline, with the page text rebuilt into a structured document.

``NativePdfPipeline`` turns every text line of the PDF into a paragraph, in the order the
parser met them. ``ReconstructedNativePipeline`` keeps its parsing and replaces only the
assembly step (the pipeline's documented extension point) with hysem's reconstruction. A
page layout the reconstruction cannot handle must not cost the document: Docling's own
assembly then runs instead, and the conversion records why. What the reconstruction did
(lines dropped by rule, lines restored) rides on the conversion result as
``_hysem_reconstruction``, for ``parse_pdf`` to put in the row.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pypdfium2 as pdfium
from docling.backend.pypdfium2_backend import PyPdfiumPageBackend
from docling.datamodel.base_models import DoclingComponentType, ErrorItem, InputFormat, Page
from docling.datamodel.document import ConversionResult
from docling.datamodel.pipeline_options import NativePdfPipelineOptions
from docling.document_converter import DocumentConverter, NativePdfFormatOption
from docling.models.base_ocr_model import BaseOcrModel
from docling.pipeline.native_pdf_pipeline import NativePdfPipeline
from docling.utils.locks import pypdfium2_lock
from docling.utils.profiling import ProfilingScope, TimeRecorder
from docling_core.types.doc import DocumentOrigin

from hysem_assets.parsing.ocr import OcrEngine, needs_ocr, ocr_model, turn_upright
from hysem_assets.parsing.reconstruct import reconstruct

_log = logging.getLogger(__name__)


class HysemNativeOptions(NativePdfPipelineOptions):
    """Docling's native options plus the OCR engine for pages without a usable text layer."""

    ocr_engine: OcrEngine = "off"


class ReconstructedNativePipeline(NativePdfPipeline):
    """``NativePdfPipeline`` whose document is reconstructed from the parsed pages' text cells.

    Pages without a usable text layer are read by the OCR engine of ``pipeline_options.ocr_engine``.
    The threaded parser renders no page images (rendering every page would double the cost of
    text pages), so a page that needs OCR is rendered on its own with pdfium.
    """

    def __init__(self, pipeline_options: HysemNativeOptions) -> None:
        super().__init__(pipeline_options)
        self.pipeline_options: HysemNativeOptions = pipeline_options
        self._ocr: BaseOcrModel | None = None

    @property
    def ocr(self) -> BaseOcrModel:
        """The OCR model, loaded on the first page that needs it: text-only runs never pay for it."""
        if self._ocr is None:
            self._ocr = ocr_model(self.pipeline_options.ocr_engine, self.pipeline_options.parser_threads)
        return self._ocr

    def _parse_page(self, timings, conv_res: ConversionResult, page_backend) -> Page | None:
        page = super()._parse_page(timings, conv_res, page_backend)
        if page is None or self.pipeline_options.ocr_engine == "off" or not needs_ocr(page.parsed_page, page.size):
            return page
        native = page.parsed_page.model_copy() if page.parsed_page is not None else None
        pdf = backend = None
        try:
            with pypdfium2_lock:
                pdf = pdfium.PdfDocument(conv_res.input._backend.path_or_stream)
                page._backend = backend = PyPdfiumPageBackend(pdf, conv_res.input.document_hash, page.page_no - 1)
            page = next(iter(self.ocr(conv_res, [page])))
            if page.parsed_page is not None and any(c.text.strip() for c in page.parsed_page.textline_cells):
                turn_upright(page)
            else:  # OCR read nothing (a blank page): whatever the text layer had stays
                page.parsed_page = native
        except Exception as error:  # a missing engine or an unreadable image costs the page's text, not the document
            self._record_page_failure(conv_res, page_backend, f"OCR failed: {error}")
        finally:
            if backend is not None:
                backend.unload()  # takes the pdfium lock itself
            if pdf is not None:
                with pypdfium2_lock:
                    pdf.close()
            page._backend = None
        return page

    def _assemble_document(self, conv_res: ConversionResult) -> ConversionResult:
        origin = DocumentOrigin(
            mimetype="application/pdf", filename=conv_res.input.file.name, binary_hash=conv_res.input.document_hash
        )
        try:
            with TimeRecorder(conv_res, "doc_assemble", scope=ProfilingScope.DOCUMENT):
                conv_res.document, report = reconstruct(conv_res.pages, Path(origin.filename).stem, origin)
                conv_res._hysem_reconstruction = report
        except Exception as error:  # any layout bug: keep the document with Docling's plain assembly
            message = f"hysem reconstruction failed ({type(error).__name__}: {error}); kept Docling's plain output"
            _log.warning("%s: %s", origin.filename, message)
            conv_res.errors.append(
                ErrorItem(
                    component_type=DoclingComponentType.DOC_ASSEMBLER,
                    module_name=type(self).__name__,
                    error_message=message,
                )
            )
            return super()._assemble_document(conv_res)
        return conv_res


def native_converter(
    reconstructed: bool = True, parser_threads: int = 1, document_timeout_s: float | None = None, ocr: OcrEngine = "off"
) -> DocumentConverter:
    """A converter for the native pipeline: hysem's reconstruction (with OCR), or Docling's plain output."""
    options = HysemNativeOptions(
        generate_page_images=False,
        generate_picture_images=False,
        parser_threads=parser_threads,
        document_timeout=document_timeout_s,
        ocr_engine=ocr if reconstructed else "off",
    )
    pipeline = ReconstructedNativePipeline if reconstructed else NativePdfPipeline
    return DocumentConverter(
        format_options={
            InputFormat.PDF: NativePdfFormatOption(pipeline_cls=pipeline, pipeline_options=options),
        }
    )
