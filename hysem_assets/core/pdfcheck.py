"""Is it a PDF, and a whole one? Checks cheap enough to run on every download.

Servers label landing pages as PDFs and PDFs as octet streams, and connections drop
mid-file, so neither the content type nor a 200 says much. The checks go from cheap to
thorough: content type, the ``%PDF-`` magic in the first bytes, the ``%%EOF`` marker that
ends every complete file, and finally pypdf reading the page tree.
"""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfReader

PDF_MAGIC = b"%PDF-"
#: Readers look for ``%%EOF`` within the last 1,024 bytes (ISO 32000-1, 7.5.5).
EOF_WINDOW = 1024
#: Content types a PDF may arrive with; anything else (text/html above all) is a page, not a file.
PDF_CONTENT_TYPES = frozenset(
    {
        "application/pdf",
        "application/x-pdf",
        "application/acrobat",
        "application/octet-stream",
        "binary/octet-stream",
        "application/binary",
        "application/download",
        "application/x-download",
        "application/force-download",
    }
)


def pdf_content_type(content_type: str) -> bool:
    """Whether a response's media type (without parameters) may carry a PDF."""
    return content_type.split(";", 1)[0].strip().lower() in PDF_CONTENT_TYPES


def starts_like_pdf(head: bytes) -> bool:
    return head.startswith(PDF_MAGIC)


def structural_problem(path: Path) -> str | None:
    """Why the file at ``path`` is not a complete, readable PDF, or None when it is."""
    with path.open("rb") as handle:
        if not starts_like_pdf(handle.read(len(PDF_MAGIC))):
            return "does not start with %PDF-"
        size = handle.seek(0, 2)
        handle.seek(max(0, size - EOF_WINDOW))
        if b"%%EOF" not in handle.read():
            return "no %%EOF marker at the end: the file is truncated"
    try:
        pages = len(PdfReader(path).pages)
    except Exception as error:  # pypdf meets damaged files with errors of many kinds
        return f"pypdf cannot read it ({type(error).__name__}: {error})"
    return None if pages else "the PDF has no pages"
