"""Clusters in reading order into a ``DoclingDocument``.

Building Docling's own document (rather than writing Markdown directly) gives both
pipelines one output model: the same Markdown serializer, the same tables and formulas
to export, and provenance boxes for every item.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from docling.datamodel.base_models import Cluster
from docling_core.types.doc import (
    ContentLayer,
    DocItemLabel,
    DoclingDocument,
    DocumentOrigin,
    GroupItem,
    ProvenanceItem,
    Size,
    TextItem,
)
from docling_core.types.doc.page import BoundingRectangle, TextCell

from hysem_assets.parsing.blocks import BULLET, SENTENCE_END, Block
from hysem_assets.parsing.geometry import Box
from hysem_assets.parsing.tables import table_data
from hysem_assets.parsing.text import join_lines, normalize

FURNITURE = (DocItemLabel.PAGE_HEADER, DocItemLabel.PAGE_FOOTER)
SECTION_NUMBER = re.compile(r"^(\d{1,2}(?:\.\d{1,2})*)\.?\s")


def block_cluster(block: Block, cluster_id: int) -> Cluster:
    """A block as a Docling layout cluster, one text cell per segment in reading order."""
    cells = [
        TextCell(
            rect=BoundingRectangle.from_bounding_box(segment.box.to_bbox()),
            text=segment.text,
            orig=segment.text,
            from_ocr=False,
            index=k,
        )
        for k, segment in enumerate(block.segments)
    ]
    return Cluster(id=cluster_id, label=block.label, bbox=block.box.to_bbox(), cells=cells)


def heading_level(text: str) -> int:
    """Depth of a numbered heading ("2.1 Data" is 2), 1 when unnumbered."""
    number = SECTION_NUMBER.match(text)
    return min(number.group(1).count(".") + 1, 6) if number else 1


def _strip_bullet(text: str) -> str:
    first, _, rest = text.partition(" ")
    return rest if BULLET.match(first) and rest else text


class _Writer:
    """Appends clusters page by page, keeping lists together and rejoining split paragraphs."""

    def __init__(self, doc: DoclingDocument, known: frozenset[str]):
        self.doc = doc
        self.known = known
        self.list_group: GroupItem | None = None
        self.last_text: TextItem | None = None

    def add(self, cluster: Cluster, page_no: int, size: Size) -> None:
        texts = [cell.text for cell in cluster.cells]
        text = join_lines(texts, self.known)
        prov = ProvenanceItem(
            page_no=page_no, bbox=cluster.bbox.to_bottom_left_origin(size.height), charspan=(0, len(text))
        )
        label = cluster.label
        if label != DocItemLabel.LIST_ITEM:
            self.list_group = None
        if label == DocItemLabel.TEXT and self._continues(text):
            previous = self.last_text
            previous.text = previous.orig = join_lines([previous.text, text], self.known)
            previous.prov.append(prov)
            return
        self.last_text = None
        if label == DocItemLabel.TITLE:
            self.doc.add_title(text=text, prov=prov)
        elif label == DocItemLabel.SECTION_HEADER:
            self.doc.add_heading(text=text, level=heading_level(text), prov=prov)
        elif label == DocItemLabel.LIST_ITEM:
            if self.list_group is None:
                self.list_group = self.doc.add_list_group()
            self.doc.add_list_item(text=_strip_bullet(text), parent=self.list_group, prov=prov)
        elif label == DocItemLabel.FORMULA:
            self.doc.add_formula(text=" ".join(normalize(t).strip() for t in texts), prov=prov)
        elif label == DocItemLabel.CODE:
            self.doc.add_code(text="\n".join(texts), prov=prov)
        elif label == DocItemLabel.TABLE:
            cells = [(cell.text, Box.from_rect(cell.rect, size.height)) for cell in cluster.cells]
            self.doc.add_table(data=table_data(cells), prov=prov)
        elif label == DocItemLabel.PICTURE:
            self.doc.add_picture(prov=prov)
        elif label in FURNITURE:
            self.doc.add_text(label=label, text=text, prov=prov, content_layer=ContentLayer.FURNITURE)
        else:
            item = self.doc.add_text(label=label, text=text, prov=prov)
            self.last_text = item if label == DocItemLabel.TEXT else None

    def _continues(self, text: str) -> bool:
        """A paragraph cut by a column or page break: no sentence end before, lower case after."""
        if self.last_text is None or not text or not text[0].islower():
            return False
        return not SENTENCE_END.search(self.last_text.text.rstrip())


def build_document(
    name: str,
    origin: DocumentOrigin | None,
    pages: Sequence[tuple[int, Size, Sequence[Cluster]]],
    known: frozenset[str],
) -> DoclingDocument:
    """The document of all pages' clusters, each page's clusters in reading order."""
    doc = DoclingDocument(name=name, origin=origin)
    writer = _Writer(doc, known)
    for page_no, size, clusters in pages:
        doc.add_page(page_no=page_no, size=size)
        for cluster in clusters:
            writer.add(cluster, page_no, size)
    return doc
