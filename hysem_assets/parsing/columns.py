"""Reading order on a page: full-width bands top to bottom, columns left to right inside them.

The page is cut into strips wherever a horizontal line of white space crosses it. Strips
that share a vertical gutter (a white channel no text crosses) are the same multi-column
section, so they are joined; a strip that crosses the gutter, such as a title or a
full-width figure, starts a new section. A section is split at its gutters only when the
pieces read like text columns, because a table's cell columns are separated by white space
just the same.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from hysem_assets.parsing.lines import SEGMENT_GAP, Segment, row_bands

Gap = tuple[float, float]


@dataclass(frozen=True)
class ColumnRule:
    min_gutter: float = SEGMENT_GAP  # in segment heights: narrower channels are word spacing
    min_text_lines: int = 3  # a column holds at least this many text lines (or only text lines)...
    min_text_share: float = 0.3  # ...and they are at least this share of its segments
    text_words: int = 4  # a text line has at least this many words; table cells rarely do


def reading_regions(
    segments: Sequence[Segment], rtl: bool = False, rule: ColumnRule = ColumnRule()
) -> list[list[Segment]]:
    """The page's segments as regions in reading order: single-column bands and columns."""
    if not segments:
        return []
    height = statistics.median(s.height for s in segments if s.words) if any(s.words for s in segments) else 10.0
    min_gutter = rule.min_gutter * height
    sections: list[list[Segment]] = []
    for strip in row_bands(segments, lambda s: s.box):
        if sections and _compatible(sections[-1], strip, min_gutter):
            sections[-1].extend(strip)
        else:
            sections.append(list(strip))
    regions: list[list[Segment]] = []
    for section in sections:
        columns = _text_columns(section, min_gutter, rule)
        regions.extend(columns[::-1] if rtl else columns)
    return regions


def gutters(segments: Sequence[Segment], min_width: float) -> list[Gap]:
    """White channels at least ``min_width`` wide between the segments' horizontal extents."""
    spans = sorted((s.box.l, s.box.r) for s in segments)
    found: list[Gap] = []
    right = spans[0][1]
    for left, r in spans[1:]:
        if left - right >= min_width:
            found.append((right, left))
        right = max(right, r)
    return found


def _compatible(section: list[Segment], strip: list[Segment], min_gutter: float) -> bool:
    """Whether a strip continues a section: both single-column, or the section's gutter survives."""
    before = gutters(section, min_gutter)
    if not before:
        return not gutters(strip, min_gutter)
    after = gutters([*section, *strip], min_gutter)
    return any(a[0] < b[1] and b[0] < a[1] for a in after for b in before)


def _text_columns(section: list[Segment], min_gutter: float, rule: ColumnRule) -> list[list[Segment]]:
    """The section cut at its widest gutter with text on both sides, recursively; else whole."""
    best: tuple[float, list[Segment], list[Segment]] | None = None
    for left_edge, right_edge in gutters(section, min_gutter):
        left = [s for s in section if s.box.r <= left_edge]
        right = [s for s in section if s.box.l >= right_edge]
        width = right_edge - left_edge
        if (best is None or width > best[0]) and _reads_as_text(left, rule) and _reads_as_text(right, rule):
            best = (width, left, right)
    if best is None:
        return [section]
    return [*_text_columns(best[1], min_gutter, rule), *_text_columns(best[2], min_gutter, rule)]


def _reads_as_text(column: list[Segment], rule: ColumnRule) -> bool:
    lines = [s for s in column if s.words]
    if not lines:
        return True
    text = sum(len(s.words) >= rule.text_words for s in lines)
    return text >= min(rule.min_text_lines, len(lines)) and text >= rule.min_text_share * len(lines)
