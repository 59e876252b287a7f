"""A region's rows into blocks: paragraphs, headings, list items, captions, code, tables, equations.

A region is read top to bottom. Two or more rows cut into cells by wide gaps are a table;
a row that ends in an equation number, or a centred line of mathematics, is an equation;
everything else is a line of text, and consecutive lines stay in one paragraph until the
spacing, the type size or font, an indented first line, a list marker, or a short line that
ends a sentence says a new one starts. Blocks are then named: a short block set larger,
bolder or numbered like a section is a heading; "Table 2." starts a caption; monospace text
is code; the largest type at the top of the first page is the title.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from docling_core.types.doc import DocItemLabel

from hysem_assets.parsing.clusters import EQUATION_NUMBER
from hysem_assets.parsing.geometry import Box
from hysem_assets.parsing.lines import LIST_MARKER, Segment, group_rows
from hysem_assets.parsing.words import Word, char_share, dominant_font

Row = list[Segment]

CAPTION = re.compile(
    r"^(table|tab\.|fig\.|figure|listing|scheme|chart|plate|algorithm)\s*[\dIVXLC]+[a-z]?\b", re.IGNORECASE
)
HEADING_NUMBER = re.compile(r"^(\d{1,2}(\.\d{1,2})*\.?|\(?\d{1,2}\)|[A-Z]\.|[IVXL]{1,4}\.)\s+(?=\S)")
SECTION_NAME = re.compile(
    r"^(abstract|introduction|background|related work|methods?|materials and methods|methodology|results"
    r"|results and discussion|discussion|conclusions?|summary|references|bibliography|acknowledge?ments?"
    r"|appendix( [a-z])?|keywords|funding|contents|preface|notices|trademarks)$",
    re.IGNORECASE,
)
REFERENCE = re.compile(r"^\[\d{1,3}\]$")
BULLET = re.compile(r"^[•·▪▫◦‣⁃●○■□\-–—*∞\x84➢➤►✓✔☐☑]$")
MATH = re.compile(r"[=≤≥≈≠∑∏∫√±×÷∞∂∇∈∉⊂⊆∀∃→←↔^]")
LEADER_END = re.compile(r"(\.\s*){3,}\s*([\divxlc]+)$", re.IGNORECASE)
SENTENCE_END = re.compile(r"[.!?:。]['\"”’)\]]*$")


@dataclass(frozen=True)
class BodyStyle:
    """The document's running text: its font, its cell height and whether it is bold."""

    font: str
    height: float
    bold: bool = False

    @classmethod
    def of(cls, segments: Sequence[Segment]) -> BodyStyle:
        font = dominant_font(_words(segments))
        words = [word for word in _words(segments) if word.font == font]
        if not words:
            return cls(font="", height=10.0)
        return cls(
            font=font,
            height=statistics.median(w.box.height for w in words),
            bold=char_share(words, lambda w: w.bold) > 0.5,
        )


def _words(segments: Sequence[Segment]) -> list[Word]:
    return [word for segment in segments for word in segment.words]


@dataclass
class Block:
    label: DocItemLabel
    rows: list[Row] = field(default_factory=list)

    @property
    def segments(self) -> list[Segment]:
        return [segment for row in self.rows for segment in row]

    @property
    def box(self) -> Box:
        return Box.around(segment.box for segment in self.segments)

    @property
    def text(self) -> str:
        return " ".join(segment.text for segment in self.segments)

    @property
    def height(self) -> float:
        return statistics.median(segment.height for segment in self.segments)

    @property
    def font(self) -> str:
        return dominant_font(_words(self.segments))


def row_box(row: Row) -> Box:
    return Box.around(segment.box for segment in row)


@dataclass(frozen=True)
class LineMetrics:
    """A line's typical top, bottom and height: medians over its words, so one tall
    bold word or a subscript does not move the line."""

    top: float
    bottom: float
    height: float

    @classmethod
    def of(cls, row: Row) -> LineMetrics:
        words = _words(row)
        return cls(
            statistics.median(w.box.t for w in words),
            statistics.median(w.box.b for w in words),
            statistics.median(w.box.height for w in words),
        )


