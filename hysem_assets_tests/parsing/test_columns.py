"""Two-column born-digital pages: every line of Docling's output stays whole, stamps go to ``furniture``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hysem_assets.parsing.native import native_converter
from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.parse import parse_pdf
from hysem_assets.parsing.reconstruct import MARGIN
from hysem_assets_tests.parsing.builders import STAMP, column_lines, two_column_pdf

TEXT_ONLY = ParseOptions(ocr_engine="off")


def flat(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


@pytest.mark.parametrize(
    "stamp",
    [(55, 200, 14), (300, 200, 13), (580, 300, 8)],
    ids=["left margin, large enough to span lines", "in the gutter", "right margin"],
)
def test_a_sideways_stamp_is_furniture_and_no_line_of_either_column_is_broken(tmp_path: Path, stamp):
    pdf = two_column_pdf(tmp_path / "paper.pdf", stamp=stamp)
    result = parse_pdf(pdf, TEXT_ONLY)
    text = flat(result.markdown)
    for page in range(2):
        first, second = (column_lines(seed=10 * page + column) for column in (0, 1))
        for line in first + second:
            assert flat(line) in text, line  # whole, never mixed with a line of the other column or the stamp
        assert text.index(flat(first[-2])) < text.index(flat(second[0]))  # a column read to its end first
    plain = flat(native_converter(reconstructed=False).convert(pdf).document.export_to_markdown())
    assert "example org" not in text and "downloaded from example org" in plain  # plain Docling keeps the stamp
    furniture = json.loads(result.furniture_json)
    assert {item["rule"] for item in furniture} == {MARGIN}
    for n in (1, 2):  # the stamp, kept for provenance (in one line or two, as the PDF sets it)
        assert flat(" ".join(item["text"] for item in furniture if item["page"] == n)) == flat(STAMP)
    assert result.docling_pages == 0 and result.restored_lines == 0
