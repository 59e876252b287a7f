"""One parsed document: the row ``parsed_docs`` keeps per PDF."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ParsedDocument:
    """What parsing one PDF produced, or why it could not.

    ``status`` is ``native`` (all text from the PDF's text layer), ``ocr`` (some pages read by
    OCR), ``jats`` (read from a JATS XML full text of PubMed Central or Europe PMC, no PDF:
    ``pages`` is 0, and tables and equations have no page or box; see ``parsing.jats``),
    ``failed``, ``too_large`` (over a size limit of the profile, so never parsed) or
    ``resource_limit`` (stopped at the worker's memory or time limit). ``error`` is None on
    success; otherwise it says what went wrong in words a user can act on, and the other
    fields keep what is known (the page count of an encrypted file is not).
    """

    path: str
    markdown: str = ""
    #: JSON list: per table its page, box, size, cell grid and caption.
    tables_json: str = "[]"
    #: JSON list: per displayed equation its page, box, text and equation number.
    equations_json: str = "[]"
    token_count: int = 0
    tokenizer: str = ""
    pages: int = 0
    #: Pipeline and Docling version that produced the row.
    parser: str = ""
    #: Device the document was parsed on ("" when its worker died before saying).
    device: str = "cpu"
    seconds: float = 0.0
    status: str = "failed"
    #: Pages whose text came from OCR.
    ocr_pages: int = 0
    #: JSON object: per OCR page (1-based, as text), the engine's confidence averaged over its characters.
    ocr_confidence_json: str = "{}"
    #: OCR pages whose confidence is below ``ocr.MIN_CONFIDENCE``: handwriting, drawings, photographs.
    unreadable_pages: int = 0
    #: Lines of Docling's output removed on purpose (line numbers, running headers and footers).
    dropped_lines: int = 0
    #: JSON object: the dropped lines by the rule that removed them.
    dropped_json: str = "{}"
    #: Lines the reconstruction lost and the coverage check put back.
    restored_lines: int = 0
    #: Pages kept in Docling's reading order because the reconstruction's disagreed strongly with it.
    docling_order_pages: int = 0
    #: Pages given Docling's own lines because the reconstruction broke some of them (columns read across).
    docling_pages: int = 0
    #: JSON list: the page furniture left out of the Markdown, ``{"page", "rule", "text"}`` per line.
    furniture_json: str = "[]"
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_record(self) -> dict[str, Any]:
        return asdict(self)
