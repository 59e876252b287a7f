"""JATS XML full texts (PubMed Central, Europe PMC) into a ``ParsedDocument``, with no PDF step.

A JATS article already says what a PDF parse has to guess: its title, abstract, sections,
tables, figures, formulas and references. It is written into Docling's own document model
and serialised by the same Markdown exporter as the PDF route, so the consumers of
``parsed_docs`` read both alike: the title as ``#``, the abstract and every top-level section
as ``##`` (nested sections one level deeper each), structured abstracts as labelled
paragraphs ("Background: ..."), tables as Markdown tables with their caption, figure
captions as paragraphs ("Figure 1. ..."), display formulas as ``$$...$$`` and in
``equations_json``, and acknowledgements, funding, competing interests, footnotes and the
reference list (``## References``, one reference a line) under their own headings, where
extraction drops them by heading. Tables also go to ``tables_json`` in the PDF route's shape
(page and box are None: an XML text has neither).

The parser is hardened: no network, no DTD, no entity resolution. An entity reference that
is not an HTML character name (``&nbsp;``) is left out, so an external entity is never read.
A document that is not JATS or not well-formed gets status ``failed`` and an error, never an
exception. Only ``docling_core`` is imported, not Docling's converters.
"""

from __future__ import annotations

import html.entities
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from docling_core.types.doc import DocItemLabel, DoclingDocument, NodeItem, TableCell, TableData
from lxml import etree

from hysem_assets.embedding.minilm import TOKENIZER_NAME, count_tokens
from hysem_assets.parsing.result import ParsedDocument

#: Status of a document parsed from JATS XML.
JATS = "jats"
PARSER = f"jats (lxml {etree.__version__})"
#: Tokenizer name and token counter, as the PDF route fills ``tokenizer`` and ``token_count``.
Tokenizer = tuple[str, Callable[[str], int]]
MINILM: Tokenizer = (TOKENIZER_NAME, count_tokens)
#: Deepest heading level written (Docling writes level n as n + 1 ``#``).
MAX_LEVEL = 5

NOT_XML = "not well-formed XML"
NOT_JATS = "not a JATS article"
NO_TEXT = "the JATS article has no abstract or body text"
JATS_HINT = "expected a PubMed Central / Europe PMC full text in JATS XML (root element <article>)"

_HTML_ENTITIES = html.entities.html5
_MML = "{http://www.w3.org/1998/Math/MathML}"
#: Blocks that break a paragraph: a ``<p>`` holding one becomes text before, the block, text after.
_BLOCKS = frozenset(
    {
        "disp-formula",
        "disp-formula-group",
        "table-wrap",
        "table-wrap-group",
        "fig",
        "fig-group",
        "list",
        "def-list",
        "disp-quote",
        "boxed-text",
        "supplementary-material",
        "preformat",
        "code",
        "statement",
        "graphic",
        "media",
        "array",
    }
)
#: Elements left out of running text: footnotes go under their own heading, the rest is no text.
_SKIP_INLINE = frozenset({"fn", "graphic", "inline-graphic", "media", "object-id", "alt-text", "long-desc"})
#: Names of untitled top-level sections by ``sec-type``.
_SEC_TYPES = {
    "intro": "Introduction",
    "methods": "Methods",
    "materials": "Materials",
    "materials|methods": "Materials and methods",
    "results": "Results",
    "discussion": "Discussion",
    "conclusions": "Conclusions",
    "cases": "Cases",
    "supplementary-material": "Supplementary material",
    "display-objects": "Figures and tables",
}
#: Headings of untitled abstracts by ``abstract-type`` (the main abstract has none).
_ABSTRACT_TYPES = {
    "toc": "Summary",
    "short": "Short abstract",
    "summary": "Author summary",
    "author-summary": "Author summary",
    "editor": "Editor's summary",
    "executive-summary": "Executive summary",
    "graphical": "Graphical abstract",
}
#: Author-note footnote types -> the heading their text goes under.
_NOTE_HEADINGS = {
    "conflict": "Competing interests",
    "coi-statement": "Competing interests",
    "financial-disclosure": "Funding",
    "supported-by": "Funding",
    "con": "Author contributions",
    "deceased": "Author information",
    "equal": "Author information",
    "present-address": "Author information",
    "corresp": "Author information",
}


