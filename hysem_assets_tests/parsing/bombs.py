"""PDFs that are small on disk and enormous once read: the inputs bounded parsing must survive."""

from __future__ import annotations

import zlib
from pathlib import Path

#: One line of text-showing operators; repeated, it deflates about a thousandfold.
_TEXT_LINE = b"BT /F1 9 Tf 72 700 Td (pollution cardiovascular outcome) Tj ET\n"


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF file with these numbered objects (1-based), a cross-reference table and a trailer."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _stream(data: bytes) -> bytes:
    packed = zlib.compress(data, 9)
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream"


def decompression_bomb(path: Path, inflated_mb: float, *, in_form: bool = False) -> Path:
    """A one-page PDF whose content inflates to ``inflated_mb`` MB of text operators: in the page's
    content stream, or (``in_form``) in a form XObject that a one-line content stream draws."""
    content = _TEXT_LINE * int(inflated_mb * 2**20 / len(_TEXT_LINE))
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    if in_form:
        page_content, extra = (
            _stream(b"q /Fm1 Do Q\n"),
            [
                font,
                _stream(content).replace(
                    b"<< /Length",
                    b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] "
                    b"/Resources << /Font << /F1 5 0 R >> >> /Length",
                    1,
                ),
            ],
        )
        resources = b"/Resources << /Font << /F1 5 0 R >> /XObject << /Fm1 6 0 R >> >>"
    else:
        page_content, extra, resources = _stream(content), [font], b"/Resources << /Font << /F1 5 0 R >> >>"
    path.write_bytes(
        _pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R " + resources + b" >>",
                page_content,
                *extra,
            ]
        )
    )
    return path


def many_pages(path: Path, pages: int) -> Path:
    """A PDF of ``pages`` small pages, each one line of text (a long document, cheaply)."""
    kids = b" ".join(b"%d 0 R" % (4 + 2 * k) for k in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for k in range(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % (5 + 2 * k)
        )
        objects.append(_stream(b"BT /F1 11 Tf 72 400 Td (Page %d of a long report on ozone.) Tj ET\n" % (k + 1)))
    path.write_bytes(_pdf(objects))
    return path