def _prose(segments: Sequence[Segment]) -> bool:
    words = [w for s in segments for w in s.text.split()]
    long_words = sum(len(w) >= 4 and w.isalpha() for w in words)
    return not MATH.search(" ".join(words)) and long_words >= max(2, len(words) // 2)


def _prose_line(segment: Segment) -> bool:
    return len(segment.words) >= 5 and _prose([segment])


class _Region:
    """Geometry of one region that every decision about its rows refers to."""

    def __init__(self, segments: Sequence[Segment], style: BodyStyle, rtl: bool):
        self.rows: list[Row] = [
            sorted(row, key=lambda s: -s.box.r if rtl else s.box.l) for row in group_rows(segments, lambda s: s.box)
        ]
        self.rtl = rtl
        self.left = min(s.box.l for s in segments)
        self.right = max(s.box.r for s in segments)
        lines = [LineMetrics.of(row) for row in self.rows]
        gaps = [b.top - a.bottom for a, b in zip(lines, lines[1:]) if b.top > a.bottom]
        self.line_gap = statistics.median(gaps) if gaps else 0.3 * style.height

    @property
    def width(self) -> float:
        return self.right - self.left

    def number_segment(self, row: Row) -> Segment:
        return row[0] if self.rtl else row[-1]

    def equation(self, row: Row) -> bool:
        if len(row) >= 2 and EQUATION_NUMBER.match(self.number_segment(row).text):
            rest = [s for s in row if s is not self.number_segment(row)]
            return not _prose(rest)
        box = row_box(row)
        centred = abs(box.cx - (self.left + self.right) / 2) <= 0.1 * self.width
        text = " ".join(s.text for s in row)
        return centred and box.width <= 0.7 * self.width and bool(MATH.search(text)) and not _prose(row)

    def cells(self, row: Row) -> bool:
        return len(row) >= 2 and not self.equation(row) and not all(_prose_line(s) for s in row)

    def table_length(self, start: int) -> int:
        """How many rows from ``start`` form a table: at least two rows of aligned cells."""
        end, cell_rows = start, 0
        while end < len(self.rows):
            if self.cells(self.rows[end]):
                cell_rows += 1
            elif not (
                cell_rows
                and end + 1 < len(self.rows)
                and self.cells(self.rows[end + 1])
                and row_box(self.rows[end]).width < 0.5 * self.width
            ):
                break
            end += 1
        return end - start if cell_rows >= 2 else 0

    def table_heading(self, block: Block, table: list[Row]) -> bool:
        """Whether a one-line text block just above a table is the first line of its header."""
        if block.label != DocItemLabel.TEXT or len(block.rows) != 1 or _prose(block.rows[0]):
            return False
        line, first = LineMetrics.of(block.rows[0]), LineMetrics.of(table[0])
        box, extent = row_box(block.rows[0]), Box.around(row_box(row) for row in table)
        return first.top - line.bottom <= self.line_gap + 0.5 * first.height and extent.l <= box.l and box.r <= extent.r

    def continues(self, block: Block, row: Row) -> bool:
        """Whether ``row`` is the next line of the paragraph ``block``."""
        previous, line = row_box(block.rows[-1]), row_box(row)
        above, below = LineMetrics.of(block.rows[-1]), LineMetrics.of(row)
        height = max(above.height, below.height)
        gap = below.top - above.bottom
        first = row[0].words[0].text
        marker = len(row[0].words) > 1 and any(p.match(first) for p in (BULLET, LIST_MARKER, REFERENCE))
        if block.label == DocItemLabel.CODE:
            return gap <= self.line_gap + 0.5 * height and _monospace(row)
        if (
            gap > self.line_gap + 0.5 * height
            or line.h_overlap(previous) <= 0
            or abs(above.height - below.height) > 0.2 * height
            or _style(row) != _style(block.rows[-1])
            or _monospace(row)
            or marker
        ):
            return False
        before = " ".join(s.text for s in block.rows[-1]).rstrip()
        if LEADER_END.search(before):  # a table-of-contents entry: "Notices . . . . vii"
            return False
        ends = SENTENCE_END.search(before)
        short = previous.r < self.right - max(3 * height, 0.15 * self.width)
        indented = line.l - self.left > 0.6 * height and previous.l - self.left < 0.3 * height
        if self.rtl:
            short = previous.l > self.left + max(3 * height, 0.15 * self.width)
            indented = self.right - line.r > 0.6 * height and self.right - previous.r < 0.3 * height
        return not (ends and (short or indented))


def _style(row: Row) -> tuple[str, bool]:
    words = _words(row)
    return dominant_font(words), char_share(words, lambda w: w.bold) > 0.5


def _monospace(row: Row) -> bool:
    return char_share(_words(row), lambda w: w.monospace) >= 0.8


def region_blocks(segments: Sequence[Segment], style: BodyStyle, rtl: bool = False) -> list[Block]:
    """The blocks of one region in reading order, labelled text, list item, code, table or formula."""
    text = [s for s in segments if s.words]
    if not text:
        return []
    region = _Region(text, style, rtl)
    blocks: list[Block] = []
    index = 0
    while index < len(region.rows):
        row = region.rows[index]
        length = region.table_length(index)
        if length:
            rows = region.rows[index : index + length]
            if blocks and region.table_heading(blocks[-1], rows):
                rows = [*blocks.pop().rows, *rows]
            blocks.append(Block(DocItemLabel.TABLE, rows))
            index += length
            continue
        if region.equation(row):
            blocks.append(Block(DocItemLabel.FORMULA, [row]))
        elif (
            blocks
            and blocks[-1].label in (DocItemLabel.TEXT, DocItemLabel.LIST_ITEM, DocItemLabel.CODE)
            and region.continues(blocks[-1], row)
        ):
            blocks[-1].rows.append(row)
        else:
            blocks.append(Block(_opening_label(row), [row]))
        index += 1
    return blocks


def _opening_label(row: Row) -> DocItemLabel:
    if _monospace(row):
        return DocItemLabel.CODE
    first = row[0].words[0].text
    return DocItemLabel.LIST_ITEM if BULLET.match(first) and len(row[0].words) + len(row) > 1 else DocItemLabel.TEXT


def heading(block: Block, style: BodyStyle) -> bool:
    """Whether a text block is a section heading: short, and set apart by size, weight, font or numbering."""
    text = block.text.strip()
    words = text.split()
    if not words or len(words) > 20 or len(block.rows) > 3 or CAPTION.match(text) or not any(c.isalpha() for c in text):
        return False
    ratio = block.height / style.height
    name = HEADING_NUMBER.sub("", text).strip()
    if SECTION_NAME.match(name) and len(block.rows) == 1 and ratio >= 0.8:
        return True
    if text[-1] in ".,;" or ratio < 0.9:
        return False
    distinct = block.font != style.font
    bold = char_share(_words(block.segments), lambda w: w.bold) > 0.5 and not style.bold
    numbered = bool(HEADING_NUMBER.match(text)) and not name[:1].islower()
    titled = distinct and len(block.rows) == 1 and len(words) <= 10 and _title_case(words)
    return ratio >= 1.15 or bold or titled or (numbered and (distinct or ratio >= 1.05))


def _title_case(words: list[str]) -> bool:
    """Most words capitalised, as in "Stainless Steel Self-Locking Nut" (short function words aside)."""
    content = [w for w in words if len(w) > 3 and w[0].isalpha()]
    return len(words) >= 2 and bool(content) and all(w[0].isupper() for w in content)


def label_blocks(blocks: list[Block], style: BodyStyle, first_page: bool, page_height: float) -> None:
    """Name the text blocks of a page: captions, headings, and on the first page the title."""
    for block in blocks:
        if block.label != DocItemLabel.TEXT:
            continue
        if CAPTION.match(block.text.strip()):
            block.label = DocItemLabel.CAPTION
        elif heading(block, style):
            block.label = DocItemLabel.SECTION_HEADER
    if first_page:
        top = [
            b
            for b in blocks
            if b.label in (DocItemLabel.SECTION_HEADER, DocItemLabel.TEXT)
            and b.box.b <= 0.5 * page_height
            and len(b.rows) <= 4
            and b.height >= 1.3 * style.height
        ]
        if top:
            max(top, key=lambda b: b.height).label = DocItemLabel.TITLE
