"""OCR for pages the native pipeline cannot read: no text layer, or a text layer of garbage.

Two engines, both through Docling's own OCR models and both without a model download at
run time: RapidOCR runs the PP-OCR ONNX models that ship inside the ``rapidocr`` wheel
(on ``onnxruntime``), Tesseract runs the Debian ``tesseract-ocr`` binary through Docling's
command-line wrapper. Only pages that need it are rendered and read; a page with a usable
text layer costs one pass over its cells.
"""

from __future__ import annotations

import math
import os
import shutil
import unicodedata
from collections import Counter
from importlib.util import find_spec
from pathlib import Path

from docling.datamodel.accelerator_options import AcceleratorOptions
from docling.datamodel.base_models import Page
from docling.datamodel.pipeline_options import OcrMode, RapidOcrOptions, TesseractCliOcrOptions
from docling.models.base_ocr_model import BaseOcrModel
from docling_core.types.doc import CoordOrigin, Size
from docling_core.types.doc.page import BoundingRectangle, SegmentedPdfPage, TextCell

from hysem_assets.settings.profile import OcrEngine

#: A text layer with this share of replacement, private-use or control characters is unreadable.
GARBAGE_SHARE = 0.3
#: Fewer visible characters than this on a page is no text layer (a stray page number is not one).
MIN_TEXT_CHARS = 10
#: A page whose largest image covers this share of it, with fewer characters than STAMP_CHARS, is a scan
#: (a scanner's image fills the page; a full-page figure of a born-digital paper leaves margins).
SCAN_SHARE = 0.9
STAMP_CHARS = 200
#: Page images are rendered at this many times 72 dpi for recognition.
OCR_SCALE = 3.0
#: Below this confidence (the engine's, averaged over the page's characters) an OCR reading is
#: not text: handwriting, a drawing, a photograph. Printed text reads at 0.85 or more.
MIN_CONFIDENCE = 0.5

TESSERACT_HINT = "install Tesseract (Debian: apt-get install tesseract-ocr tesseract-ocr-eng)"
ONNX_HINT = "install the project's Python dependencies (rapidocr and onnxruntime, pinned in pyproject.toml)"
TURN_ON_HINT = (
    "turn OCR on with assets.parsed_docs.ocr_engine: tesseract (or rapidocr) in the profile, "
    "or `hysem parse --ocr-engine tesseract`"
)


def _garbage(char: str) -> bool:
    category = unicodedata.category(char)
    return char == "\ufffd" or category in ("Co", "Cs") or (category == "Cc" and char not in "\t\n\r")


def _image_share(page: SegmentedPdfPage, size: Size) -> float:
    """Share of the page that its largest bitmap covers."""
    area = size.width * size.height
    boxes = [bitmap.rect.to_bounding_box() for bitmap in page.bitmap_resources]
    return (
        max((min(box.width, size.width) * min(box.height, size.height) / area for box in boxes), default=0.0)
        if area
        else 0.0
    )


def needs_ocr(page: SegmentedPdfPage | None, size: Size) -> bool:
    """True for a page without a usable text layer.

    That is (almost) no characters, mostly unreadable ones, or a scan that carries only a few
    words of text (a download stamp over a scanned article page).
    """
    if page is None:
        return True
    text = "".join(cell.text for cell in page.textline_cells or page.word_cells)
    visible = [c for c in text if not c.isspace()]
    if len(visible) < MIN_TEXT_CHARS or sum(map(_garbage, visible)) >= GARBAGE_SHARE * len(visible):
        return True
    return len(visible) < STAMP_CHARS and _image_share(page, size) >= SCAN_SHARE


def page_confidence(cells: list[TextCell]) -> float | None:
    """The page's OCR confidence: its OCR cells' confidences weighted by their characters (None: no OCR text)."""
    weighted = [(len(cell.text.strip()), cell.confidence) for cell in cells if cell.from_ocr and cell.text.strip()]
    chars = sum(n for n, _ in weighted)
    return sum(n * confidence for n, confidence in weighted) / chars if chars else None


