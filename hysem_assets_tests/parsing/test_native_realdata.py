"""Native parsing of real PDFs from Docling's own test data (read by path, never copied)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hysem_assets.embedding.minilm import TOKENIZER_NAME
from hysem_assets.parsing.parse import parse_pdf
from hysem_assets_tests.parsing.test_sample_pdfs import runs_of_counting_numbers


@pytest.fixture
def pdf_folder(realdata: Path) -> Path:
    folder = realdata / "pdf_docling_groundtruth" / "pdf"
    assert folder.is_dir(), f"Docling's ground-truth PDFs are not at {folder}"
    return folder


def headings(markdown: str) -> list[str]:
    return [line.lstrip("#").strip() for line in markdown.splitlines() if line.startswith("#")]


def test_paper_page_keeps_its_sections_and_drops_its_running_header(pdf_folder: Path):
    result = parse_pdf(pdf_folder / "2305.03393v1-pg9.pdf")
    assert result.ok and result.pages == 1
    assert {"5.1 Hyper Parameter Optimization", "5.2 Quantitative Results"} <= set(headings(result.markdown))
    assert "Optimized Table Tokenization for Table Structure Recognition" not in result.markdown
    assert "Effects of reducing" in result.markdown  # "Ef-" / "fects" closed up across the line break
    tables = json.loads(result.tables_json)
    assert len(tables) == 1 and tables[0]["page"] == 1 and tables[0]["num_cols"] >= 4
    assert result.tokenizer == TOKENIZER_NAME and result.token_count > 300
    assert result.parser.startswith("docling ") and "native" in result.parser


def test_two_column_handbook_page_reads_column_by_column(pdf_folder: Path):
    markdown = parse_pdf(pdf_folder / "amt_handbook_sample.pdf").markdown
    assert {"Boots Self-Locking Nut", "Stainless Steel Self-Locking Nut", "Elastic Stop Nut"} <= set(headings(markdown))
    passages = (
        "pulleys, provided the inner race",
        "of comparable size, while the locking",
        "the most common ranges in size",
        "Stainless Steel Self-Locking Nut",
    )
    order = [markdown.index(text) for text in passages]
    assert order == sorted(order)


def test_multi_page_document_keeps_every_section_heading(pdf_folder: Path):
    result = parse_pdf(pdf_folder / "multi_page.pdf")
    assert result.pages == 5
    found = set(headings(result.markdown))
    assert {
        "The Evolution of the Word Processor",
        "Pre-Digital Era (19th - Early 20th Century)",
        "The Birth of Word Processing (1960s - 1970s)",
        "A Glimpse Into the Future",
    } <= found
    assert not runs_of_counting_numbers(result.markdown)
    assert not [line for line in result.markdown.splitlines() if line.strip().isdigit()]


def test_right_to_left_text_reads_in_logical_order(pdf_folder: Path):
    markdown = parse_pdf(pdf_folder / "right_to_left_01.pdf").markdown
    title = "تحسين الإنتاجية وحل المشكلات من خلال البرمجة بلغة R و Python"
    assert title in headings(markdown)
