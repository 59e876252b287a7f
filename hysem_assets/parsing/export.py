"""A ``DoclingDocument`` into the columns of a parsed-document row."""

from __future__ import annotations

import json
import re

from docling_core.types.doc import DoclingDocument, FormulaItem, ProvenanceItem, TableItem

from hysem_assets.parsing.clusters import TRAILING_EQUATION_NUMBER


def _where(prov: list[ProvenanceItem], doc: DoclingDocument) -> dict:
    if not prov:
        return {"page": None, "bbox": None}
    first = prov[0]
    height = doc.pages[first.page_no].size.height if first.page_no in doc.pages else None
    box = first.bbox.to_top_left_origin(page_height=height) if height is not None else first.bbox
    return {"page": first.page_no, "bbox": [round(v, 1) for v in (box.l, box.t, box.r, box.b)]}


def markdown(doc: DoclingDocument) -> str:
    return doc.export_to_markdown()


def tables_json(doc: DoclingDocument) -> str:
    """Each table's page, box (top-left origin, points), size, cell grid and caption."""
    tables = [
        {
            **_where(table.prov, doc),
            "num_rows": table.data.num_rows,
            "num_cols": table.data.num_cols,
            "grid": [[cell.text for cell in row] for row in table.data.grid],
            "caption": table.caption_text(doc) or None,
        }
        for table in doc.tables
        if isinstance(table, TableItem)
    ]
    return json.dumps(tables, ensure_ascii=False)


def equations_json(doc: DoclingDocument) -> str:
    """Each displayed equation's page, box, text (LaTeX when a formula model read it) and number."""
    equations = []
    for item in doc.texts:
        if not isinstance(item, FormulaItem):
            continue
        number = TRAILING_EQUATION_NUMBER.search(item.orig or item.text)
        equations.append(
            {
                **_where(item.prov, doc),
                "text": item.text,
                "orig": item.orig,
                "number": re.sub(r"[()\s]", "", number.group()) if number else None,
            }
        )
    return json.dumps(equations, ensure_ascii=False)