def rapidocr_models() -> dict[str, str]:
    """The detection, direction and recognition models inside the installed ``rapidocr`` wheel."""
    spec = find_spec("rapidocr")
    if spec is None or spec.origin is None:
        raise RuntimeError(f"RapidOCR is not installed: {ONNX_HINT}")
    models = Path(spec.origin).parent / "models"
    paths = {
        "det_model_path": models / "PP-OCRv6_det_small.onnx",
        "cls_model_path": models / "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
        "rec_model_path": models / "PP-OCRv6_rec_small.onnx",
    }
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise RuntimeError(f"RapidOCR's packaged models are missing ({', '.join(missing)}): {ONNX_HINT}")
    return {key: str(path) for key, path in paths.items()}


def engine_problem(engine: OcrEngine) -> str | None:
    """Why ``engine`` cannot run on this machine, with what to install; None when it can."""
    if engine == "tesseract":
        return None if shutil.which("tesseract") else f"Tesseract OCR is not installed: {TESSERACT_HINT}"
    if engine == "rapidocr":
        if find_spec("onnxruntime") is None:
            return f"onnxruntime is not installed: {ONNX_HINT}"
        try:
            rapidocr_models()
        except RuntimeError as error:
            return str(error)
    return None


def ocr_model(engine: OcrEngine, num_threads: int = 1) -> BaseOcrModel | None:
    """Docling's OCR model for ``engine`` reading whole pages, or None when OCR is off."""
    if engine == "off":
        return None
    problem = engine_problem(engine)
    if problem:
        raise RuntimeError(problem)
    accelerator = AcceleratorOptions(device="cpu", num_threads=num_threads)
    if engine == "tesseract":
        from docling.models.stages.ocr.tesseract_ocr_cli_model import TesseractOcrCliModel

        # Tesseract's OpenMP takes every core by default; keep it to the worker's share.
        os.environ.setdefault("OMP_THREAD_LIMIT", str(num_threads))

        options = TesseractCliOcrOptions(lang=["eng"], mode=OcrMode.FULL_PAGE, scale=OCR_SCALE)
        return TesseractOcrCliModel(enabled=True, artifacts_path=None, options=options, accelerator_options=accelerator)
    from docling.models.stages.ocr.rapid_ocr_model import RapidOcrModel

    options = RapidOcrOptions(
        lang=["en"], backend="onnxruntime", mode=OcrMode.FULL_PAGE, scale=OCR_SCALE, **rapidocr_models()
    )
    return RapidOcrModel(enabled=True, artifacts_path=None, options=options, accelerator_options=accelerator)


def _quarter_turns(cells: list[TextCell]) -> int:
    """How many quarter turns the text of most characters is rotated by (0 to 3)."""
    turns: Counter[int] = Counter()
    for cell in cells:
        turns[round(cell.rect.angle / (math.pi / 2)) % 4] += len(cell.text)
    return turns.most_common(1)[0][0] if turns else 0


def _turned(cell: TextCell, turns: int, size: Size) -> TextCell:
    rect = cell.rect.to_top_left_origin(size.height)
    corners = [(rect.r_x0, rect.r_y0), (rect.r_x1, rect.r_y1), (rect.r_x2, rect.r_y2), (rect.r_x3, rect.r_y3)]
    w, h = size.width, size.height
    turn = {1: lambda x, y: (h - y, x), 2: lambda x, y: (w - x, h - y), 3: lambda x, y: (y, w - x)}[turns]
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = (turn(x, y) for x, y in corners)
    upright = BoundingRectangle(
        r_x0=x0, r_y0=y0, r_x1=x1, r_y1=y1, r_x2=x2, r_y2=y2, r_x3=x3, r_y3=y3, coord_origin=CoordOrigin.TOPLEFT
    )
    return cell.model_copy(update={"rect": upright})


def turn_upright(page: Page) -> None:
    """Turn an OCRed page whose text runs sideways or upside down so that its lines read left to right.

    Tesseract detects the page's orientation and reports each word's box along its text; the
    reconstruction reads geometry, so the cells (and for a quarter turn the page size) are
    rotated into the frame where the text is upright.
    """
    parsed = page.parsed_page
    if parsed is None or page.size is None:
        return
    turns = _quarter_turns(parsed.textline_cells)
    if not turns:
        return
    size = page.size
    parsed.textline_cells = [_turned(cell, turns, size) for cell in parsed.textline_cells]
    parsed.word_cells = [_turned(cell, turns, size) for cell in parsed.word_cells]
    parsed.char_cells = []
    parsed.bitmap_resources = []
    if turns % 2:
        page.size = Size(width=size.height, height=size.width)
