"""Left-margin line numbers, removed at the text-cell level before any layout work.

Review copies and preprints number their lines in the left margin. Left in, the numbers
land in the middle of sentences, split paragraphs and look like a table column. They are
recognisable from geometry alone: short runs of digits, narrow, in a band at the page's
left edge, left of every other text, sharing one edge, and counting up down the page.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from docling_core.types.doc import Size
from docling_core.types.doc.page import SegmentedPdfPage, TextCell

from hysem_assets.parsing.geometry import Box

DIGITS = re.compile(r"^\d{1,4}$")


@dataclass(frozen=True)
class LineNumberRule:
    """Thresholds, as shares of the page width or of the body text's cell height."""

    band: float = 0.15  # the numbers' right edge lies within this share of the page width
    max_width: float = 0.05  # a number is at most this wide
    min_count: int = 3  # fewer numbers are page numbers or table cells, not a margin
    align: float = 3.0  # points: numbers of one margin share a left or a right edge
    min_height: float = 0.3  # times the median body cell height
    max_height: float = 2.0
    min_ascending: float = 0.8  # share of neighbouring pairs that count up down the page


def cell_box(cell: TextCell, page_height: float) -> Box:
    return Box.from_rect(cell.rect, page_height)


def line_number_indices(cells: Sequence[TextCell], page: Size, rule: LineNumberRule = LineNumberRule()) -> set[int]:
    """Indices of the cells that are left-margin line numbers."""
    numbers = {i: cell_box(cell, page.height) for i, cell in enumerate(cells) if DIGITS.match(cell.text.strip())}
    candidates = [
        i for i, box in numbers.items() if box.r <= rule.band * page.width and box.width <= rule.max_width * page.width
    ]
    if len(candidates) < rule.min_count:  # most pages: the other cells' boxes are never needed
        return set()
    boxes = [numbers.get(i) or cell_box(cell, page.height) for i, cell in enumerate(cells)]
    chosen = set(candidates)
    others = [box for i, box in enumerate(boxes) if i not in chosen and cells[i].text.strip()]
    if others:
        body_left = sorted(box.l for box in others)[len(others) // 20]
        body_height = statistics.median(box.height for box in others)
        candidates = [
            i
            for i in candidates
            if boxes[i].r <= body_left and rule.min_height <= boxes[i].height / body_height <= rule.max_height
        ]
    column = _largest_aligned_group(candidates, boxes, rule.align)
    if len(column) < rule.min_count:
        return set()
    column.sort(key=lambda i: boxes[i].t)
    values = [int(cells[i].text.strip()) for i in column]
    ascending = sum(b > a for a, b in zip(values, values[1:])) / (len(values) - 1)
    return set(column) if ascending >= rule.min_ascending else set()


def _largest_aligned_group(indices: list[int], boxes: list[Box], tolerance: float) -> list[int]:
    """The most numbers that share a right edge (right-aligned) or a left edge (left-aligned)."""
    best: list[int] = []
    for edge in (lambda box: box.r, lambda box: box.l):
        for i in indices:
            group = [j for j in indices if abs(edge(boxes[j]) - edge(boxes[i])) <= tolerance]
            if len(group) > len(best):
                best = group
    return best


def strip_line_numbers(page: SegmentedPdfPage, size: Size, rule: LineNumberRule = LineNumberRule()) -> int:
    """Remove line numbers from a parsed page's line, word and character cells; returns how many.

    Found on the finest cells that carry whole numbers (words, else lines), then removed
    from every level, so whichever level a later stage reads agrees.
    """
    cells = page.word_cells or page.textline_cells
    found = [cell_box(cells[i], size.height) for i in line_number_indices(cells, size, rule)]
    if not found:
        return 0

    margin = Box.around(found)  # most cells lie outside it, which spares testing them against every number

    def kept(level: list[TextCell]) -> list[TextCell]:
        return [cell for cell in level if not _centre_inside(cell_box(cell, size.height), margin, found)]

    page.textline_cells = kept(page.textline_cells)
    page.word_cells = kept(page.word_cells)
    page.char_cells = kept(page.char_cells)
    return len(found)


def _centre_inside(box: Box, margin: Box, areas: list[Box]) -> bool:
    x, y = box.cx, box.cy
    return margin.contains_point(x, y) and any(area.contains_point(x, y) for area in areas)
