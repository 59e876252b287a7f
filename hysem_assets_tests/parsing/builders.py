"""Synthetic cells, clusters and segments, and the awkward PDFs the parser must survive."""

from __future__ import annotations

import io
from pathlib import Path

from docling.datamodel.base_models import Cluster
from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel, Size
from docling_core.types.doc.page import BoundingRectangle, TextCell
from PIL import Image
from pypdf import PdfWriter

from hysem_assets.parsing.geometry import Box
from hysem_assets.parsing.lines import Segment
from hysem_assets.parsing.words import Word

PAGE = Size(width=600.0, height=800.0)


def cell(text: str, l: float, t: float, r: float, b: float) -> TextCell:  # noqa: E741
    """A text cell with a top-left based box, as Docling's parser emits them."""
    bbox = BoundingBox(l=l, t=t, r=r, b=b, coord_origin=CoordOrigin.TOPLEFT)
    return TextCell(rect=BoundingRectangle.from_bounding_box(bbox), text=text, orig=text, from_ocr=False)


def cluster(label: DocItemLabel, l: float, t: float, r: float, b: float,  # noqa: E741
            *texts: str, cluster_id: int = 0) -> Cluster:
    """A cluster whose texts are stacked lines filling its box."""
    step = (b - t) / max(len(texts), 1)
    cells = [cell(text, l, t + k * step, r, t + (k + 1) * step) for k, text in enumerate(texts)]
    return Cluster(id=cluster_id, label=label, bbox=BoundingBox(l=l, t=t, r=r, b=b, coord_origin=CoordOrigin.TOPLEFT),
                   cells=cells)


def words(text: str, l: float, t: float, height: float = 10.0, space: float = 3.0, char: float = 5.0,  # noqa: E741
          font: str = "Body") -> list[Word]:
    """Words of one line set from ``l`` with a fixed advance per character and between words."""
    placed, x = [], l
    for token in text.split():
        placed.append(Word(token, Box(x, t, x + char * len(token), t + height), font=font))
        x += char * len(token) + space
    return placed


def segment(text: str, l: float, t: float, height: float = 10.0, font: str = "Body") -> Segment:  # noqa: E741
    return Segment.of(words(text, l, t, height=height, font=font))


def encrypted_pdf(path: Path) -> Path:
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt("secret")
    writer.write(path)
    return path


def zero_page_pdf(path: Path) -> Path:
    buffer = io.BytesIO()
    PdfWriter().write(buffer)
    path.write_bytes(buffer.getvalue())
    return path


def image_only_pdf(path: Path) -> Path:
    """A "scan": one page that is a picture of text, with no text layer."""
    image = Image.new("RGB", (400, 300), "white")
    image.paste((0, 0, 0), (40, 40, 360, 60))
    image.save(path, "PDF", resolution=72)
    return path


def corrupt_pdf(path: Path) -> Path:
    path.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nthis is not a PDF body\n")
    return path
