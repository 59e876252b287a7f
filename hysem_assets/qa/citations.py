"""The post-hoc citation audit: every citation must exist, in the library and in what was retrieved.

Whatever the auditor approved, a claim keeps a citation only if its document has a library
record, the cited chunk (or article) is among the retrieved sources, and every field of the
metadata object (DOI, Zotero key, in-text and full citation) equals the library's rendering.
A claim left with no valid citation is removed, and the reason is kept with the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hysem_assets.qa.drafts import Claim, Draft
from hysem_assets.qa.sources import Library, SourceMetadata

_FIELDS = {
    "DOI": "doi",
    "ZoteroKey": "zotero_key",
    "InTextCitation": "in_text_citation",
    "FullCitation": "full_citation",
}


@dataclass(frozen=True)
class CitationAudit:
    kept: Draft
    #: removed claims: {"claim": text, "reasons": [...]}
    removed: list[dict[str, Any]]
    #: every citation checked: {"claim": n, "citation": {...}, "problem": str | None}
    checks: list[dict[str, Any]]


def _norm(field: str, value: Any) -> Any:
    return value.casefold().strip() if field == "DOI" and isinstance(value, str) else value


def citation_problem(
    citation: Mapping[str, Any], library: Library, retrieved: set[tuple[str, int | None]]
) -> str | None:
    """Why ``citation`` does not resolve, or None when it does."""
    document = str(citation.get("PDF_DocIndex"))
    record = library.get(document)
    if record is None:
        return f"document {document!r} has no library record"
    locator = (document, citation.get("PDF_ChunkIndex"))
    if locator not in retrieved:
        return f"chunk {locator[1]} of document {document!r} was not retrieved for this question"
    for key, attribute in _FIELDS.items():
        expected = getattr(record, attribute)
        if _norm(key, citation.get(key)) != _norm(key, expected):
            return f"{key} {citation.get(key)!r} does not match the library's {expected!r}"
    return None


def audit_citations(draft: Draft, sources: Iterable[SourceMetadata], library: Library) -> CitationAudit:
    retrieved = {source.locator for source in sources}
    kept: list[Claim] = []
    removed: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    for n, claim in enumerate(draft.claims):
        problems = [citation_problem(citation, library, retrieved) for citation in claim.citations]
        checks += [
            {"claim": n, "citation": dict(c), "problem": p} for c, p in zip(claim.citations, problems, strict=True)
        ]
        valid = tuple(c for c, p in zip(claim.citations, problems, strict=True) if p is None)
        if valid and len(valid) == len(claim.citations):
            kept.append(claim)
        else:
            removed.append({"claim": claim.text, "reasons": [p for p in problems if p] or ["no citation"]})
    return CitationAudit(Draft(tuple(kept)), removed, checks)
