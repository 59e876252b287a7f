"""Docling's model-free pipeline, with the page text rebuilt into a structured document.

``NativePdfPipeline`` turns every text line of the PDF into a paragraph, in the order the
parser met them. ``ReconstructedNativePipeline`` keeps its parsing and replaces only the
assembly step (the pipeline's documented extension point) with hysem's reconstruction. A
page layout the reconstruction cannot handle must not cost the document: Docling's own
assembly then runs instead, and the conversion records why.
"""

from __future__ import annotations

import logging
from pathlib import Path

from docling.datamodel.base_models import DoclingComponentType, ErrorItem, InputFormat
from docling.datamodel.document import ConversionResult
from docling.datamodel.pipeline_options import NativePdfPipelineOptions
from docling.document_converter import DocumentConverter, NativePdfFormatOption
from docling.pipeline.native_pdf_pipeline import NativePdfPipeline
from docling.utils.profiling import ProfilingScope, TimeRecorder
from docling_core.types.doc import DocumentOrigin

from hysem_assets.parsing.reconstruct import reconstruct

_log = logging.getLogger(__name__)


class ReconstructedNativePipeline(NativePdfPipeline):
    """``NativePdfPipeline`` whose document is reconstructed from the parsed pages' text cells."""

    def _assemble_document(self, conv_res: ConversionResult) -> ConversionResult:
        origin = DocumentOrigin(mimetype="application/pdf", filename=conv_res.input.file.name,
                                binary_hash=conv_res.input.document_hash)
        try:
            with TimeRecorder(conv_res, "doc_assemble", scope=ProfilingScope.DOCUMENT):
                conv_res.document = reconstruct(conv_res.pages, Path(origin.filename).stem, origin)
        except Exception as error:  # any layout bug: keep the document with Docling's plain assembly
            message = f"hysem reconstruction failed ({type(error).__name__}: {error}); kept Docling's plain output"
            _log.warning("%s: %s", origin.filename, message)
            conv_res.errors.append(ErrorItem(component_type=DoclingComponentType.DOC_ASSEMBLER,
                                             module_name=type(self).__name__, error_message=message))
            return super()._assemble_document(conv_res)
        return conv_res


def native_converter(reconstructed: bool = True, parser_threads: int = 1,
                     document_timeout_s: float | None = None) -> DocumentConverter:
    """A converter for the native pipeline: hysem's reconstruction, or Docling's plain output."""
    options = NativePdfPipelineOptions(
        generate_page_images=False, generate_picture_images=False, parser_threads=parser_threads,
        document_timeout=document_timeout_s,
    )
    pipeline = ReconstructedNativePipeline if reconstructed else NativePdfPipeline
    return DocumentConverter(format_options={
        InputFormat.PDF: NativePdfFormatOption(pipeline_cls=pipeline, pipeline_options=options),
    })
