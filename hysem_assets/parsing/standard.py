"""Docling's standard pipeline (layout, TableFormer, formulas), offline, with hysem's corrections.

The models come from ``artifacts_path`` only: the folder ``docling-tools models download
-o DIR`` fills. A missing model is an error that names the folder, never a download.

``HysemStandardPipeline`` adds the layout corrections by wrapping two of the pipeline's
stage models after Docling builds them: the page preprocessing stage drops left-margin line
numbers from each page's text cells before layout sees them, and the layout
post-processing stage joins multi-line formulas and reads page-sized sparse tables as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Type

from docling.datamodel.accelerator_options import AcceleratorOptions
from docling.datamodel.base_models import InputFormat, LayoutPrediction, Page
from docling.datamodel.document import ConversionResult
from docling.datamodel.pipeline_options import LayoutPostprocessorOptions, ThreadedPdfPipelineOptions
from docling.document_converter import DocumentConverter, PdfFormatOption
from docling.models.base_layout_postprocessing_model import BaseLayoutPostprocessingModel
from docling.models.base_model import BasePageModel
from docling.pipeline.standard_pdf_pipeline import StandardPdfPipeline

from hysem_assets.parsing.clusters import merge_formula_clusters, relabel_sparse_tables
from hysem_assets.parsing.line_numbers import strip_line_numbers
from hysem_assets.parsing.offline import DOWNLOAD_HINT, go_offline


class LineNumberFilter(BasePageModel):
    """Runs the page preprocessing stage, then removes line numbers from each page's cells."""

    def __init__(self, inner: BasePageModel):
        self.inner = inner

    def __call__(self, conv_res: ConversionResult, page_batch: Iterable[Page]) -> Iterable[Page]:
        for page in self.inner(conv_res, page_batch):
            if page.parsed_page is not None and page.size is not None:
                strip_line_numbers(page.parsed_page, page.size)
            yield page


class ClusterCorrections(BaseLayoutPostprocessingModel):
    """Runs Docling's layout post-processing, then hysem's formula and sparse-table corrections."""

    def __init__(self, inner: BaseLayoutPostprocessingModel):
        self.inner = inner

    @classmethod
    def get_options_type(cls) -> Type[LayoutPostprocessorOptions]:
        return LayoutPostprocessorOptions

    def postprocess_layout(self, conv_res: ConversionResult, pages: Sequence[Page]) -> Sequence[LayoutPrediction]:
        predictions = self.inner.postprocess_layout(conv_res, pages)
        return [
            LayoutPrediction(
                clusters=relabel_sparse_tables(merge_formula_clusters(prediction.clusters, page.size), page.size)
            )
            if page.size is not None
            else prediction
            for page, prediction in zip(pages, predictions)
        ]


class HysemStandardPipeline(StandardPdfPipeline):
    """``StandardPdfPipeline`` with line numbers filtered and layout clusters corrected."""

    def __init__(self, pipeline_options: ThreadedPdfPipelineOptions) -> None:
        super().__init__(pipeline_options)
        self.preprocessing_model = LineNumberFilter(self.preprocessing_model)
        self.layout_postprocessing_model = ClusterCorrections(self.layout_postprocessing_model)


def standard_converter(
    artifacts_path: Path | None,
    device: str = "cpu",
    num_threads: int = 1,
    table_structure: bool = True,
    formula_enrichment: bool = True,
    ocr: bool = False,
    layout_heuristics: bool = True,
    document_timeout_s: float | None = None,
) -> DocumentConverter:
    """A converter for the standard pipeline that reads every model from ``artifacts_path``."""
    if artifacts_path is None:
        raise ValueError(f"the standard pipeline needs artifacts_path: {DOWNLOAD_HINT}")
    if not Path(artifacts_path).is_dir():
        raise ValueError(f"artifacts_path {artifacts_path} is not a folder: {DOWNLOAD_HINT}")
    go_offline()
    options = ThreadedPdfPipelineOptions(
        artifacts_path=artifacts_path,
        accelerator_options=AcceleratorOptions(device=device, num_threads=num_threads),
        enable_remote_services=False,
        do_ocr=ocr,
        do_table_structure=table_structure,
        do_formula_enrichment=formula_enrichment,
        do_code_enrichment=False,
        do_picture_classification=False,
        do_picture_description=False,
        generate_page_images=False,
        generate_picture_images=False,
        document_timeout=document_timeout_s,
    )
    pipeline = HysemStandardPipeline if layout_heuristics else StandardPdfPipeline
    return DocumentConverter(
        format_options={
            InputFormat.PDF: PdfFormatOption(pipeline_cls=pipeline, pipeline_options=options),
        }
    )
