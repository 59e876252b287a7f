"""The reconstruction may reorder, merge and relabel Docling's lines, but never lose one.

Docling's native output is one paragraph per text line of the PDF, in the parser's order.
Each of those lines is looked up in the page's reconstructed clusters (letters and digits
only, so re-spacing, re-joined hyphens and merged lines still match). A line that is not
there, and that no named rule removed (line numbers, running headers and footers), is put
back after the cluster holding the line before it: labels drawn inside a figure, for one. Where most
lines come out of the reconstruction in a different order than Docling's, the page's
clusters are put back in Docling's order.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from docling.datamodel.base_models import Cluster
from docling_core.types.doc import BoundingBox, DocItemLabel
from docling_core.types.doc.page import TextCell

#: Lines with fewer letters and digits than this are too short to place (stray numbers, marks):
#: they are counted as dropped under ``SHORT_FRAGMENTS``, not put back.
MIN_KEY = 3
SHORT_FRAGMENTS = "fragments too short to place"
#: Below this share of lines in Docling's order (longest increasing run), Docling's order wins.
ORDER_AGREEMENT = 0.5
#: Fewer placed lines than this say nothing about a page's order.
MIN_PLACED = 4
TOKEN = re.compile(r"[^\W_]+")


def key(text: str) -> str:
    """Letters and digits only, case-folded: what survives any re-spacing of a line."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def _tokens(text: str) -> set[str]:
    return set(TOKEN.findall(unicodedata.normalize("NFKC", text).casefold()))


@dataclass(frozen=True)
class PageCoverage:
    """What the check did to one page."""

    restored: int = 0
    docling_order: bool = False
    short_fragments: int = 0


def _longest_run(values: Sequence[int]) -> int:
    tails: list[int] = []
    for value in values:
        k = bisect_right(tails, value)
        tails[k : k + 1] = [value]
    return len(tails)


def _docling_ordered(clusters: list[Cluster], first_line: dict[int, int]) -> list[Cluster]:
    """Clusters sorted by the first Docling line they hold; the rest stay behind their predecessor."""
    ranks: list[float] = []
    last = -1.0
    for k in range(len(clusters)):
        last = float(first_line[k]) if k in first_line else last + 1e-6
        ranks.append(last)
    return [cluster for _, cluster in sorted(zip(ranks, clusters), key=lambda pair: pair[0])]


def cover(
    lines: Sequence[TextCell], clusters: list[Cluster], removed: Sequence[str]
) -> tuple[list[Cluster], PageCoverage]:
    """The page's clusters with every missing Docling line put back, in Docling's order if the two disagree.

    ``lines`` are the page's text-line cells as Docling's native output has them;
    ``removed`` the texts that named rules took out on purpose.
    """
    cluster_keys = ["".join(key(cell.text) for cell in cluster.cells) for cluster in clusters]
    starts: list[int] = []
    offset = 0
    for cluster_key in cluster_keys:
        starts.append(offset)
        offset += len(cluster_key)
    page = "".join(cluster_keys)
    cluster_tokens = [set().union(*(_tokens(cell.text) for cell in cluster.cells)) for cluster in clusters]
    ruled = "".join(key(text) for text in removed)
    ruled_tokens = set().union(*(_tokens(text) for text in removed))
    cursor = 0
    placed: list[tuple[int, int]] = []  # (line index, position in the page's key)
    missing: list[tuple[int, Cluster | None]] = []  # (line index, cluster it follows; None: page start)
    anchor: Cluster | None = None
    short = 0
    for index, line in enumerate(lines):
        line_key = key(line.text)
        if len(line_key) < MIN_KEY:
            short += bool(line_key)
            continue
        found = page.find(line_key, cursor)
        if found < 0:
            found = page.find(line_key)
        if found >= 0:
            placed.append((index, found))
            anchor = clusters[bisect_right(starts, found) - 1]
            cursor = found + len(line_key)
        elif not (line_key in ruled or _tokens(line.text) <= ruled_tokens or _reflowed(line.text, cluster_tokens)):
            missing.append((index, anchor))
    docling_order = len(placed) >= MIN_PLACED and (
        _longest_run([pos for _, pos in placed]) < ORDER_AGREEMENT * len(placed)
    )
    if docling_order:
        first_line: dict[int, int] = {}
        for index, pos in placed:
            k = bisect_right(starts, pos) - 1
            first_line[k] = min(first_line.get(k, index), index)
        clusters = _docling_ordered(clusters, first_line)
    coverage = PageCoverage(restored=len(missing), docling_order=docling_order, short_fragments=short)
    return _restored(clusters, lines, missing), coverage


def _reflowed(text: str, cluster_tokens: list[set[str]]) -> bool:
    """Every word of the line stands in one cluster: the line was re-flowed inside that
    paragraph (a hyphen re-joined, words re-spaced), not lost. Words scattered over the
    page do not count: a figure's label reuses the body's words."""
    words = _tokens(text)
    return bool(words) and any(words <= tokens for tokens in cluster_tokens)


def _restored(
    clusters: list[Cluster], lines: Sequence[TextCell], missing: list[tuple[int, Cluster | None]]
) -> list[Cluster]:
    """``clusters`` with each run of missing lines inserted as one paragraph after the cluster it follows."""
    runs: dict[int | None, list[list[TextCell]]] = {}
    previous: tuple[int, Cluster | None] | None = None
    for index, anchor in missing:
        slot = runs.setdefault(None if anchor is None else id(anchor), [])
        if previous is not None and previous[0] == index - 1 and previous[1] is anchor:
            slot[-1].append(lines[index])
        else:
            slot.append([lines[index]])
        previous = (index, anchor)
    if not runs:
        return clusters
    next_id = max((c.id for c in clusters), default=-1) + 1
    result: list[Cluster] = []
    for anchor in [None, *clusters]:
        if anchor is not None:
            result.append(anchor)
        for run in runs.get(None if anchor is None else id(anchor), []):
            cells = [cell.model_copy(update={"index": k}) for k, cell in enumerate(run)]
            bbox = BoundingBox.enclosing_bbox([cell.rect.to_bounding_box() for cell in cells])
            result.append(Cluster(id=next_id, label=DocItemLabel.TEXT, bbox=bbox, cells=cells))
            next_id += 1
    return result
