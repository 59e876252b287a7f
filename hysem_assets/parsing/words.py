"""Words of a parsed PDF page, with the little the text layer says about their style.

docling-parse reports each word's box and font. The font's name tells bold and monospace
from regular where the PDF names it (``Times-Bold``, ``MyriadBd``, ``CMBX12``, ``CMTT9``);
the box height stands in for the font size, which the backend does not expose.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from docling_core.types.doc import Size
from docling_core.types.doc.page import SegmentedPdfPage, TextCell

from hysem_assets.parsing.geometry import Box, is_sideways

BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|bd(it|obl|ital)?$|[-,]b$|^cmbx|^sfbx|^cmb\d", re.IGNORECASE)
MONOSPACE_FONT = re.compile(r"courier|mono|consol|menlo|inconsolata|^cmtt|^sftt|lucidaconsole|code", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    box: Box
    font: str = ""
    bold: bool = False
    monospace: bool = False
    sideways: bool = False  # set at a quarter turn (see ``margins``)


def _base_name(font_name: str) -> str:
    """``/ABCDEF+Times-Bold`` -> ``Times-Bold``: without the subset tag and the name's slash."""
    return font_name.lstrip("/").rsplit("+", 1)[-1]


def word_from_cell(cell: TextCell, page_height: float) -> Word:
    font = getattr(cell, "font_name", "") or getattr(cell, "font_key", "") or ""
    base = _base_name(font)
    return Word(
        text=cell.text,
        box=Box.from_rect(cell.rect, page_height),
        font=font,
        bold=bool(BOLD_FONT.search(base)),
        monospace=bool(MONOSPACE_FONT.search(base)),
        sideways=is_sideways(cell.rect),
    )


def page_words(page: SegmentedPdfPage, size: Size) -> list[Word]:
    """The page's words; pages whose backend only materialised lines give one word per line."""
    cells = page.word_cells or page.textline_cells
    return [word_from_cell(cell, size.height) for cell in cells if cell.text.strip()]


def dominant_font(words: Iterable[Word]) -> str:
    """The font most of the characters are set in ("" without words)."""
    fonts: Counter[str] = Counter()
    for word in words:
        fonts[word.font] += len(word.text)
    return fonts.most_common(1)[0][0] if fonts else ""


def char_share(words: Iterable[Word], flag: Callable[[Word], bool]) -> float:
    """Share of the characters that belong to words with ``flag`` (bold, monospace)."""
    total = marked = 0
    for word in words:
        total += len(word.text)
        marked += len(word.text) * flag(word)
    return marked / total if total else 0.0
