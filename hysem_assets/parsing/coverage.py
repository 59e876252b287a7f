"""The reconstruction may join, relabel and place Docling's lines, but never lose or break one.

Docling's native output is one paragraph per text line of the PDF, in the parser's order.
Each of those lines is looked up in the page's reconstructed clusters (letters and digits
only, so re-spacing, re-joined hyphens and merged lines still match). Per page:

- a line that is not there, and that no named rule removed (line numbers, running headers
  and footers), is put back after the cluster holding the line before it: labels drawn
  inside a figure, for one;
- a line whose words are all in one text cluster but not as one run was broken: the
  reconstruction mixed it with another line (two lines of a column chained into one row).
  So were two lines of one cluster that stand side by side on one baseline without
  following each other in Docling's order (two columns joined into one paragraph). Such a
  cluster is replaced by the Docling lines it holds, in Docling's order (joined into
  paragraphs only within a column); where more than a few of the page's lines are broken,
  Docling's lines become the whole page (less what the named rules removed);
- a figure or table placed between two lines that follow each other in Docling's order
  goes after the paragraph they belong to;
- where most lines come out in a different order than Docling's, the page's clusters are
  put back in Docling's order.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate

from docling.datamodel.base_models import Cluster
from docling_core.types.doc import BoundingBox, DocItemLabel
from docling_core.types.doc.page import TextCell

from hysem_assets.parsing.geometry import Box

#: Lines with fewer letters and digits than this are too short to place (stray numbers, marks):
#: they are counted as dropped under ``SHORT_FRAGMENTS``, not put back.
MIN_KEY = 3
SHORT_FRAGMENTS = "fragments too short to place"
#: Below this share of lines in Docling's order (longest increasing run), Docling's order wins.
ORDER_AGREEMENT = 0.5
#: Fewer placed lines than this say nothing about a page's order.
MIN_PLACED = 4
#: Above this share of broken lines (of the lines checked), Docling's lines replace the whole page;
#: below it, they replace each cluster that broke a line.
BROKEN_SHARE = 0.05
#: ... and only from this many broken lines on.
MIN_BROKEN = 2
#: Clusters that split a line on purpose: a table's cells, an equation beside its number.
SPLIT_BY_DESIGN = frozenset({DocItemLabel.TABLE, DocItemLabel.FORMULA})
#: Two lines of one cluster on one baseline, this many line heights apart or more, and not one
#: after the other in Docling's order, stand in two columns (a space between words is about 0.25).
SIDE_GAP = 0.3
#: Running text, and the floats (with their captions) that may stand inside it on the page.
PROSE = frozenset({DocItemLabel.TEXT, DocItemLabel.LIST_ITEM})
FLOATS = frozenset({DocItemLabel.PICTURE, DocItemLabel.TABLE, DocItemLabel.CAPTION})
#: At most this many clusters (a figure, its panels, labels and caption) stand between a paragraph's parts.
MAX_FLOAT_RUN = 12
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
    #: Lines checked (long enough, not removed by a rule) and lines found broken among them.
    checked: int = 0
    broken: int = 0

    @property
    def docling_lines(self) -> bool:
        """True when the reconstruction broke enough lines that Docling's own lines replaced the page."""
        return self.broken >= MIN_BROKEN and self.broken > BROKEN_SHARE * self.checked


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


@dataclass
class _Located:
    """Where each of Docling's lines stands among the page's clusters."""

    placed: list[tuple[int, int]] = field(default_factory=list)  # (line, position in the page's key), found whole
    missing: list[tuple[int, Cluster | None]] = field(default_factory=list)  # (line, cluster it follows)
    held: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))  # cluster -> its lines
    broken: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # cluster -> lines it broke
    short: int = 0