class JatsError(Exception):
    """Why an input is not a JATS article this parser can read, in words a user can act on."""


def _local(element: etree._Element) -> str:
    """An element's name without namespace ("" for comments, processing instructions, entities)."""
    tag = element.tag
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def _squash(text: str) -> str:
    return " ".join(text.split())


def _entity(node: etree._Entity) -> str:
    """An HTML character entity's character; any other entity (an external one, say) is left out."""
    return _HTML_ENTITIES.get(f"{node.name};", "")


def _formula_text(element: etree._Element) -> str:
    """A formula as readable text: its MathML's characters, else its TeX, else its own text."""
    math = next(element.iter(f"{_MML}math", "math"), None)
    if math is not None:
        return _squash(_flat(math))
    tex = next(element.iter("tex-math"), None)
    if tex is not None:
        return _squash(tex.text or "")
    return _squash(_flat(element, skip=_SKIP_INLINE | {"label"}))


def _tex(element: etree._Element) -> str | None:
    tex = next(element.iter("tex-math"), None)
    return _squash(tex.text or "") if tex is not None and (tex.text or "").strip() else None


def _flat(element: etree._Element, skip: frozenset[str] = _SKIP_INLINE, spaced: bool = False) -> str:
    """All text of ``element`` in order, inline markup flattened (``<sup>``, ``<italic>``, ``<xref>`` ...).

    ``spaced`` puts a space between elements: citations and names whose parts are elements
    with no text between them (``<surname>Ammon</surname><given-names>S</given-names>``).
    """
    parts: list[str] = [element.text or ""] if isinstance(element.tag, str) else []
    for child in element:
        if isinstance(child, etree._Entity):
            parts.append(_entity(child))
        elif isinstance(child.tag, str):
            name = _local(child)
            if name == "break":
                parts.append(" ")
            elif name in ("inline-formula", "disp-formula"):
                parts.append(_formula_text(child))
            elif name not in skip:
                parts.append(f" {_flat(child, skip, spaced)} " if spaced else _flat(child, skip, spaced))
        parts.append(child.tail or "")
    return "".join(parts)


def _text(element: etree._Element | None, spaced: bool = False) -> str:
    if element is None:
        return ""
    text = _squash(_flat(element, spaced=spaced))
    if spaced:
        text = re.sub(r"\s+([,.;:)\]])", r"\1", text)
        text = re.sub(r"([(\[])\s+", r"\1", text)
        text = re.sub(r"(?<=\d) ?([–-]) ?(?=\d)", r"\1", text)
    return text


def _labelled(label: str, text: str, separator: str = ". ") -> str:
    """``Figure 1. Caption``: a label and its text, the label's own closing punctuation kept once."""
    label = label.strip()
    if not label:
        return text
    if not text:
        return label
    return f"{label.rstrip('.:')}{separator}{text}"


def _caption(element: etree._Element) -> str:
    """A figure's, table's or supplement's label and caption (its title and paragraphs) as one line."""
    caption = element.find("caption")
    parts = []
    if caption is not None:
        parts = [_text(child) for child in caption if _local(child) in ("title", "p")]
    return _labelled(_text(element.find("label")), " ".join(p for p in parts if p))


def _note(fn: etree._Element) -> str:
    """A footnote as one line: its label, then its text."""
    return _labelled(_text(fn.find("label")), _squash(_flat(fn, _SKIP_INLINE | {"label"})), " ")


