"""The native reconstruction: a parsed PDF's text cells into a structured document.

Per page: line numbers out, sideways words out of the layout (those in the side margins or
repeated in place are furniture), words into segments, running headers and footers out
(decided across all pages), the page cut into regions in reading order, each region into
blocks, blocks named, then the same cluster corrections the standard pipeline gets
(multi-line equations joined, page-sized sparse tables read as text), every line of
Docling's own output checked to be there and unbroken (``coverage``), and finally one
``DoclingDocument``. What the named rules removed (the page furniture) is listed in a
``Reconstruction`` report beside the document.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from docling.datamodel.base_models import Cluster, Page
from docling_core.types.doc import DocItemLabel, DoclingDocument, DocumentOrigin, Size

from hysem_assets.parsing.assemble import block_cluster, build_document
from hysem_assets.parsing.blocks import Block, BodyStyle, label_blocks, region_blocks
from hysem_assets.parsing.clusters import merge_formula_clusters, relabel_sparse_tables
from hysem_assets.parsing.columns import reading_regions
from hysem_assets.parsing.coverage import SHORT_FRAGMENTS, cover
from hysem_assets.parsing.furniture import running_furniture
from hysem_assets.parsing.geometry import Box
from hysem_assets.parsing.line_numbers import strip_line_numbers
from hysem_assets.parsing.lines import Segment, is_rtl, page_segments
from hysem_assets.parsing.margins import sideways_furniture, upright_words
from hysem_assets.parsing.text import vocabulary
from hysem_assets.parsing.words import Word, page_words

#: Bitmaps narrower or lower than this share of the page are bullets, rules and specks.
MIN_PICTURE = 0.04
#: Bitmaps covering this share of the page are backgrounds (or a scan under its text layer).
BACKGROUND_PICTURE = 0.8


def _pictures(page: Page) -> tuple[list[Box], list[Box]]:
    """The page's bitmaps, clipped to the page: (inline figures, backgrounds)."""
    size = page.size
    inline: list[Box] = []
    background: list[Box] = []
    for bitmap in page.parsed_page.bitmap_resources if page.parsed_page else []:
        raw = Box.from_rect(bitmap.rect, size.height)
        box = Box(max(raw.l, 0.0), max(raw.t, 0.0), min(raw.r, size.width), min(raw.b, size.height))
        if box.width < MIN_PICTURE * size.width or box.height < MIN_PICTURE * size.height:
            continue
        target = background if box.area >= BACKGROUND_PICTURE * size.width * size.height else inline
        target.append(box)
    return inline, background


def _inside_picture(segment: Segment, pictures: Sequence[Box], style: BodyStyle) -> bool:
    """Labels drawn over a figure: small text lying within a bitmap's box."""
    box = segment.box
    return segment.height < style.height and any(
        max(box.h_overlap(p), 0.0) * max(box.v_overlap(p), 0.0) >= 0.8 * box.area for p in pictures
    )


def _region_of(picture: Box, regions: Sequence[Box]) -> int | None:
    """The region a figure belongs to: the one sharing most of its width, nearest vertically."""
    if not regions:
        return None
    return max(
        range(len(regions)),
        key=lambda k: (
            regions[k].h_overlap(picture) > 0.5 * picture.width,
            -max(regions[k].t - picture.b, picture.t - regions[k].b, 0.0),
            regions[k].h_overlap(picture),
        ),
    )


def _with_pictures(blocks: list[Block], pictures: list[Box]) -> list[Block]:
    """Pictures slotted in before the first block that starts below them."""
    result = list(blocks)
    for picture in sorted(pictures, key=lambda p: p.t):
        position = next((k for k, block in enumerate(result) if block.box.t > picture.t), len(result))
        result.insert(position, Block(DocItemLabel.PICTURE, [[Segment((), picture)]]))
    return result


def page_clusters(
    text: Sequence[Segment],
    pictures: Sequence[Box],
    background: Sequence[Box],
    size: Size,
    style: BodyStyle,
    rtl: bool,
    first_page: bool,
) -> list[Cluster]:
    """One page's clusters in reading order."""
    regions = reading_regions(text, rtl)
    boxes = [Box.around(s.box for s in region) for region in regions]
    placed: dict[int | None, list[Box]] = {}
    for picture in pictures:
        placed.setdefault(_region_of(picture, boxes), []).append(picture)
    blocks = [Block(DocItemLabel.PICTURE, [[Segment((), box)]]) for box in background]
    for k, region in enumerate(regions):
        blocks.extend(_with_pictures(region_blocks(region, style, rtl), placed.get(k, [])))
    blocks.extend(_with_pictures([], placed.get(None, [])))
    label_blocks(blocks, style, first_page, size.height)
    clusters = [block_cluster(block, k) for k, block in enumerate(blocks)]
    return relabel_sparse_tables(merge_formula_clusters(clusters, size), size)


