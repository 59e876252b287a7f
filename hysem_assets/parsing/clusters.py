"""Corrections to layout clusters that layout models (and our own native layout) get wrong.

They take and return Docling's own ``Cluster`` objects, so the same functions run after
Docling's layout post-processing in the standard pipeline and on the clusters the native
reconstruction builds. Boxes are top-left based, as Docling's layout stage makes them.

- A displayed equation set over several lines often comes back as one formula cluster per
  line; the lines belong together unless each carries its own equation number.
- A table cluster that covers most of a page but holds little text is a misdetection (a
  form, a page of scattered labels); read as a table it scrambles the page, so it becomes
  text.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from docling.datamodel.base_models import Cluster
from docling_core.types.doc import DocItemLabel, Size

from hysem_assets.parsing.geometry import Box

EQUATION_NUMBER = re.compile(r"^\(\s*\d+(?:\.\d+)*[a-z]?\s*\)$")
TRAILING_EQUATION_NUMBER = re.compile(r"\(\s*\d+(?:\.\d+)*[a-z]?\s*\)\s*$")


def cluster_text(cluster: Cluster) -> str:
    return " ".join(cell.text.strip() for cell in cluster.cells if cell.text.strip())


def _box(cluster: Cluster, page_height: float) -> Box:
    return Box.from_bbox(cluster.bbox, page_height)


def equation_number(formula: Cluster, clusters: Sequence[Cluster], page: Size) -> str | None:
    """The number a formula carries: at the end of its own text, or alone on its line to the right."""
    own = TRAILING_EQUATION_NUMBER.search(cluster_text(formula))
    if own:
        return re.sub(r"\s+", "", own.group())
    box = _box(formula, page.height)
    for other in clusters:
        text = cluster_text(other)
        if other is formula or not EQUATION_NUMBER.match(text):
            continue
        number = _box(other, page.height)
        if number.l >= box.cx and box.t <= number.cy <= box.b:
            return re.sub(r"\s+", "", text)
    return None


@dataclass(frozen=True)
class FormulaMerge:
    max_gap: float = 1.0  # vertical gap between the parts, in median text-cell heights


def merge_formula_clusters(
    clusters: Sequence[Cluster], page: Size, rule: FormulaMerge = FormulaMerge()
) -> list[Cluster]:
    """Join vertically adjacent formula clusters into one, unless each has its own equation number.

    Clusters keep their order; a merged formula takes the place of its first part.
    """
    formulas = sorted((c for c in clusters if c.label == DocItemLabel.FORMULA), key=lambda c: _box(c, page.height).t)
    numbers = {id(f): equation_number(f, clusters, page) for f in formulas}
    merged_into: dict[int, Cluster] = {}
    groups: list[list[Cluster]] = []
    for formula in formulas:
        if groups and _continues(groups[-1], formula, clusters, numbers, page, rule):
            groups[-1].append(formula)
        else:
            groups.append([formula])
    for group in groups:
        if len(group) > 1:
            merged = _merged(group, page)
            for part in group:
                merged_into[id(part)] = merged
    result: list[Cluster] = []
    emitted: set[int] = set()
    for cluster in clusters:
        target = merged_into.get(id(cluster), cluster)
        if id(target) not in emitted:
            emitted.add(id(target))
            result.append(target)
    return result


def _continues(
    group: list[Cluster],
    formula: Cluster,
    clusters: Sequence[Cluster],
    numbers: dict[int, str | None],
    page: Size,
    rule: FormulaMerge,
) -> bool:
    above = Box.around(_box(c, page.height) for c in group)
    below = _box(formula, page.height)
    heights = [Box.from_rect(cell.rect, page.height).height for c in (*group, formula) for cell in c.cells]
    line = statistics.median(heights) if heights else min(above.height, below.height)
    if above.h_overlap(below) <= 0 or below.t - above.b > rule.max_gap * line:
        return False
    group_numbers = {numbers[id(c)] for c in group} - {None}
    number = numbers[id(formula)]
    if number is not None and group_numbers and number not in group_numbers:
        return False
    span = Box(min(above.l, below.l), above.b, max(above.r, below.r), below.t)
    return not any(
        other.label != DocItemLabel.FORMULA
        and not EQUATION_NUMBER.match(cluster_text(other))
        and span.h_overlap(_box(other, page.height)) > 0
        and span.t < _box(other, page.height).cy < span.b
        for other in clusters
    )


def _reading_key(box: Box) -> tuple[int, float]:
    return round(box.t), box.l


def _merged(group: list[Cluster], page: Size) -> Cluster:
    box = Box.around(_box(c, page.height) for c in group)
    cells = [cell for c in group for cell in c.cells]
    cells.sort(key=lambda cell: _reading_key(Box.from_rect(cell.rect, page.height)))
    return Cluster(
        id=group[0].id,
        label=DocItemLabel.FORMULA,
        bbox=box.to_bbox(),
        confidence=max(c.confidence for c in group),
        cells=cells,
        children=[child for c in group for child in c.children],
    )


@dataclass(frozen=True)
class SparseTable:
    min_page_share: float = 0.6  # the cluster covers at least this share of the page
    max_fill: float = 0.15  # and its text cells cover less than this share of the cluster


def relabel_sparse_tables(clusters: Sequence[Cluster], page: Size, rule: SparseTable = SparseTable()) -> list[Cluster]:
    """Turn page-sized table clusters that are mostly empty into text clusters."""
    return [
        cluster.model_copy(update={"label": DocItemLabel.TEXT, "children": []})
        if cluster.label == DocItemLabel.TABLE and _page_sized_and_sparse(cluster, page, rule)
        else cluster
        for cluster in clusters
    ]


def _page_sized_and_sparse(cluster: Cluster, page: Size, rule: SparseTable) -> bool:
    box = _box(cluster, page.height)
    if box.area < rule.min_page_share * page.width * page.height:
        return False
    covered = 0.0
    for cell in cluster.cells:
        cell_box = Box.from_rect(cell.rect, page.height)
        covered += max(cell_box.h_overlap(box), 0.0) * max(cell_box.v_overlap(box), 0.0)
    return covered < rule.max_fill * box.area