def _heading(element: etree._Element) -> str:
    """A section's label and title ("2.1 Data"), as the PDF route's numbered headings read."""
    return " ".join(t for t in (_text(element.find("label")), _text(element.find("title"))) if t)


def _names(group: etree._Element) -> str:
    names = []
    for person in group:
        name = _local(person)
        if name == "name":
            names.append(" ".join(t for t in (_text(person.find("surname")), _text(person.find("given-names"))) if t))
        elif name in ("collab", "string-name"):
            names.append(_text(person, spaced=True))
        elif name == "etal":
            names.append("et al.")
    return ", ".join(n for n in names if n)


def _citation(citation: etree._Element) -> str:
    """A reference as one line. A citation with its own punctuation is read as written; one of bare
    elements (the NLM ``<element-citation>``) is set as "Authors. Title. Source Year;Volume:Pages."."""
    if (citation.text or "").strip() or any((child.tail or "").strip() for child in citation):
        return _text(citation, spaced=True)
    authors = " ".join(_names(group) for group in citation.iter("person-group")) or _names(citation)
    parts = [authors, _text(citation.find("article-title")) or _text(citation.find("chapter-title"))]
    source = " ".join(t for t in (_text(citation.find("source")), _text(citation.find("year"))) if t)
    where = _text(citation.find("volume"))
    if _text(citation.find("issue")):
        where += f"({_text(citation.find('issue'))})"
    pages = "-".join(t for t in (_text(citation.find("fpage")), _text(citation.find("lpage"))) if t)
    if where or pages:
        source += (";" if source else "") + where + (f":{pages}" if pages else "")
    parts.append(source)
    text = ". ".join(p.rstrip(".") for p in parts if p)
    ids = [f"{pid.get('pub-id-type', 'id')}:{_text(pid)}" for pid in citation.iter("pub-id") if _text(pid)]
    return (text + "." + (" " + " ".join(ids) if ids else "")) if text else _text(citation, spaced=True)


@dataclass
class _Grid:
    rows: int = 0
    cols: int = 0
    cells: list[TableCell] = field(default_factory=list)


def _rows(table: etree._Element) -> Iterator[tuple[etree._Element, bool]]:
    """Each ``<tr>`` of a table in order, and whether it is a header row (in ``<thead>``)."""
    for child in table:
        name = _local(child)
        if name == "tr":
            yield child, False
        elif name in ("thead", "tbody", "tfoot"):
            for row in child:
                if _local(row) == "tr":
                    yield row, name == "thead"


def _span(cell: etree._Element, name: str) -> int:
    try:
        return max(1, int(cell.get(name) or 1))
    except ValueError:
        return 1


def _grid(tables: list[etree._Element]) -> _Grid:
    """The cell grid of a table wrap's tables, one below the other, spans kept (Docling repeats a spanned
    cell's text into every position it covers)."""
    rows = [row for table in tables for row in _rows(table)]
    grid = _Grid(rows=len(rows))
    taken: set[tuple[int, int]] = set()
    for r, (row, header) in enumerate(rows):
        c = 0
        for cell in row:
            if _local(cell) not in ("td", "th"):
                continue
            while (r, c) in taken:
                c += 1
            rowspan = min(_span(cell, "rowspan"), len(rows) - r)
            colspan = _span(cell, "colspan")
            taken.update((r + i, c + j) for i in range(rowspan) for j in range(colspan))
            grid.cells.append(
                TableCell(
                    text=_text(cell),
                    row_span=rowspan,
                    col_span=colspan,
                    start_row_offset_idx=r,
                    end_row_offset_idx=r + rowspan,
                    start_col_offset_idx=c,
                    end_col_offset_idx=c + colspan,
                    column_header=header or _local(cell) == "th",
                )
            )
            c += colspan
    grid.cols = max((col + 1 for _, col in taken), default=0)
    return grid


@dataclass
class _Equation:
    text: str
    orig: str
    number: str | None


