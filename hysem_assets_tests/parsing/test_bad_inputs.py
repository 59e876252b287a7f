"""Files that cannot be parsed get a clear error in their row; nothing raises."""

from __future__ import annotations

from pathlib import Path

import pytest

from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.parse import parse_pdf
from hysem_assets.parsing.preflight import ENCRYPTED, NO_PAGES, NO_TEXT_OCR_OFF, NO_TEXT_WITH_OCR
from hysem_assets_tests.parsing.builders import corrupt_pdf, encrypted_pdf, image_only_pdf, zero_page_pdf


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (encrypted_pdf, ENCRYPTED),
        (zero_page_pdf, NO_PAGES),
        (image_only_pdf, NO_TEXT_WITH_OCR),
        (corrupt_pdf, "corrupt or not a PDF"),
    ],
)
def test_each_bad_file_gets_its_own_error(tmp_path: Path, make, expected: str):
    result = parse_pdf(make(tmp_path / "bad.pdf"))
    assert result.error is not None and result.error.startswith(expected)
    assert not result.ok and result.status == "failed" and result.markdown == "" and result.token_count == 0


def test_a_scan_with_ocr_off_says_how_to_turn_it_on(tmp_path: Path):
    result = parse_pdf(image_only_pdf(tmp_path / "scan.pdf"), ParseOptions(ocr_engine="off"))
    assert result.status == "failed" and result.error.startswith(NO_TEXT_OCR_OFF)
    assert "ocr_engine: tesseract" in result.error and "--ocr-engine tesseract" in result.error


def test_an_html_page_saved_as_pdf_is_not_a_pdf(tmp_path: Path):
    page = tmp_path / "landing.pdf"
    page.write_text("<html><body>Download the article</body></html>")
    assert parse_pdf(page).error.startswith("corrupt or not a PDF")


def test_a_missing_file_and_a_missing_artifacts_folder_are_errors_too(tmp_path: Path):
    assert parse_pdf(tmp_path / "gone.pdf").error.startswith("file not found")
    scan = image_only_pdf(tmp_path / "scan.pdf")
    error = parse_pdf(scan, ParseOptions(pipeline="standard")).error
    assert "artifacts_path" in error and "docling-tools models download" in error


def test_unknown_pipelines_and_ocr_engines_are_refused_up_front():
    with pytest.raises(ValueError, match="native, standard"):
        ParseOptions(pipeline="fast")
    with pytest.raises(ValueError, match="tesseract, rapidocr, off"):
        ParseOptions(ocr_engine="easyocr")


def test_a_reconstruction_failure_falls_back_to_doclings_plain_output(monkeypatch: pytest.MonkeyPatch, realdata: Path):
    from hysem_assets.parsing import native

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a page no rule foresaw")

    monkeypatch.setattr(native, "reconstruct", broken)
    pdf = realdata / "pdf_docling_groundtruth" / "pdf" / "multi_page.pdf"
    assert pdf.is_file(), f"{pdf} is not there"
    result = parse_pdf(pdf)
    assert result.ok and "The Evolution of the Word Processor" in result.markdown
