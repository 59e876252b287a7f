"""Words into rows, rows into segments: the units every later layout decision works on.

A row is every word sharing a baseline band across the page; a segment is a run of words
in a row with no wide gap inside. Two text columns, a table's cells and an equation with
its number all share rows, so it is the wide gaps (wider than a line is tall) that tell
them apart. Rows of right-to-left script read right to left, with embedded left-to-right
runs (numbers, Latin names) kept in their own order.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from hysem_assets.parsing.geometry import Box
from hysem_assets.parsing.words import Word

#: Gaps wider than this many word heights may end a segment (see ``split_segments``).
SEGMENT_GAP = 1.0
#: Markers a list item starts with: never split from the text they introduce.
LIST_MARKER = re.compile(r"^([•·▪▫◦‣⁃●○■□\-–—*∞\x84➢➤►✓✔☐☑]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\(?[ivx]{1,4}[.)])$")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of words (none for a picture's box), with its height worked out once."""

    words: tuple[Word, ...]
    box: Box
    height: float = 0.0  # median word height, the stand-in for the font size

    @property
    def text(self) -> str:
        return " ".join(word.text for word in self.words)

    @classmethod
    def of(cls, words: Sequence[Word]) -> Segment:
        return cls(
            tuple(words),
            Box.around(word.box for word in words),
            height=statistics.median(word.box.height for word in words),
        )


def group_rows(items: Iterable[T], box: Callable[[T], Box], min_overlap: float = 0.5) -> list[list[T]]:
    """Group items whose boxes share a horizontal band, top to bottom.

    An item joins a row when it overlaps the row's tallest item by at least ``min_overlap``
    of the smaller height; comparing with the tallest keeps sub- and superscripts in their
    line without letting them chain two lines together.
    """
    rows: list[list[T]] = []
    anchors: list[Box] = []
    for item in sorted(items, key=lambda it: (box(it).cy, box(it).l)):
        b = box(item)
        for k in range(len(rows) - 1, max(len(rows) - 5, -1), -1):
            anchor = anchors[k]
            if anchor.v_overlap(b) >= min_overlap * min(anchor.height, b.height):
                rows[k].append(item)
                if b.height > anchor.height:
                    anchors[k] = b
                break
        else:
            rows.append([item])
            anchors.append(b)
    return rows


def row_bands(items: Iterable[T], box: Callable[[T], Box]) -> list[list[T]]:
    """Group items into bands chained by any vertical overlap, top to bottom.

    Looser than ``group_rows``: a table row whose cells hold two lines, or a cell centred
    across two lines of its neighbours, stays one band as long as white space separates it
    from the next row.
    """
    bands: list[list[T]] = []
    bottom = float("-inf")
    for item in sorted(items, key=lambda it: box(it).t):
        if bands and box(item).t < bottom:
            bands[-1].append(item)
            bottom = max(bottom, box(item).b)
        else:
            bands.append([item])
            bottom = box(item).b
    return bands


def is_rtl(text: str) -> bool:
    """Whether most strongly directional letters of ``text`` are right-to-left (Arabic, Hebrew)."""
    rtl = ltr = 0
    for char in text:
        direction = unicodedata.bidirectional(char)
        rtl += direction in ("R", "AL")
        ltr += direction == "L"
    return rtl > ltr


def visual_order(words: Sequence[Word], rtl: bool) -> list[Word]:
    """Words in reading order: left to right, or right to left with left-to-right runs kept."""
    ordered = sorted(words, key=lambda w: w.box.l)
    if not rtl:
        return ordered
    runs: list[tuple[bool, list[Word]]] = []
    for word in ordered:
        ltr = _left_to_right(word.text)
        if ltr and runs and runs[-1][0]:
            runs[-1][1].append(word)
        else:
            runs.append((ltr, [word]))
    return [word for _, run in reversed(runs) for word in run]


def _left_to_right(text: str) -> bool:
    directions = {unicodedata.bidirectional(char) for char in text}
    return not directions & {"R", "AL"} and bool(directions & {"L", "EN"})


def split_segments(row: Sequence[Word], rtl: bool = False, gap: float = SEGMENT_GAP) -> list[Segment]:
    """Cut a row at its wide gaps.

    A gap is wide when it exceeds ``gap`` word heights and either half as much again or
    well over the row's typical gap: a justified line stretches every space alike, a
    gutter or a table column stands out. A list marker keeps a moderately spaced text beside it.
    """
    ordered = sorted(row, key=lambda w: w.box.l)
    height = statistics.median(word.box.height for word in ordered)
    spaces = [b.box.l - a.box.r for a, b in zip(ordered, ordered[1:])]
    typical = statistics.median(spaces) if spaces else 0.0
    pieces: list[list[Word]] = [[ordered[0]]]
    for previous, word, space in zip(ordered, ordered[1:], spaces):
        wide = space > gap * height and (space > 1.5 * gap * height or space > 1.8 * typical)
        marker = len(pieces[-1]) == 1 and LIST_MARKER.match(previous.text) and space <= 2 * gap * height
        if wide and not marker:
            pieces.append([word])
        else:
            pieces[-1].append(word)
    segments = [Segment.of(visual_order(piece, rtl)) for piece in pieces]
    return segments[::-1] if rtl else segments


def attach_scripts(segments: list[Segment], rtl: bool = False) -> list[Segment]:
    """Fold sub- and superscripts into the segment they hang off.

    An index or an exponent is set smaller and shifted, so it can miss its line's band and
    come out as a segment of its own; it is recognised as a smaller segment that overlaps a
    line vertically and lies within it horizontally or just beside it.
    """
    host_of = {id(segment): _script_host(segment, segments) for segment in segments}

    def line_of(segment: Segment) -> Segment:
        # Hosts are strictly taller, so following them ends: an index of an index joins the line too.
        while (host := host_of[id(segment)]) is not None:
            segment = host
        return segment

    scripts: dict[int, list[Word]] = {}
    for segment in segments:
        if host_of[id(segment)] is not None:
            scripts.setdefault(id(line_of(segment)), []).extend(segment.words)
    return [
        Segment.of(visual_order([*segment.words, *scripts[id(segment)]], rtl)) if id(segment) in scripts else segment
        for segment in segments
        if host_of[id(segment)] is None
    ]


def _script_host(small: Segment, segments: Sequence[Segment]) -> Segment | None:
    height = small.height
    best: Segment | None = None
    for other in segments:
        if (
            other is small
            or height >= 0.85 * other.height
            or small.box.v_overlap(other.box) <= 0
            or small.box.h_overlap(other.box) < -0.6 * other.height
        ):
            continue
        if best is None or abs(other.box.cy - small.box.cy) < abs(best.box.cy - small.box.cy):
            best = other
    return best


def page_segments(words: Sequence[Word]) -> list[Segment]:
    """Every segment of a page, top to bottom."""
    rtl = is_rtl("".join(word.text for word in words))
    rows = group_rows(words, lambda w: w.box)
    return attach_scripts([segment for row in rows for segment in split_segments(row, rtl)], rtl)