#: Names of the rules that take page furniture out, as ``Reconstruction.furniture`` gives them.
LINE_NUMBERS = "line numbers"
RUNNING = "running headers, footers and page numbers"
MARGIN = "margin stamps and notes"


@dataclass(frozen=True)
class Reconstruction:
    """What the reconstruction did besides building the document."""

    #: Lines removed on purpose, by the rule that removed them.
    dropped: dict[str, int] = field(default_factory=dict)
    #: Lines of Docling's output the layout steps lost, put back by the coverage check.
    restored: int = 0
    #: Pages kept in Docling's reading order because the reconstruction's disagreed strongly.
    docling_order_pages: int = 0
    #: Pages given Docling's own lines because the reconstruction broke some of them.
    docling_pages: int = 0
    #: The page furniture taken out, for provenance: ``{"page", "rule", "text"}`` per line.
    furniture: list[dict[str, object]] = field(default_factory=list)


def reconstruct(
    pages: Sequence[Page], name: str, origin: DocumentOrigin | None = None
) -> tuple[DoclingDocument, Reconstruction]:
    """A structured document from pages that carry their parsed text cells, and what it took."""
    usable = [page for page in pages if page.parsed_page is not None and page.size is not None]
    native_lines = [list(page.parsed_page.textline_cells) for page in usable]
    sizes = [page.size for page in usable]
    furniture: list[dict[str, object]] = []
    upright: list[list[Word]] = []
    for page, lines in zip(usable, native_lines):
        strip_line_numbers(page.parsed_page, page.size)
        kept = {id(cell) for cell in page.parsed_page.textline_cells}
        furniture += [_furniture(page, LINE_NUMBERS, cell.text) for cell in lines if id(cell) not in kept]
        upright.append(upright_words(page_words(page.parsed_page, page.size)))
    margins = sideways_furniture([page.parsed_page.textline_cells for page in usable], upright, sizes)
    for page, lines in zip(usable, margins):
        furniture += [_furniture(page, MARGIN, cell.text) for cell in lines]
    segments = [page_segments(words) for words in upright]
    skip = running_furniture(segments, sizes)
    body = [[s for k, s in enumerate(on_page) if k not in drop] for on_page, drop in zip(segments, skip)]
    for page, on_page, drop in zip(usable, segments, skip):
        furniture += [_furniture(page, RUNNING, on_page[k].text) for k in sorted(drop)]
    removed: dict[int, list[str]] = {}
    for item in furniture:
        removed.setdefault(int(item["page"]), []).append(str(item["text"]))
    dropped = Counter(str(item["rule"]) for item in furniture)
    style = BodyStyle.of([s for page in body for s in page])
    rtl = is_rtl("".join(s.text for page in body for s in page))
    known = vocabulary(w.text for page in body for s in page for w in s.words)
    built = []
    restored = docling_order_pages = docling_pages = 0
    for index, (page, page_body) in enumerate(zip(usable, body)):
        inline, background = _pictures(page)
        # Labels drawn over a figure stay out of the layout; the coverage check keeps their text.
        text = [s for s in page_body if not _inside_picture(s, inline, style)]
        clusters = page_clusters(text, inline, background, page.size, style, rtl, first_page=index == 0)
        # Docling's lines are the base only where they are the PDF's lines: not OCR words, not visual-order RTL.
        ocr = any(cell.from_ocr for cell in native_lines[index])
        clusters, coverage = cover(
            native_lines[index], clusters, removed.get(page.page_no, []), page.size.height, check_lines=not (rtl or ocr)
        )
        restored += coverage.restored
        docling_order_pages += coverage.docling_order
        docling_pages += coverage.docling_lines
        dropped[SHORT_FRAGMENTS] += coverage.short_fragments
        built.append((page.page_no, page.size, clusters))
    report = Reconstruction(
        dropped={rule: n for rule, n in dropped.items() if n},
        restored=restored,
        docling_order_pages=docling_order_pages,
        docling_pages=docling_pages,
        furniture=furniture,
    )
    return build_document(name, origin, built, known), report


def _furniture(page: Page, rule: str, text: str) -> dict[str, object]:
    return {"page": page.page_no, "rule": rule, "text": text}
