"""Every PDF of the sample snapshot parses natively; line numbers go, the table stays a table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hysem_assets.core.pdfcheck import structural_problem
from hysem_assets.parsing.parse import parse_pdf

SAMPLE_FILES = Path(__file__).resolve().parents[2] / "hysem_assets" / "sample" / "files"


def sample_pdfs() -> list[Path]:
    return sorted(SAMPLE_FILES.glob("*.pdf"))


def runs_of_counting_numbers(text: str, length: int = 5) -> list[str]:
    """Standalone numbers counting up, in text order (12 ... 13 ... 14): what line numbers leave behind."""
    numbers = [(m.group(), int(m.group())) for m in re.finditer(r"(?<![\w.,])\d{1,3}(?![\w.,])", text)]
    return [
        " ".join(n for n, _ in numbers[k : k + length])
        for k in range(len(numbers) - length + 1)
        if all(numbers[k + j + 1][1] == numbers[k + j][1] + 1 for j in range(length - 1))
    ]


@pytest.fixture(scope="module")
def parsed() -> dict[str, tuple[str | None, object]]:
    pdfs = sample_pdfs()
    if not pdfs:
        pytest.skip(f"no sample PDFs in {SAMPLE_FILES}")
    return {pdf.name: (structural_problem(pdf), parse_pdf(pdf)) for pdf in pdfs}


def test_every_whole_sample_pdf_parses(parsed):
    for name, (problem, result) in parsed.items():
        if problem is None:
            assert result.ok, f"{name}: {result.error}"
            assert result.pages >= 1 and result.token_count > 500
        else:
            assert result.error, f"{name} is damaged ({problem}) but parsed without an error"


def test_line_numbers_are_gone(parsed):
    for name, (_, result) in parsed.items():
        if result.ok:
            assert not runs_of_counting_numbers(result.markdown), name
            assert not [line for line in result.markdown.splitlines() if line.strip().isdigit()], name


def test_headings_the_table_and_the_equation_come_through(parsed):
    for name, (_, result) in parsed.items():
        if not result.ok:
            continue
        lines = result.markdown.splitlines()
        assert any(line.startswith("## ") and "Introduction" in line for line in lines), name
        assert any(line.startswith("### 2.1 ") for line in lines), name
        header = next(k for k, line in enumerate(lines) if line.startswith("| Group"))
        assert re.match(r"^\|[-| :]+\|$", lines[header + 1]), name
        assert '"number": "1"' in result.equations_json, name
        assert '"num_cols": 4' in result.tables_json, name
