"""Crossref ``/works/{doi}`` responses: the enrichment fields of one work."""

from __future__ import annotations

import html
import re
from typing import Any

from hysem_assets.core.identifiers import normalize_doi
from hysem_assets.sources.enrichment_fields import NOTICE_TYPES, RETRACTION_TYPES, UNPUBLISHED_TYPES
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.fields import clean_text, load_json_object

SOURCE = "Crossref"
_TAG = re.compile(r"<[^>]+>")
_INLINE_TAG = re.compile(r"</?(?:jats:)?(?:sub|sup|italic|bold|i|b|u|underline|sc|monospace)\b[^>]*>", re.IGNORECASE)
_SECTION_TITLE = re.compile(r"<(?:jats:)?title>(.*?)</(?:jats:)?title>\s*", re.IGNORECASE | re.DOTALL)
_PARAGRAPH_END = re.compile(r"</(?:jats:)?(?:p|sec)>", re.IGNORECASE)
_LEADING_LABEL = re.compile(r"^(abstract|summary)\s*[:.]?\s+", re.IGNORECASE)


def jats_to_text(value: str | None) -> str | None:
    """Plain text of a JATS abstract: tags dropped, paragraphs kept apart, entities decoded.

    Section titles become ``LABEL: text`` paragraphs, the shape PubMed abstracts have.
    """
    if not value:
        return None
    marked = _PARAGRAPH_END.sub("\n\n", _SECTION_TITLE.sub(r"\1: ", value))
    paragraphs = [clean_text(html.unescape(_TAG.sub(" ", _INLINE_TAG.sub("", part)))) for part in marked.split("\n\n")]
    text = "\n\n".join(p for p in paragraphs if p)
    return _LEADING_LABEL.sub("", text) or None


def parse_work_response(body: bytes, where: str) -> dict[str, Any]:
    """The ``message`` of a Crossref work response; API errors become SourceFormatError."""
    document = load_json_object(body, SOURCE, where)
    if document.get("status") != "ok" or not isinstance(document.get("message"), dict):
        problem = document.get("message") if document.get("status") == "failed" else "no work 'message' in the body"
        raise SourceFormatError(SOURCE, where, str(problem), "check the DOI and the base URL")
    return document["message"]


def enrichment(message: dict[str, Any]) -> dict[str, Any]:
    """What a Crossref work can add to a record (None where Crossref is silent)."""
    item_type = message.get("type")
    licences = [entry.get("URL") for entry in message.get("license") or [] if entry.get("URL")]
    return {
        "doi": normalize_doi(message.get("DOI")),
        "abstract": jats_to_text(message.get("abstract")),
        "item_type": item_type,
        "cited_by_count": message.get("is-referenced-by-count"),
        "is_retracted": True if _updates(message.get("updated-by")) else None,
        "is_published": None if item_type is None else item_type not in UNPUBLISHED_TYPES,
        "license": licences[0] if licences else None,
        "notice_of": _notice_of(message.get("update-to")),
    }


def retraction_targets(message: dict[str, Any]) -> set[str]:
    """DOIs that this work (a retraction notice) retracts, from its ``update-to`` list."""
    return _updates(message.get("update-to"))


def _notice_of(entries: list[dict[str, Any]] | None) -> str | None:
    """What a notice is about, from its ``update-to`` list: "retraction:doi:D", "erratum:doi:D"."""
    links = [
        f"{'retraction' if kind in RETRACTION_TYPES else 'erratum'}:doi:{doi}"
        for entry in entries or []
        if (kind := str(entry.get("type", "")).lower()) in NOTICE_TYPES and (doi := normalize_doi(entry.get("DOI")))
    ]
    return "; ".join(sorted(set(links))) or None


def _updates(entries: list[dict[str, Any]] | None, types: frozenset[str] = RETRACTION_TYPES) -> set[str]:
    """DOIs of an ``update-to`` / ``updated-by`` list whose update is one of ``types``."""
    return {
        doi
        for entry in entries or []
        if str(entry.get("type", "")).lower() in types and (doi := normalize_doi(entry.get("DOI")))
    }
