"""Identifier normalization shared by parsers and later dedup stages."""

from __future__ import annotations

import re

_DOI_PREFIX = re.compile(r"^\s*(?:https?://(?:dx\.)?doi\.org/|doi\.org/|doi:\s*|urn:doi:)", re.IGNORECASE)
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")


def normalize_doi(value: str | None) -> str | None:
    """Return the DOI in canonical form (lower case, no resolver prefix), or None.

    Sources spell DOIs as URLs, with ``doi:`` prefixes, in upper case or with
    trailing punctuation; anything that does not look like ``10.NNNN/suffix``
    afterwards is not a DOI and yields None rather than a wrong identifier.
    """
    if not value:
        return None
    doi = _DOI_PREFIX.sub("", value.strip())
    doi = re.sub(r"\s+", "", doi).rstrip(".,;:)]}>").lower()
    return doi if _DOI_SHAPE.match(doi) else None


def strip_openalex_id(value: str | None) -> str | None:
    """``https://openalex.org/W123`` -> ``W123``; leaves bare ids unchanged."""
    if not value:
        return None
    return value.rstrip("/").rsplit("/", 1)[-1] or None


_PMID = re.compile(
    r"^(?:https?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/"
    r"|pmid:\s*)?0*([1-9]\d{0,9})/?$",
    re.IGNORECASE,
)


def normalize_pmid(value: str | int | None) -> str | None:
    """Return a PMID as bare digits, or None.

    OpenAlex gives PubMed URLs, Scopus bare strings, citations ``PMID: 123``;
    all must compare equal during dedup.
    """
    if value is None or isinstance(value, bool):
        return None
    match = _PMID.match(str(value).strip())
    return match.group(1) if match else None


_DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/\S+")


def extract_doi(text: str | None) -> str | None:
    """The first DOI inside free text, normalized: exports write "10.1161/X [doi]",
    "doi: 10.1000/a; 10.1000/b" or a resolver URL where a bare DOI belongs."""
    found = _DOI_IN_TEXT.search(text or "")
    return normalize_doi(found.group()) if found else None


_DOI_VERSION = re.compile(r"(?:\.pub\d+|/(?:abstract|full|pdf|epdf|fulltext|summary))$")


def doi_work_key(doi: str | None) -> str | None:
    """The DOI of the work, found as ``extract_doi`` does, without a version suffix
    (Cochrane ``CD002273.pub2`` and ``.pub3`` are versions of one review) or a
    landing-page suffix copied from a URL (``/abstract``, ``/full``), so that such
    variants link during dedup instead of conflicting."""
    normalized = extract_doi(doi)
    return _DOI_VERSION.sub("", normalized) if normalized else None
