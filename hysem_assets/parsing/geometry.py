"""Axis-aligned boxes in page points with the origin at the top left.

Docling's ``BoundingBox`` is a pydantic model that carries its own origin; page layout
compares thousands of boxes, so the reconstruction works on this small value type and
converts at the edges.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from docling_core.types.doc import BoundingBox, CoordOrigin
from docling_core.types.doc.page import BoundingRectangle

#: Radians from a quarter turn within which text counts as sideways.
SIDEWAYS_TOLERANCE = 0.3


def is_sideways(rect: BoundingRectangle) -> bool:
    """True for a cell set at a quarter turn, either way (up or down the page)."""
    turns = rect.angle / (math.pi / 2)
    return round(turns) % 2 == 1 and abs(turns - round(turns)) * math.pi / 2 <= SIDEWAYS_TOLERANCE


@dataclass(frozen=True, slots=True)
class Box:
    l: float  # noqa: E741 - the usual name for a box's left edge
    t: float
    r: float
    b: float

    @property
    def width(self) -> float:
        return self.r - self.l

    @property
    def height(self) -> float:
        return self.b - self.t

    @property
    def area(self) -> float:
        return max(self.width, 0.0) * max(self.height, 0.0)

    @property
    def cx(self) -> float:
        return (self.l + self.r) / 2

    @property
    def cy(self) -> float:
        return (self.t + self.b) / 2

    def union(self, other: Box) -> Box:
        return Box(min(self.l, other.l), min(self.t, other.t), max(self.r, other.r), max(self.b, other.b))

    def h_overlap(self, other: Box) -> float:
        """Length of the shared horizontal extent (negative: the gap between them)."""
        return min(self.r, other.r) - max(self.l, other.l)

    def v_overlap(self, other: Box) -> float:
        """Length of the shared vertical extent (negative: the gap between them)."""
        return min(self.b, other.b) - max(self.t, other.t)

    def contains_point(self, x: float, y: float) -> bool:
        return self.l <= x <= self.r and self.t <= y <= self.b

    def to_bbox(self) -> BoundingBox:
        return BoundingBox(l=self.l, t=self.t, r=self.r, b=self.b, coord_origin=CoordOrigin.TOPLEFT)

    @classmethod
    def around(cls, boxes: Iterable[Box]) -> Box:
        boxes = list(boxes)
        return cls(min(b.l for b in boxes), min(b.t for b in boxes), max(b.r for b in boxes), max(b.b for b in boxes))

    @classmethod
    def from_rect(cls, rect: BoundingRectangle, page_height: float) -> Box:
        """The box around a (possibly rotated) cell rectangle; read off its corners, which is
        much cheaper than converting through Docling's models for every cell of a page."""
        xs = (rect.r_x0, rect.r_x1, rect.r_x2, rect.r_x3)
        ys = (rect.r_y0, rect.r_y1, rect.r_y2, rect.r_y3)
        if rect.coord_origin == CoordOrigin.BOTTOMLEFT:
            return cls(min(xs), page_height - max(ys), max(xs), page_height - min(ys))
        return cls(min(xs), min(ys), max(xs), max(ys))

    @classmethod
    def from_bbox(cls, bbox: BoundingBox, page_height: float) -> Box:
        top_left = bbox.to_top_left_origin(page_height=page_height)
        return cls(top_left.l, min(top_left.t, top_left.b), top_left.r, max(top_left.t, top_left.b))