class _Writer:
    """Walks the article into a ``DoclingDocument``, keeping the tables and equations it writes."""

    def __init__(self, name: str) -> None:
        self.doc = DoclingDocument(name=name)
        self.tables: list[dict] = []
        self.equations: list[_Equation] = []
        #: Footnotes met inside running text, written under their own heading after the back matter.
        self.footnotes: list[str] = []

    # -- blocks ------------------------------------------------------------------------------------

    def heading(self, text: str, level: int) -> None:
        self.doc.add_heading(text=text, level=min(max(level, 1), MAX_LEVEL))

    def paragraph(self, text: str) -> None:
        text = _squash(text)
        if text:
            self.doc.add_text(label=DocItemLabel.TEXT, text=text)

    def content(self, element: etree._Element, level: int) -> None:
        """The children of a section, abstract, appendix or box: ``level`` is that of their sections."""
        for child in element:
            self.child(child, level)

    def child(self, child: etree._Element, level: int) -> None:
        name = _local(child)
        if name in ("title", "label", "caption", "sec-meta", "object-id", "kwd-group"):
            return
        if name == "sec":
            self.section(child, level)
        elif name == "p":
            self.p(child, level)
        elif name == "ref-list":
            self.references(child, level)
        elif name == "fn-group":
            for fn in child.iter("fn"):
                self.paragraph(_note(fn))
        elif name == "fn":
            self.paragraph(_note(child))
        else:
            self.block(child, level)

    def section(self, sec: etree._Element, level: int, fallback: str = "") -> None:
        title = _heading(sec) or fallback
        if title:
            self.heading(title, level)
        if sec.get("sec-type") == "supplementary-material":
            self.supplements(sec, level + 1 if title else level)
        else:
            self.content(sec, level + 1 if title else level)

    def supplements(self, sec: etree._Element, level: int) -> None:
        """Each file kept briefly (its label and caption title); the section's other content as any section's."""
        for child in sec:
            name = _local(child)
            if name == "supplementary-material":
                self.supplement(child)
            elif name == "p":
                self.paragraph(_flat(child, _SKIP_INLINE | _BLOCKS))
                for inner in child:
                    if _local(inner) == "supplementary-material":
                        self.supplement(inner)
                    elif _local(inner) in _BLOCKS:
                        self.block(inner, level)
            else:
                self.child(child, level)

    def supplement(self, element: etree._Element) -> None:
        caption = element.find("caption")
        title = _text(caption.find("title")) if caption is not None else ""
        self.paragraph(_labelled(_text(element.find("label")), title, ": ") or "Supplementary file")

    def p(self, p: etree._Element, level: int) -> None:
        """A paragraph; a block inside it (a display formula, table, list) splits it where it stands."""
        parts = [p.text or ""]
        for child in p:
            name = _local(child)
            if isinstance(child, etree._Entity):
                parts.append(_entity(child))
            elif name in _BLOCKS:
                self.paragraph("".join(parts))
                parts = []
                self.block(child, level)
            elif name == "break":
                parts.append(" ")
            elif name in ("inline-formula",):
                parts.append(_formula_text(child))
            elif name == "fn":
                self.footnotes.append(_note(child))
            elif name and name not in _SKIP_INLINE:
                parts.append(_flat(child))
            parts.append(child.tail or "")
        self.paragraph("".join(parts))

    def block(self, element: etree._Element, level: int) -> None:
        name = _local(element)
        if name in ("table-wrap",):
            self.table(element)
        elif name in ("fig",):
            self.paragraph(_caption(element))
        elif name in ("disp-formula",):
            self.formula(element)
        elif name in ("list",):
            self.list(element, None)
        elif name == "def-list":
            self.def_list(element)
        elif name == "supplementary-material":
            self.supplement(element)
        elif name in ("table-wrap-group", "fig-group", "disp-formula-group", "disp-quote", "boxed-text", "statement"):
            caption = _caption(element)
            if caption:
                self.paragraph(caption)
            self.content(element, max(level, 2))
        elif name in ("preformat", "code"):
            text = _flat(element).strip("\n")
            if text.strip():
                self.doc.add_code(text=text)
        elif name in ("graphic", "media", "alternatives", "array"):
            if name == "array" and element.find(".//table") is not None:
                self.table(element)
            else:
                caption = _caption(element)
                if caption:
                    self.paragraph(caption)
        elif name and name not in _SKIP_INLINE:
            self.paragraph(_flat(element))

    def table(self, wrap: etree._Element) -> None:
        caption_text = _caption(wrap)
        tables = [t for t in wrap.iter("table")]
        grid = _grid(tables) if tables else _Grid()
        if not grid.rows or not grid.cols:
            self.paragraph(caption_text)
        else:
            caption = self.doc.add_text(label=DocItemLabel.CAPTION, text=caption_text) if caption_text else None
            data = TableData(num_rows=grid.rows, num_cols=grid.cols, table_cells=grid.cells)
            item = self.doc.add_table(data=data, caption=caption)
            self.tables.append(
                {
                    "page": None,
                    "bbox": None,
                    "num_rows": item.data.num_rows,
                    "num_cols": item.data.num_cols,
                    "grid": [[cell.text for cell in row] for row in item.data.grid],
                    "caption": caption_text or None,
                }
            )
        for foot in wrap.iter("table-wrap-foot"):
            for child in foot:
                if _local(child) == "fn-group":
                    for fn in child.iter("fn"):
                        self.paragraph(_note(fn))
                elif _local(child) == "fn":
                    self.paragraph(_note(child))
                elif _local(child) != "title":
                    self.paragraph(_text(child))

    def formula(self, element: etree._Element) -> None:
        readable = _formula_text(element)
        text = _tex(element) or readable
        if not text:
            return
        label = _text(element.find("label"))
        number = re.sub(r"[()\s]", "", label) or None
        self.doc.add_formula(text=f"{text} {label}".strip() if label else text)
        self.equations.append(_Equation(text=text, orig=readable, number=number))

    def list(self, element: etree._Element, parent: NodeItem | None) -> None:
        enumerated = element.get("list-type") in ("order", "alpha-lower", "alpha-upper", "roman-lower", "roman-upper")
        group = self.doc.add_list_group(parent=parent)
        for item in element:
            if _local(item) != "list-item":
                continue
            words = [
                _squash(_flat(child, _SKIP_INLINE | {"list"})) for child in item if _local(child) in ("p", "title")
            ]
            text = " ".join(w for w in words if w) or _squash(_flat(item, _SKIP_INLINE | {"list"}))
            text = _labelled(_text(item.find("label")), text, " ")
            node = self.doc.add_list_item(text=text, parent=group, enumerated=enumerated)
            for inner in item.iter("list"):
                if inner.getparent() is item or inner.getparent().getparent() is item:
                    self.list(inner, node)

    def def_list(self, element: etree._Element) -> None:
        title = _text(element.find("title"))
        if title:
            self.paragraph(title)
        group = self.doc.add_list_group()
        for item in element.iter("def-item"):
            term, definition = _text(item.find("term")), _text(item.find("def"))
            self.doc.add_list_item(text=_labelled(term, definition, ": "), parent=group)

    def references(self, ref_list: etree._Element, level: int) -> None:
        """``References`` (the name extraction and retrieval know), one reference a line."""
        refs = [ref for ref in ref_list.iter("ref")]
        if not refs:
            return
        self.heading("References", level)
        group = self.doc.add_list_group()
        for ref in refs:
            citations = [c for c in ref if _local(c) in ("mixed-citation", "element-citation", "citation", "note")]
            text = " ".join(_citation(c) for c in citations) or _text(ref, spaced=True)
            label = _text(ref.find("label"))
            if label and not text.startswith(label):
                text = f"{label.rstrip('.')}. {text}" if label[0].isdigit() else f"{label} {text}"
            self.doc.add_list_item(text=text, parent=group)

    # -- the article ---------------------------------------------------------------------------------

    def article(self, root: etree._Element) -> bool:
        """Write the whole article; whether it had any abstract or body text."""
        meta = root.find("front/article-meta")
        if meta is None:
            meta = etree.Element("article-meta")
        title = _text(meta.find("title-group/article-title"))
        if title:
            self.doc.add_title(text=title)
        found = False
        abstracts = meta.findall("abstract")
        for abstract in abstracts:
            found |= self.abstract(abstract, only=len(abstracts) == 1)
        body = root.find("body")
        if body is not None:
            found |= bool(_squash("".join(body.itertext())))
            self.body(body)
        back = root.find("back")
        references = []
        for child in back if back is not None else []:
            if _local(child) == "ref-list":
                references.append(child)
            else:
                self.back(child)
        self.notes(meta)
        for ref_list in references:
            self.references(ref_list, 1)
        return found

    def abstract(self, abstract: etree._Element, only: bool) -> bool:
        """``## Abstract``, a structured abstract's parts as labelled paragraphs ("Methods: ...").

        An article's only abstract is the abstract, whatever its type; beside the main one, a
        short or table-of-contents abstract is named by its type."""
        kind = "" if only else abstract.get("abstract-type") or ""
        title = _text(abstract.find("title")) or _ABSTRACT_TYPES.get(kind, kind.replace("-", " ").capitalize())
        self.heading(title or "Abstract", 1)
        before = len(self.doc.texts)
        self._abstract_parts(abstract)
        return len(self.doc.texts) > before

    def _abstract_parts(self, element: etree._Element) -> None:
        for child in element:
            name = _local(child)
            if name == "sec":
                self._abstract_sec(child)
            elif name == "p":
                self.p(child, 2)
            elif name in _BLOCKS:
                self.block(child, 2)

    def _abstract_sec(self, sec: etree._Element) -> None:
        """A part of a structured abstract: its title leads its first paragraph, as a PDF prints it."""
        pending = _heading(sec)
        for part in sec:
            name = _local(part)
            if name == "p":
                self.paragraph(_labelled(pending, _text(part), ": "))
                pending = ""
            elif name == "sec":
                self.paragraph(pending)
                pending = ""
                self._abstract_sec(part)
            elif name in _BLOCKS:
                self.block(part, 2)
        self.paragraph(pending)

    def body(self, body: etree._Element) -> None:
        """Each top-level ``<sec>`` a ``##`` heading, an untitled one named by its type or place."""
        first = True
        for child in body:
            name = _local(child)
            if name == "sec":
                fallback = _SEC_TYPES.get(child.get("sec-type") or "", "Introduction" if first else "Section")
                self.section(child, 1, fallback)
                first = False
            elif name == "p":
                self.p(child, 1)
            elif name:
                self.block(child, 1)

    def back(self, child: etree._Element) -> None:
        name = _local(child)
        title = _heading(child)
        if name == "ack":
            parts = [c for c in child if _local(c) not in ("title", "label")]
            if not title and parts and all(_local(c) == "sec" for c in parts):
                for sec in parts:  # <ack><sec><title>Acknowledgements</title>...: one heading, not two
                    self.section(sec, 1, "Acknowledgements")
            else:
                self.heading(title or "Acknowledgements", 1)
                self.content(child, 2)
        elif name == "app-group":
            for app in child:
                if _local(app) == "app":
                    self.section(app, 1, "Appendix")
                elif _local(app) not in ("title", "label"):
                    self.block(app, 2)
        elif name in ("app", "sec"):
            self.section(child, 1, _SEC_TYPES.get(child.get("sec-type") or "", "Notes"))
        elif name == "fn-group":
            self.heading(title or "Footnotes", 1)
            self.content(child, 2)
            for text in self.footnotes:  # the text's own footnotes under the same heading
                self.paragraph(text)
            self.footnotes = []
        elif name == "glossary":
            self.heading(title or "Abbreviations", 1)
            self.content(child, 2)
        elif name == "notes":
            self.section(child, 1, "Notes")
        elif name == "bio":
            self.heading("Author information", 1)
            self.content(child, 2)
        elif name in ("def-list", "list", "table-wrap", "fig", "boxed-text", "p"):
            self.block(child, 2)

    def notes(self, meta: etree._Element) -> None:
        """Funding, competing interests and other author notes of the front matter, and footnotes of the text."""
        notes: dict[str, list[str]] = {}
        for statement in meta.iter("funding-statement"):
            notes.setdefault("Funding", []).append(_text(statement))
        for group in meta.iter("funding-group"):
            if group.find(".//funding-statement") is None:
                notes.setdefault("Funding", []).append(_text(group, spaced=True))
        for fn in meta.iter("fn"):
            heading = _NOTE_HEADINGS.get(fn.get("fn-type") or "", "Author information")
            notes.setdefault(heading, []).append(_note(fn))
        for heading, texts in notes.items():
            texts = [t for t in texts if t]
            if texts:
                self.heading(heading, 1)
                for text in texts:
                    self.paragraph(text)
        if self.footnotes:
            self.heading("Footnotes", 1)
            for text in self.footnotes:
                self.paragraph(text)


