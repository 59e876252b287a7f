"""Cheap checks before parsing, so the common ways a PDF cannot be read get a plain message.

Docling reports an encrypted or empty file as a generic conversion failure; pypdf tells
the cases apart in milliseconds, and sizes a document before a parser has to hold it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pypdf import PasswordType, PdfReader

from hysem_assets.core.pdfcheck import structural_problem
from hysem_assets.parsing.limits import LimitExceeded, check_size

ENCRYPTED = "encrypted PDF: it needs a password to open, and none is configured"
NO_PAGES = "the PDF has no pages"
NO_TEXT_OCR_OFF = "no text layer (scanned?) and OCR is off"
NO_TEXT_NO_OCR = "no text layer (scanned?); OCR is off: enable ocr in the standard pipeline to read scans"
NO_TEXT_WITH_OCR = "no text found, even with OCR"
#: OCR read something, but nothing on any page with the confidence printed text has.
NO_READABLE_TEXT = "no readable text"


def open_problem(
    path: Path, *, max_pages: int | None = None, max_page_content_mb: float | None = None
) -> tuple[str | None, int]:
    """Why the file cannot be parsed at all (or None), and its page count when known.

    With limits given, a document over one raises ``LimitExceeded`` (status ``too_large``),
    decided from the file alone before any parser holds it in memory.
    """
    if not path.is_file():
        return f"file not found: {path}", 0
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            return ENCRYPTED, 0
        pages = len(reader.pages)
    except Exception as error:  # pypdf meets damaged files with errors of many kinds
        return f"corrupt or not a PDF: {structural_problem(path) or f'{type(error).__name__}: {error}'}", 0
    if pages:
        try:
            check_size(reader, max_pages, max_page_content_mb)
        except LimitExceeded:
            raise
        except Exception:  # a damaged page tree: Docling reports it, the size check has nothing to add
            pass
    return (None if pages else NO_PAGES), pages
