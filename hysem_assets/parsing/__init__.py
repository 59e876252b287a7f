"""PDF parsing: Markdown, tables and equations from every PDF, offline.

Two Docling pipelines, chosen by ``ParseOptions.pipeline``: ``native`` needs no model
weights (Docling's ``NativePdfPipeline`` plus hysem's reconstruction of the page text, and
OCR of pages without a usable text layer by Tesseract or RapidOCR), and
``standard`` runs Docling's layout, TableFormer and formula models from pre-downloaded
artifacts. ``parse_pdf`` handles one file, ``parse_many`` a batch across worker processes
pinned to devices; neither raises for a bad document, which gets its error instead.

Docling takes seconds to import, so only ``parse``, ``pool`` and the pipelines import it:
code that only lists commands or builds Dagster definitions does not pay for it.
"""