def _locate(
    lines: Sequence[TextCell], clusters: list[Cluster], removed: Sequence[str], page_height: float
) -> tuple[_Located, list[int], Callable[[str], bool]]:
    """Each line found whole, broken inside a cluster, removed by a rule or missing; with the
    clusters' start offsets in the page's key, and the test for a line a rule removed."""
    cluster_keys = ["".join(key(cell.text) for cell in cluster.cells) for cluster in clusters]
    starts = [0, *accumulate(map(len, cluster_keys))][:-1]
    page = "".join(cluster_keys)
    cluster_tokens = [set().union(*(_tokens(cell.text) for cell in cluster.cells)) for cluster in clusters]
    ruled_key = "".join(key(text) for text in removed)
    ruled_tokens = set().union(*(_tokens(text) for text in removed))

    def ruled(text: str) -> bool:
        line_key = key(text)
        return bool(line_key) and (line_key in ruled_key or _tokens(text) <= ruled_tokens)

    found = _Located()
    cursor = 0
    anchor: Cluster | None = None
    for index, line in enumerate(lines):
        line_key = key(line.text)
        if len(line_key) < MIN_KEY:
            found.short += bool(line_key)
            continue
        at = page.find(line_key, cursor)
        if at < 0:
            at = page.find(line_key)
        if at >= 0:
            found.placed.append((index, at))
            k = bisect_right(starts, at) - 1
            found.held[k].append(index)
            anchor = clusters[k]
            cursor = at + len(line_key)
        elif ruled(line.text):
            continue
        elif (holder := _holder(line.text, cluster_tokens)) is not None:
            found.held[holder].append(index)
            if clusters[holder].label not in SPLIT_BY_DESIGN:
                found.broken[holder].add(index)
        else:
            found.missing.append((index, anchor))
    for k, held in found.held.items():
        beside = _side_by_side(held, lines, page_height) if clusters[k].label not in SPLIT_BY_DESIGN else []
        if beside:
            found.broken[k].update(beside)
    return found, starts, ruled


def cover(
    lines: Sequence[TextCell],
    clusters: list[Cluster],
    removed: Sequence[str],
    page_height: float,
    check_lines: bool = True,
) -> tuple[list[Cluster], PageCoverage]:
    """The page's clusters with every missing Docling line put back and every broken one mended,
    in Docling's order if the two disagree; or Docling's own lines when too many were broken.

    ``lines`` are the page's text-line cells as Docling's native output has them;
    ``removed`` the texts that named rules took out on purpose. ``check_lines`` off skips the
    broken-line check: for right-to-left text, whose lines Docling keeps in visual order, and
    for OCR, whose cells are words in the engine's order.
    """
    found, starts, ruled = _locate(lines, clusters, removed, page_height)
    if not check_lines:
        found.broken.clear()
    broken = sum(map(len, found.broken.values()))
    coverage = PageCoverage(
        short_fragments=found.short, checked=len(found.placed) + broken + len(found.missing), broken=broken
    )
    if coverage.docling_lines:
        kept = [line for line in lines if line.text.strip() and not ruled(line.text)]
        return docling_paragraphs(kept, page_height), coverage
    mended = {
        id(clusters[k]): docling_paragraphs([lines[i] for i in sorted(found.held[k])], page_height)
        for k in found.broken
    }
    spans = {id(clusters[k]): (min(held), max(held)) for k, held in found.held.items() if held}
    positions = [pos for _, pos in found.placed]
    docling_order = len(positions) >= MIN_PLACED and _longest_run(positions) < ORDER_AGREEMENT * len(positions)
    if docling_order:
        first_line: dict[int, int] = {}
        for index, pos in found.placed:
            k = bisect_right(starts, pos) - 1
            first_line[k] = min(first_line.get(k, index), index)
        clusters = _docling_ordered(clusters, first_line)
    restored = _restored(clusters, lines, found.missing)
    placed = sorted(index for index, _ in found.placed)
    result = _mended(_floats_after_paragraphs(restored, spans, placed), mended)
    return result, replace(coverage, restored=len(found.missing), docling_order=docling_order)


