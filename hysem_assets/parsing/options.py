"""What a parse may use: one frozen object, so a profile maps onto it key by key."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import get_args

from hysem_assets.settings.profile import OcrEngine, Pipeline

PIPELINES: tuple[Pipeline, ...] = get_args(Pipeline)
OCR_ENGINES: tuple[OcrEngine, ...] = get_args(OcrEngine)


@dataclass(frozen=True)
class ParseOptions:
    """Parsing settings; every field has the embedded default's value.

    ``native`` needs no model weights and no network; pages without a usable text layer go to
    the OCR engine ``ocr_engine`` (Tesseract by default, RapidOCR, or off). ``standard`` runs Docling's layout,
    TableFormer and formula models from ``artifacts_path`` (a folder made by
    ``docling-tools models download -o DIR``) and never downloads anything.
    """

    pipeline: Pipeline = "native"
    #: Folder of pre-downloaded Docling models; required by the standard pipeline.
    artifacts_path: Path | None = None
    #: Where models run: "cpu", "cuda", "cuda:N" or "mps". ``parse_many`` sets it per worker.
    device: str = "cpu"
    #: CPU threads one document may use (PDF parser threads, torch threads).
    num_threads: int = 1
    #: Standard pipeline: recover table structure with TableFormer.
    table_structure: bool = True
    #: Standard pipeline: turn formulas into LaTeX with the code-formula model.
    formula_enrichment: bool = True
    #: Native pipeline: OCR engine for pages without a usable text layer ("tesseract", "rapidocr", "off").
    ocr_engine: OcrEngine = "tesseract"
    #: Standard pipeline: OCR pages without a text layer (needs the OCR models in artifacts_path).
    ocr: bool = False
    #: Standard pipeline: apply hysem's line-number, formula and sparse-table corrections.
    layout_heuristics: bool = True
    #: Stop a document after this many seconds and keep the pages done so far.
    document_timeout_s: float | None = 600.0
    #: A document with more pages is not parsed (status ``too_large``); None: no limit.
    max_pages: int | None = 1000
    #: A document with a page whose content inflates past this many MB is not parsed (``too_large``).
    max_page_content_mb: float | None = 16.0
    #: Documents with more pages are converted this many pages at a time, so memory is that of one range.
    pages_per_range: int = 100

    def __post_init__(self) -> None:
        if self.pipeline not in PIPELINES:
            raise ValueError(f"unknown parsing pipeline {self.pipeline!r}: choose one of {', '.join(PIPELINES)}")
        if self.ocr_engine not in get_args(OcrEngine):
            raise ValueError(f"unknown OCR engine {self.ocr_engine!r}: choose one of {', '.join(get_args(OcrEngine))}")
        if self.num_threads < 1:
            raise ValueError("num_threads must be at least 1")
        if self.pages_per_range < 1:
            raise ValueError("pages_per_range must be at least 1")
        if self.artifacts_path is not None and not isinstance(self.artifacts_path, Path):
            object.__setattr__(self, "artifacts_path", Path(self.artifacts_path))

    @property
    def parser(self) -> str:
        """What produced a row: the pipeline, hysem's part in it and Docling's version."""
        base = f"docling {version('docling')} {self.pipeline} pipeline"
        if self.pipeline == "native":
            ocr = "" if self.ocr_engine == "off" else f" + {self.ocr_engine} OCR"
            return f"{base} + hysem reconstruction{ocr}"
        return f"{base} + hysem layout corrections" if self.layout_heuristics else base
