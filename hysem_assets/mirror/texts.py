"""The searchable text of a snapshot record in each source's own format.

Each source spells the same work differently (PubMed's MeSH and inline markup, OpenAlex's
inverted-index abstracts, Scopus' ``|``-separated keywords), so each gets a reader that hands
the query evaluator the same fields: title, abstract, keywords, MeSH, authors, journal, types.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any

from hysem_assets.mirror.search import Document


def _text(element: ET.Element | None) -> str:
    """All text of an element, inline markup (<i>, <sub>, MathML) included: H<sub>2</sub>O -> H2O."""
    return "".join(element.itertext()).strip() if element is not None else ""


def _initials(given: str) -> str:
    parts = given.replace("-", " ").replace(".", " ").split()
    return "".join(part[0] for part in parts if part)


def person(family: str | None, given: str | None = None, initials: str | None = None) -> str:
    """One author as every name part plus initials, spelled out and run together (``MJ`` and ``M J``)."""
    letters = initials or _initials(given or "")
    return " ".join(part for part in (family, given, letters, " ".join(letters)) if part)


def mesh_forms(heading: str) -> list[str]:
    """A MeSH heading and its natural word order: ``Models, Theoretical`` is also ``Theoretical Models``."""
    parts = [part.strip() for part in heading.split(",")]
    if len(parts) < 2 or not all(parts):
        return [heading]
    return [heading, " ".join(reversed(parts))]


def pubmed_document(element: ET.Element) -> Document:
    """A PubmedArticle or PubmedBookArticle element."""
    titles = [_text(element.find(path)) for path in (".//ArticleTitle", ".//VernacularTitle")]
    abstracts = [_text(part) for part in element.iterfind(".//Abstract/AbstractText")]
    abstracts += [_text(part) for part in element.iterfind(".//OtherAbstract/AbstractText")]
    tags = ("DescriptorName", "QualifierName", "SupplMeshName", "NameOfSubstance")
    mesh = [form for tag in tags for name in element.iter(tag) for form in mesh_forms(_text(name))]
    authors = []
    for author in element.iter("Author"):
        collective = author.findtext("CollectiveName")
        if collective:
            authors.append(collective)
        else:
            authors.append(
                person(author.findtext("LastName"), author.findtext("ForeName"), author.findtext("Initials"))
            )
    journal = [element.findtext(path) or "" for path in (".//Journal/Title", ".//Journal/ISOAbbreviation")]
    journal.append(element.findtext(".//MedlineJournalInfo/MedlineTA") or element.findtext(".//BookTitle") or "")
    return Document.build(
        title=titles,
        abstract=abstracts,
        keywords=[_text(keyword) for keyword in element.iter("Keyword")],
        mesh=mesh,
        authors=authors,
        journal=journal,
        types=[_text(kind) for kind in element.iter("PublicationType")],
    )


def inverted_abstract(index: Mapping[str, Iterable[int]] | None) -> str:
    """Rebuild OpenAlex's ``abstract_inverted_index`` (word -> positions) into running text."""
    if not index:
        return ""
    placed = sorted((position, word) for word, positions in index.items() for position in positions)
    return " ".join(word for _, word in placed)


def openalex_document(work: Mapping[str, Any]) -> Document:
    authors = []
    for authorship in work.get("authorships") or []:
        names = {(authorship.get("author") or {}).get("display_name"), authorship.get("raw_author_name")}
        authors.extend(person(name) for name in sorted(filter(None, names)))
    source = ((work.get("primary_location") or {}).get("source") or {}).get("display_name")
    mesh = [
        form
        for heading in work.get("mesh") or []
        for name in (heading.get("descriptor_name"), heading.get("qualifier_name"))
        if name
        for form in mesh_forms(name)
    ]
    return Document.build(
        title=[work.get("title") or work.get("display_name") or ""],
        abstract=inverted_abstract(work.get("abstract_inverted_index")),
        keywords=[keyword.get("display_name") or "" for keyword in work.get("keywords") or []],
        mesh=mesh,
        authors=authors,
        journal=source or "",
        types=[work.get("type") or ""],
    )


def scopus_document(entry: Mapping[str, Any]) -> Document:
    authors = [
        person(author.get("surname"), author.get("given-name"), re.sub(r"\W", "", author.get("initials") or ""))
        for author in entry.get("author") or []
    ]
    if not authors and entry.get("dc:creator"):
        authors = [person(entry["dc:creator"])]
    keywords = [part.strip() for part in (entry.get("authkeywords") or "").split("|")]
    index_terms = entry.get("idxterms") or ""
    return Document.build(
        title=entry.get("dc:title") or "",
        abstract=entry.get("dc:description") or "",
        keywords=keywords,
        mesh=[part.strip() for part in index_terms.split("|")] if isinstance(index_terms, str) else [],
        authors=authors,
        journal=entry.get("prism:publicationName") or "",
        types=[entry.get("subtypeDescription") or ""],
    )
