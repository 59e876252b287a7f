"""Running headers, footers and page numbers: the text a reader skips.

They sit in a band at the top or bottom of the page and either repeat from page to page
(with the page number as the only change) or are a bare page number, possibly at the end
of a running title. Anywhere else on the page, text repeated word for word at the same
place on other pages is furniture too (a stamp, a journal's logo line). All of it is
recognised across the whole document at once.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from docling_core.types.doc import Size

from hysem_assets.parsing.geometry import Box
from hysem_assets.parsing.lines import Segment, group_rows

PAGE_NUMBER = re.compile(r"^(page\s*)?(\d{1,4}|[ivxlcdm]{1,7}|\d{1,3}-\d{1,4})(\s*(/|of)\s*\d{1,4})?$", re.IGNORECASE)


@dataclass(frozen=True)
class FurnitureRule:
    band: float = 0.13  # share of the page height at the top and at the bottom
    min_pages: int = 2  # a line must repeat on this many pages to count as running
    same_place: float = 0.01  # outside the bands: share of the page's width and height two places may differ by
    min_letters: int = 8  # outside the bands: shorter text ("Table 1", "Methods") may repeat by chance


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text.lower())).strip()


def running_furniture(
    pages: Sequence[Sequence[Segment]], sizes: Sequence[Size], rule: FurnitureRule = FurnitureRule()
) -> list[set[int]]:
    """For each page, the indices of its segments that are running headers, footers or page numbers.

    A row in the top or bottom band goes when its text (digits aside) recurs in that band
    on other pages whose body differs (pages that repeat whole are copies, not a running
    header over changing text), or when it is a page number, alone or at either end of the page's
    outermost row; single segments of a band row go when they recur. The page's first and
    last rows go when they hold nothing but a page number, wherever they sit.
    """
    pages_rows: list[list[tuple[str | None, list[int]]]] = []
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    bodies: list[str] = []
    for page_no, (segments, size) in enumerate(zip(pages, sizes)):
        rows = [
            sorted(row, key=lambda i: segments[i].box.l)
            for row in group_rows(range(len(segments)), lambda i: segments[i].box)
        ]
        banded = [(_band(segments, row, size, rule), row) for row in rows]
        body = " ".join(segments[i].text for band, row in banded if band is None for i in row)
        bodies.append(re.sub(r"\s+", " ", body.lower()).strip())  # digits count: tables of numbers differ by them
        for band, row in banded:
            if band is None:
                continue
            seen[band, _key(" ".join(segments[i].text for i in row))].add(page_no)
            for i in row:
                seen[band, _key(segments[i].text)].add(page_no)
        pages_rows.append(banded)

    def recurs(band: str, text: str) -> bool:
        pages_with = seen[band, _key(text)]
        return len(pages_with) >= rule.min_pages and len({bodies[p] for p in pages_with}) > 1

    result: list[set[int]] = []
    for segments, banded in zip(pages, pages_rows):
        drop: set[int] = set()
        outer = {id(banded[0][1]), id(banded[-1][1])} if banded else set()
        for band, row in banded:
            numbers = [i for i in row if PAGE_NUMBER.match(segments[i].text.strip())]
            if id(row) in outer and len(numbers) == len(row):
                drop.update(row)
            if band is None:
                continue
            running = recurs(band, " ".join(segments[i].text for i in row))
            if running or len(numbers) == len(row):
                drop.update(row)
            elif numbers and id(row) in outer and (row[0] in numbers or row[-1] in numbers):
                drop.update(row)
            else:
                drop.update(i for i in row if recurs(band, segments[i].text))
        result.append(drop)
    in_place = repeated_in_place([[(s.text, s.box) for s in page] for page in pages], sizes, bodies, rule)
    return [drop | again for drop, again in zip(result, in_place)]


def repeated_in_place(
    pages: Sequence[Sequence[tuple[str, Box]]],
    sizes: Sequence[Size],
    bodies: Sequence[str],
    rule: FurnitureRule = FurnitureRule(),
) -> list[set[int]]:
    """For each page, the indices of its ``(text, box)`` items whose exact text stands at the
    same place on another page with a different body: repetition by the page's template."""
    places: dict[str, list[tuple[int, int, Box]]] = defaultdict(list)
    for page_no, items in enumerate(pages):
        for index, (text, box) in enumerate(items):
            if sum(ch.isalpha() for ch in text) >= rule.min_letters:
                places[re.sub(r"\s+", " ", text).strip().lower()].append((page_no, index, box))
    result: list[set[int]] = [set() for _ in pages]
    for found in places.values():
        for page_no, index, box in found:
            size = sizes[page_no]
            if any(
                bodies[other] != bodies[page_no]
                and abs(box.l - where.l) <= rule.same_place * size.width
                and abs(box.t - where.t) <= rule.same_place * size.height
                for other, _, where in found
                if other != page_no
            ):
                result[page_no].add(index)
    return result


def _band(segments: Sequence[Segment], row: list[int], size: Size, rule: FurnitureRule) -> str | None:
    top = min(segments[i].box.t for i in row)
    bottom = max(segments[i].box.b for i in row)
    if bottom <= rule.band * size.height:
        return "top"
    if top >= (1 - rule.band) * size.height:
        return "bottom"
    return None
