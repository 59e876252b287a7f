"""Sideways text: stamps and notes set up a page's side, and labels turned a quarter.

A download stamp running up the margin ("Downloaded from … on July 12, 2017"), a licence
note or a preprint's identifier is set at a quarter turn. Left among the page's rows, its
tall word boxes overlap many lines at once and can chain them into one row, which reads
two lines word by word. So sideways words stay out of the layout, unless most of the page
is sideways (a page set in landscape); the coverage check puts back those that carry
content, such as a turned table header. Sideways lines wholly beside the upright text, in
a side margin, or repeated at the same place on other pages, are page furniture.
"""

from __future__ import annotations

from collections.abc import Sequence

from docling_core.types.doc import Size
from docling_core.types.doc.page import TextCell

from hysem_assets.parsing.furniture import repeated_in_place
from hysem_assets.parsing.geometry import Box, is_sideways
from hysem_assets.parsing.words import Word

#: A page with at least this share of its characters sideways is turned as a whole: all of it is laid out.
TURNED_PAGE = 0.5


def upright_words(words: Sequence[Word]) -> list[Word]:
    """The words the layout reads: all but the sideways ones, or all on a page that is mostly sideways."""
    sideways = sum(len(w.text) for w in words if w.sideways)
    if sideways >= TURNED_PAGE * sum(len(w.text) for w in words):
        return list(words)
    return [w for w in words if not w.sideways]


def sideways_furniture(
    lines: Sequence[Sequence[TextCell]], upright: Sequence[Sequence[Word]], sizes: Sequence[Size]
) -> list[list[TextCell]]:
    """Per page, the sideways lines that are furniture: those wholly left or right of every
    upright word (stamps and margin notes), and those repeated at the same place on other pages.
    ``upright`` is what :func:`upright_words` kept of each page: a turned page, whose sideways
    words it kept, has no sideways furniture."""
    sideways = [
        [line for line in page if is_sideways(line.rect)] if not any(w.sideways for w in words) else []
        for page, words in zip(lines, upright)
    ]
    boxes = [[Box.from_rect(line.rect, size.height) for line in page] for page, size in zip(sideways, sizes)]
    bodies = [" ".join(w.text for w in words) for words in upright]
    again = repeated_in_place(
        [[(line.text, box) for line, box in zip(page, page_boxes)] for page, page_boxes in zip(sideways, boxes)],
        sizes,
        bodies,
    )
    found = []
    for page, page_boxes, words, repeated in zip(sideways, boxes, upright, again):
        left = min((w.box.l for w in words), default=0.0)
        right = max((w.box.r for w in words), default=0.0)
        found.append(
            [
                line
                for k, (line, box) in enumerate(zip(page, page_boxes))
                if k in repeated or (words and (box.r <= left or box.l >= right))
            ]
        )
    return found
