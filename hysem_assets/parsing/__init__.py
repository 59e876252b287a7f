"""PDF parsing: Markdown, tables and equations from every PDF, offline.

Two Docling pipelines, chosen by ``ParseOptions.pipeline``: ``native`` needs no model
weights (Docling's ``NativePdfPipeline`` plus hysem's reconstruction of the page text), and
``standard`` runs Docling's layout, TableFormer and formula models from pre-downloaded
artifacts. ``parse_pdf`` handles one file, ``parse_many`` a batch across worker processes
pinned to devices; neither raises for a bad document, which gets its error instead.
"""

from hysem_assets.parsing.options import PIPELINES, ParseOptions, Pipeline
from hysem_assets.parsing.parse import parse_pdf, parser_name
from hysem_assets.parsing.pool import parse_many, pin_device
from hysem_assets.parsing.result import ParsedDocument
from hysem_assets.parsing.tokens import TOKENIZER_NAME, count_tokens

__all__ = [
    "PIPELINES",
    "TOKENIZER_NAME",
    "ParseOptions",
    "ParsedDocument",
    "Pipeline",
    "count_tokens",
    "parse_many",
    "parse_pdf",
    "parser_name",
    "pin_device",
]
