"""Synthetic cells, clusters and segments, the awkward PDFs the parser must survive, and scans of real ones."""

from __future__ import annotations

import io
import os
import random
import textwrap
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from docling.datamodel.base_models import Cluster
from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel, Size
from docling_core.types.doc.page import BoundingRectangle, TextCell
from PIL import Image, ImageDraw
from pypdf import PdfWriter

from hysem_assets.parsing.geometry import Box
from hysem_assets.parsing.lines import Segment
from hysem_assets.parsing.ocr import engine_problem
from hysem_assets.parsing.words import Word

PAGE = Size(width=600.0, height=800.0)


def cell(text: str, l: float, t: float, r: float, b: float) -> TextCell:  # noqa: E741
    """A text cell with a top-left based box, as Docling's parser emits them."""
    bbox = BoundingBox(l=l, t=t, r=r, b=b, coord_origin=CoordOrigin.TOPLEFT)
    return TextCell(rect=BoundingRectangle.from_bounding_box(bbox), text=text, orig=text, from_ocr=False)


def sideways_cell(text: str, l: float, t: float, r: float, b: float) -> TextCell:  # noqa: E741
    """A text cell set a quarter turn up the page (its baseline runs from bottom to top)."""
    rect = BoundingRectangle(
        r_x0=r, r_y0=b, r_x1=r, r_y1=t, r_x2=l, r_y2=t, r_x3=l, r_y3=b, coord_origin=CoordOrigin.TOPLEFT
    )
    return TextCell(rect=rect, text=text, orig=text, from_ocr=False)


def cluster(
    label: DocItemLabel,
    l: float,
    t: float,
    r: float,
    b: float,  # noqa: E741
    *texts: str,
    cluster_id: int = 0,
) -> Cluster:
    """A cluster whose texts are stacked lines filling its box."""
    step = (b - t) / max(len(texts), 1)
    cells = [cell(text, l, t + k * step, r, t + (k + 1) * step) for k, text in enumerate(texts)]
    return Cluster(
        id=cluster_id, label=label, bbox=BoundingBox(l=l, t=t, r=r, b=b, coord_origin=CoordOrigin.TOPLEFT), cells=cells
    )


def words(
    text: str,
    l: float,
    t: float,
    height: float = 10.0,
    space: float = 3.0,
    char: float = 5.0,  # noqa: E741
    font: str = "Body",
) -> list[Word]:
    """Words of one line set from ``l`` with a fixed advance per character and between words."""
    placed, x = [], l
    for token in text.split():
        placed.append(Word(token, Box(x, t, x + char * len(token), t + height), font=font))
        x += char * len(token) + space
    return placed


def segment(text: str, l: float, t: float, height: float = 10.0, font: str = "Body") -> Segment:  # noqa: E741
    return Segment.of(words(text, l, t, height=height, font=font))


def require(engine: str) -> None:
    """OCR engines are installed by the project's files: a missing one fails in CI and skips elsewhere."""
    problem = engine_problem(engine)
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"{problem} (.ci/run installs it)")
        pytest.skip(problem)


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


def scanned_pdf(source: Path, target: Path, dpi: int = 200, pages: int = 1) -> Path:
    """The first ``pages`` pages of ``source`` as an image-only PDF: what a scanner makes of them."""
    pdf = pdfium.PdfDocument(source)
    images = [pdf[k].render(scale=dpi / 72).to_pil().convert("L") for k in range(min(pages, len(pdf)))]
    pdf.close()
    images[0].save(target, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    return target


def corrupt_pdf(path: Path) -> Path:
    path.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nthis is not a PDF body\n")
    return path


#: Words of the generated two-column pages: common nouns, so no sentence says anything by accident.
NOUNS = (
    "river stone garden window letter market winter summer harbour valley bridge village morning evening "
    "lantern orchard meadow forest castle island mountain shadow candle mirror painter sailor farmer teacher"
).split()
STAMP = "Downloaded from example.org on July 12, 2017 - Published by Example Press"


def column_lines(seed: int, paragraphs: int = 4, width: int = 48) -> list[str]:
    """Lines of ``paragraphs`` paragraphs of made-up sentences, wrapped at ``width`` characters ("" between)."""
    rng = random.Random(seed)
    lines: list[str] = []
    for _ in range(paragraphs):
        sentences = [
            " ".join(rng.choice(NOUNS) for _ in range(rng.randint(6, 12))).capitalize() + "." for _ in range(4)
        ]
        lines += textwrap.wrap(" ".join(sentences), width) + [""]
    return lines


def two_column_pdf(path: Path, pages: int = 2, stamp: tuple[float, float, float] | None = None) -> Path:
    """A born-digital paper of two text columns per page; ``stamp`` (x, y, font size) sets ``STAMP``
    sideways at that place on every page, as publishers' download stamps are."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    page = canvas.Canvas(str(path), pagesize=letter)
    _, height = letter
    for number in range(pages):
        if stamp is not None:
            x, y, size = stamp
            page.saveState()
            page.setFont("Helvetica", size)
            page.translate(x, y)
            page.rotate(90)
            page.drawString(0, 0, STAMP)
            page.restoreState()
        page.setFont("Times-Roman", 10)
        for column, left in enumerate((60, 310)):
            y = height - 80
            for line in column_lines(seed=10 * number + column):
                if line:
                    page.drawString(left, y, line)
                y -= 12  # a blank line between paragraphs
        page.showPage()
    page.save()
    return path


def scribbled_page(seed: int = 5, size: tuple[int, int] = (1700, 2200)) -> Image.Image:
    """A page of pen strokes at 200 dpi: what OCR meets on handwriting it cannot read."""
    rng = random.Random(seed)
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    for row in range(18):
        y = 200 + row * 100
        x = 150
        while x < size[0] - 200:
            width = rng.randint(60, 200)
            draw.line(
                [(x + k * 6, y + rng.randint(-18, 18) * (1 if k % 2 else -1)) for k in range(width // 6)],
                fill=0,
                width=3,
            )
            x += width + rng.randint(25, 45)
    return image


def scribbled_pdf(path: Path, printed: Path | None = None) -> Path:
    """An image-only PDF of a scribbled page, after the first page of ``printed`` rendered as a scan if given."""
    images = [scribbled_page()]
    if printed is not None:
        pdf = pdfium.PdfDocument(printed)
        images.insert(0, pdf[0].render(scale=200 / 72).to_pil().convert("L"))
        pdf.close()
    images[0].save(path, "PDF", resolution=200, save_all=True, append_images=images[1:])
    return path
