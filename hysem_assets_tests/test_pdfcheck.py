"""The checks that decide whether bytes are a whole PDF."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pypdf import PdfWriter

from hysem_assets.core.pdfcheck import pdf_content_type, starts_like_pdf, structural_problem
from hysem_assets.mirror.server import default_snapshot_dir

GOOD = (default_snapshot_dir() / "files" / "10.9999_eer.2022.214.pdf").read_bytes()


def write(folder: Path, data: bytes) -> Path:
    path = folder / "x.pdf"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("content_type", "accepted"),
    [
        ("application/pdf", True),
        ("Application/PDF; charset=binary", True),
        ("application/octet-stream", True),
        ("application/x-pdf", True),
        ("text/html", False),
        ("text/html; charset=utf-8", False),
        ("application/json", False),
        ("text/plain", False),
    ],
)
def test_content_types(content_type: str, accepted: bool) -> None:
    assert pdf_content_type(content_type) is accepted


def test_magic() -> None:
    assert starts_like_pdf(b"%PDF-1.7\n") and not starts_like_pdf(b"<!DOCTYPE html>") and not starts_like_pdf(b"%PD")


def test_a_complete_pdf_passes(tmp_path: Path) -> None:
    assert structural_problem(write(tmp_path, GOOD)) is None


def test_trailing_bytes_after_eof_are_tolerated(tmp_path: Path) -> None:
    assert structural_problem(write(tmp_path, GOOD + b"\r\n\x00" * 100)) is None


@pytest.mark.parametrize("keep", [0.2, 0.6, 0.99])
def test_a_truncated_pdf_fails(tmp_path: Path, keep: float) -> None:
    problem = structural_problem(write(tmp_path, GOOD[: int(len(GOOD) * keep)]))
    assert problem == "no %%EOF marker at the end: the file is truncated"


def test_a_page_with_a_pdf_header_fails(tmp_path: Path) -> None:
    assert structural_problem(write(tmp_path, b"<html>%PDF-1.4</html>")) == "does not start with %PDF-"


def test_an_end_marker_alone_does_not_make_a_pdf(tmp_path: Path) -> None:
    problem = structural_problem(write(tmp_path, b"%PDF-1.4\nnot really a document\n%%EOF\n"))
    assert problem is not None and problem.startswith("pypdf cannot read it")


def test_a_pdf_without_pages_fails(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    PdfWriter().write(buffer)
    assert structural_problem(write(tmp_path, buffer.getvalue())) == "the PDF has no pages"
