"""PDF parsing: Markdown, tables and equations from every PDF, offline.

Two Docling pipelines, chosen by ``ParseOptions.pipeline``: ``native`` needs no model
weights (Docling's ``NativePdfPipeline`` plus hysem's reconstruction of the page text, and
OCR of pages without a usable text layer by Tesseract or RapidOCR), and
``standard`` runs Docling's layout, TableFormer and formula models from pre-downloaded
artifacts. ``parse_pdf`` handles one file, ``parse_many`` a batch across worker processes
pinned to devices; neither raises for a bad document, which gets its error instead.

The names below are imported on first use: Docling takes seconds to import, and code that
only lists commands or builds Dagster definitions should not pay for it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "PIPELINES": "options",
    "ParseOptions": "options",
    "Pipeline": "options",
    "ParsedDocument": "result",
    "parse_pdf": "parse",
    "parse_many": "pool",
    "pin_device": "pool",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    return __all__
