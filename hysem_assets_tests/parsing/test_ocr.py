"""Scanned pages parse to their words with OCR; a garbage text layer is read again."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from docling_core.types.doc.page import BitmapResource, SegmentedPdfPage
from pypdf import PdfReader, PdfWriter

from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.parsing.ocr import MIN_CONFIDENCE, needs_ocr, page_confidence
from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.parse import parse_pdf
from hysem_assets.parsing.preflight import NO_READABLE_TEXT
from hysem_assets.review.flow import FlowInputs, prisma_counts
from hysem_assets_tests.parsing.builders import PAGE, cell, require, scanned_pdf, scribbled_pdf
from hysem_assets_tests.review import tables

PAPER = default_snapshot_dir() / "files" / "10.5555_ahi.2019.0203.pdf"


def words(text: str) -> list[str]:
    return re.findall(r"[a-z]{4,}", text.lower())


def first_page(source: Path, target: Path) -> Path:
    writer = PdfWriter()
    writer.add_page(PdfReader(source).pages[0])
    writer.write(target)
    return target


@pytest.mark.parametrize("engine", ["tesseract", "rapidocr"])
def test_a_scanned_page_parses_to_its_words_with_ocr(tmp_path: Path, engine: str):
    require(engine)
    page = first_page(PAPER, tmp_path / "page.pdf")
    scan = scanned_pdf(page, tmp_path / "scan.pdf")
    assert parse_pdf(scan, ParseOptions(ocr_engine="off")).status == "failed"
    result = parse_pdf(scan, ParseOptions(ocr_engine=engine))
    assert result.ok and result.status == "ocr" and result.ocr_pages == 1, result.error
    assert json.loads(result.ocr_confidence_json)["1"] >= 0.85 and result.unreadable_pages == 0
    text = result.markdown.lower()
    assert "nitrogen dioxide" in text and "hospital admissions" in text
    printed = set(words(parse_pdf(page).markdown))
    assert len(printed) > 100 and len(printed & set(words(text))) >= 0.9 * len(printed)


def test_a_document_of_scribbles_is_not_readable_and_says_why(tmp_path: Path):
    require("tesseract")
    result = parse_pdf(scribbled_pdf(tmp_path / "notes.pdf"))
    assert not result.ok and result.status == "failed" and result.markdown == ""
    assert result.error.startswith(f"{NO_READABLE_TEXT}: every page was read by OCR with a confidence below")
    assert result.unreadable_pages == 1 and json.loads(result.ocr_confidence_json)["1"] < MIN_CONFIDENCE
    parsed = tables.parsed().assign(error=[None, None, result.error, None])
    flow = prisma_counts(FlowInputs(tables.raw(), tables.corpus(), tables.screening(), tables.pdfs(), parsed))
    assert dict(zip(flow["box"], flow["count"]))[f"not_parsed:{NO_READABLE_TEXT}"] == 1  # PRISMA's "not readable"


def test_a_scribbled_page_beside_a_printed_one_is_flagged_and_the_document_kept(tmp_path: Path):
    require("tesseract")
    result = parse_pdf(scribbled_pdf(tmp_path / "mixed.pdf", printed=first_page(PAPER, tmp_path / "page.pdf")))
    confidence = json.loads(result.ocr_confidence_json)
    assert result.ok and result.ocr_pages == 2 and result.unreadable_pages == 1
    assert confidence["1"] >= 0.85 > MIN_CONFIDENCE > confidence["2"]
    assert "nitrogen dioxide" in result.markdown.lower()


def test_page_confidence_weighs_each_cell_by_its_characters():
    cells = [
        cell("Printed", 0, 0, 50, 10).model_copy(update={"from_ocr": True, "confidence": 0.9}),
        cell("ab", 0, 20, 20, 30).model_copy(update={"from_ocr": True, "confidence": 0.2}),
        cell("from the text layer", 0, 40, 90, 50),
    ]
    assert page_confidence(cells) == pytest.approx((7 * 0.9 + 2 * 0.2) / 9)
    assert page_confidence(cells[2:]) is None


def test_a_text_pdf_needs_no_ocr_and_says_so():
    result = parse_pdf(PAPER)
    assert result.status == "native" and result.ocr_pages == 0
    assert result.ocr_confidence_json == "{}" and result.unreadable_pages == 0


def test_a_rotated_scan_is_turned_upright(realdata: Path):
    require("tesseract")
    pdf = realdata / "pdf_docling_ocr" / "pdf" / "ocr_test_rotated_90.pdf"
    text = " ".join(words(parse_pdf(pdf).markdown))
    assert "docling bundles document conversion json" in text and text.index("docling") < text.index("package")


def test_pages_without_a_usable_text_layer_need_ocr():
    def page(*texts: str, bitmaps: tuple[BitmapResource, ...] = ()) -> SegmentedPdfPage:
        cells = [cell(text, 50, 50 + 20 * k, 400, 62 + 20 * k) for k, text in enumerate(texts)]
        return SegmentedPdfPage.model_construct(
            textline_cells=cells, word_cells=[], char_cells=[], bitmap_resources=list(bitmaps)
        )

    prose = ("Results of the ozone study", "were consistent across cities.")
    assert not needs_ocr(page(*prose), PAGE)
    assert needs_ocr(page("\ue001\ue002\ue003 \ue004\ue005 \ue006\ue007\ue008\ue009", "\ufffd\ufffd\ufffd ab"), PAGE)
    assert needs_ocr(page("12"), PAGE)
    scan = BitmapResource(index=0, rect=cell("", 0, 0, PAGE.width, PAGE.height).rect)
    assert needs_ocr(page("Downloaded from example.org on 1 May 2020", bitmaps=(scan,)), PAGE)
    assert not needs_ocr(page(*(prose * 10), bitmaps=(scan,)), PAGE)
