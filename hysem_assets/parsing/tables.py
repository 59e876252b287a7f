"""A table's text cells into a grid.

Rows are bands of cells chained by vertical overlap, so a cell of two lines, or one
centred across two lines of its neighbours, stays in its row. Columns come from the rows
with the most cells, whose extents leave white channels between columns. A cell that spans
several columns (a grouped header) goes to the column it overlaps most, and the first row
is taken as the header, as it is in nearly every table of a paper.
"""

from __future__ import annotations

from collections.abc import Sequence

from docling_core.types.doc import TableCell, TableData

from hysem_assets.parsing.geometry import Box
from hysem_assets.parsing.lines import group_rows, row_bands

Cell = tuple[str, Box]


def column_spans(rows: Sequence[Sequence[Box]]) -> list[tuple[float, float]]:
    """Horizontal extents of the columns, read off the rows that have the most cells."""
    widest = max(len(row) for row in rows)
    spans = sorted((box.l, box.r) for row in rows if len(row) == widest for box in row)
    columns = [list(spans[0])]
    for left, right in spans[1:]:
        if left <= columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], right)
        else:
            columns.append([left, right])
    return [(left, right) for left, right in columns]


def _column(box: Box, columns: list[tuple[float, float]]) -> int:
    overlaps = [min(box.r, right) - max(box.l, left) for left, right in columns]
    best = max(range(len(columns)), key=lambda k: overlaps[k])
    if overlaps[best] > 0:
        return best
    return min(range(len(columns)), key=lambda k: abs((columns[k][0] + columns[k][1]) / 2 - box.cx))


def _join_wrapped(rows: list[list[int]], cells: Sequence[Cell], columns: list[tuple[float, float]]) -> list[list[int]]:
    """Merge a row into its neighbour when it only continues that row's cells.

    A cell whose text wraps, or a header cell set over two lines, leaves a row that fills
    no column its neighbour leaves empty, closer to it than rows are to each other.
    """
    if len(rows) < 3:
        return rows
    boxes = [Box.around(cells[i][1] for i in row) for row in rows]
    gaps = sorted(b.t - a.b for a, b in zip(boxes, boxes[1:]))
    typical = gaps[len(gaps) // 2]
    merged = [list(rows[0])]
    filled = [{_column(cells[i][1], columns) for i in row} for row in rows]
    last = 0
    for k in range(1, len(rows)):
        near = boxes[k].t - boxes[k - 1].b < 0.5 * typical
        if near and (filled[k] <= filled[last] or filled[last] <= filled[k]) and filled[k] != filled[last]:
            merged[-1].extend(rows[k])
            filled[last] = filled[last] | filled[k]
        else:
            merged.append(list(rows[k]))
            last = k
    return merged


def table_data(cells: Sequence[Cell]) -> TableData:
    """The grid of a table given its cells' text and boxes (top-left origin)."""
    rows = row_bands(range(len(cells)), lambda i: cells[i][1])
    columns = column_spans([[cells[i][1] for i in row] for row in rows])
    rows = _join_wrapped(rows, cells, columns)
    grid: dict[tuple[int, int], list[Cell]] = {}
    for r, row in enumerate(rows):
        for i in row:
            text, box = cells[i]
            grid.setdefault((r, _column(box, columns)), []).append((text.strip(), box))
    return TableData(
        num_rows=len(rows),
        num_cols=len(columns),
        table_cells=[
            TableCell(
                text=_cell_text(parts),
                start_row_offset_idx=r,
                end_row_offset_idx=r + 1,
                start_col_offset_idx=c,
                end_col_offset_idx=c + 1,
                column_header=r == 0,
            )
            for (r, c), parts in sorted(grid.items())
        ],
    )


def _cell_text(parts: Sequence[Cell]) -> str:
    """A cell's text line by line, each line left to right: a bullet set a little lower than its
    words still leads them."""
    lines = group_rows(parts, lambda part: part[1])
    return " ".join(text for line in lines for text, _ in sorted(line, key=lambda part: part[1].l))