def _root(xml: bytes) -> etree._Element:
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False, huge_tree=False
    )
    try:
        root = etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as error:
        raise JatsError(f"{NOT_XML}: {error}; {JATS_HINT}") from None
    if root is None or _local(root) != "article":
        found = f"<{_local(root)}>" if root is not None else "nothing"
        raise JatsError(f"{NOT_JATS}: the root element is {found}; {JATS_HINT}")
    return root


def jats_document(xml: bytes, name: str = "article") -> tuple[DoclingDocument, list[dict], list[dict]]:
    """The article as a ``DoclingDocument`` with its tables and equations in the ``parsed_docs`` JSON shape.

    Raises ``JatsError`` for input that is not a JATS article with text.
    """
    root = _root(xml)
    writer = _Writer(name)
    if not writer.article(root):
        raise JatsError(f"{NO_TEXT} (a metadata-only record); fetch the article's full text, or its PDF")
    equations = [
        {"page": None, "bbox": None, "text": e.text, "orig": e.orig, "number": e.number} for e in writer.equations
    ]
    return writer.doc, writer.tables, equations


def parse_jats(xml: bytes, path: str, tokenizer: Tokenizer = MINILM) -> ParsedDocument:
    """Markdown, tables, equations and a token count for one JATS article, or the reason it has none.

    ``tokenizer`` is the name written to ``tokenizer`` and the counter of ``token_count``
    (the embedding model's WordPiece, as the PDF route). Never raises for a bad document.
    """
    started = time.perf_counter()
    name, count = tokenizer
    row = {"path": str(path), "tokenizer": name, "parser": PARSER, "device": "cpu", "pages": 0}
    try:
        doc, tables, equations = jats_document(xml, name=str(path).rsplit("/", 1)[-1] or "article")
        text = doc.export_to_markdown()
        return ParsedDocument(
            **row,
            markdown=text,
            tables_json=json.dumps(tables, ensure_ascii=False),
            equations_json=json.dumps(equations, ensure_ascii=False),
            token_count=count(text),
            seconds=time.perf_counter() - started,
            status=JATS,
        )
    except JatsError as error:
        return ParsedDocument(**row, seconds=time.perf_counter() - started, error=str(error))
    except Exception as error:  # a row per document, whatever the XML holds
        message = f"could not read the JATS article: {type(error).__name__}: {error}"
        return ParsedDocument(**row, seconds=time.perf_counter() - started, error=message)