def _floats_after_paragraphs(
    clusters: list[Cluster], spans: dict[int, tuple[int, int]], placed: Sequence[int]
) -> list[Cluster]:
    """A figure or table the layout put between two lines that follow each other in Docling's
    order (a paragraph running on past the float, often into the next column) goes after the
    paragraph's second part, so that no sentence is cut by a float.

    ``spans`` gives the first and last Docling line each cluster holds; ``placed`` the indices of
    the Docling lines found, in order.
    """
    result = list(clusters)
    for p in range(len(result)):
        span = spans.get(id(result[p]))
        if span is None or result[p].label not in PROSE:
            continue
        after = bisect_right(placed, span[1])
        following = placed[after] if after < len(placed) else None
        for q in range(p + 2, min(p + 2 + MAX_FLOAT_RUN, len(result))):
            run = result[p + 1 : q]
            if result[q].label in PROSE and spans.get(id(result[q]), (None,))[0] == following:
                if any(c.label in FLOATS for c in run) and all(c.label in FLOATS | PROSE for c in run):
                    result[p + 1 : q + 1] = [result[q], *run]
                break
    return result


def _mended(clusters: list[Cluster], mended: dict[int, list[Cluster]]) -> list[Cluster]:
    """``clusters`` with each broken one replaced by its Docling lines, the new clusters given free ids."""
    if not mended:
        return clusters
    next_id = max(c.id for c in clusters) + 1
    result: list[Cluster] = []
    for cluster in clusters:
        for replacement in mended.get(id(cluster), []):
            result.append(replacement.model_copy(update={"id": next_id}))
            next_id += 1
        if id(cluster) not in mended:
            result.append(cluster)
    return result


def _continues(previous: Box, line: Box) -> bool:
    """``line`` goes on the paragraph of the line above it: directly below, same left edge, same size."""
    height = max(previous.height, 1e-6)
    return (
        -0.3 * height <= line.t - previous.b <= 0.8 * height
        and abs(line.l - previous.l) <= 2 * height
        and 0.75 <= line.height / height <= 1.33
    )


def docling_paragraphs(lines: Sequence[TextCell], page_height: float) -> list[Cluster]:
    """Docling's lines in Docling's order as text clusters, a line joining the one before it
    when it sits directly below it, in the same column: never a line of another column."""
    groups: list[list[TextCell]] = []
    previous: Box | None = None
    for line in lines:
        box = Box.from_rect(line.rect, page_height)
        if previous is not None and _continues(previous, box):
            groups[-1].append(line)
        else:
            groups.append([line])
        previous = box
    return [_cluster(k, group) for k, group in enumerate(groups)]


def _side_by_side(held: Sequence[int], lines: Sequence[TextCell], page_height: float) -> list[int]:
    """The lines of one cluster that stand beside another of its lines, across a gap wider than
    a space, without following it in Docling's order: two columns merged into one paragraph."""
    boxes = {i: Box.from_rect(lines[i].rect, page_height) for i in held}
    found: set[int] = set()
    for i in held:
        for j in held:
            a, b = boxes[i], boxes[j]
            height = min(a.height, b.height)
            if i + 1 < j and a.v_overlap(b) >= 0.5 * height and -a.h_overlap(b) >= SIDE_GAP * height:
                found.update((i, j))
    return sorted(found)


def _holder(text: str, cluster_tokens: list[set[str]]) -> int | None:
    """The cluster holding every word of a line that is not there as one run, if one does:
    the line was not lost but broken inside that cluster (mixed with the words of another
    line). Words scattered over the page do not count: a figure's label reuses the body's words."""
    words = _tokens(text)
    return next((k for k, tokens in enumerate(cluster_tokens) if words and words <= tokens), None)


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
            result.append(_cluster(next_id, run))
            next_id += 1
    return result


def _cluster(cluster_id: int, lines: Sequence[TextCell]) -> Cluster:
    """One text cluster of ``lines``."""
    cells = [cell.model_copy(update={"index": k}) for k, cell in enumerate(lines)]
    bbox = BoundingBox.enclosing_bbox([cell.rect.to_bounding_box() for cell in cells])
    return Cluster(id=cluster_id, label=DocItemLabel.TEXT, bbox=bbox, cells=cells)
