"""Retracted and corrected works in an answer: retracted ones left out by default and reported either
way, corrected ones named with their corrections.

A retracted work's findings are withdrawn, yet its text still matches questions as well as
it did. So the context an answer is drafted from skips retracted works (the next chunks
take their places), and the answer names the works it left out, so a reader who knows the
work sees why it is missing. A user who wants them anyway (``include_retracted``) gets them
with a warning that names them. A work with a published correction (an erratum linked to it)
stays, and an answer citing it names the correction, so a reader checks the corrected figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hysem_assets.qa.sources import ContextChunk, Library


def split_retracted(
    ranked: Sequence[ContextChunk], k: int, *, include: bool = False
) -> tuple[list[ContextChunk], list[dict[str, Any]]]:
    """The ``k`` chunks to answer from, and one report entry per retracted work among the ``k``
    best-ranked chunks (the ones an answer would have used): left out, or ``included`` as asked."""
    top = list(ranked[:k])
    context = top if include else [c for c in ranked if not c.retracted][:k]
    report: dict[str, dict[str, Any]] = {}
    for chunk in top:
        if chunk.retracted:
            source = chunk.metadata
            report.setdefault(
                source.PDF_DocIndex,
                {
                    "document": source.PDF_DocIndex,
                    "DOI": source.DOI,
                    "InTextCitation": source.InTextCitation,
                    "included": include,
                },
            )
    return context, list(report.values())


def retraction_note(report: Sequence[dict[str, Any]]) -> str | None:
    """The sentence an answer carries about the retracted works of its report, or None without any."""
    if not report:
        return None
    names = "; ".join(str(r.get("InTextCitation") or r.get("DOI") or r["document"]) for r in report)
    count = f"{len(report)} retracted work{'s' * (len(report) != 1)}"
    if any(r.get("included") for r in report):
        return f"Warning: the sources include {count}, kept as asked: {names}"
    return f"{count.capitalize()} that matched this question {'were' if len(report) != 1 else 'was'} left out: {names}"


def corrected_works(cited: Sequence[str], library: Library) -> list[dict[str, Any]]:
    """The cited works (cluster ids) that have a published correction, each with it."""
    return [
        {"document": c, "DOI": library[c].doi, "InTextCitation": library[c].in_text_citation,
         "correction": library[c].correction}
        for c in dict.fromkeys(cited)
        if c in library and library[c].correction
    ]  # fmt: skip


def correction_note(corrected: Sequence[dict[str, Any]]) -> str | None:
    """The sentence an answer carries about the corrected works it cites, or None without any."""
    if not corrected:
        return None
    named = "; ".join(
        f"{r.get('InTextCitation') or r.get('DOI') or r['document']} ({r['correction']})" for r in corrected
    )
    return f"{'A cited work has' if len(corrected) == 1 else 'Cited works have'} a published correction: {named}"
