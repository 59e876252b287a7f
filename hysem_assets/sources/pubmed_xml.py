"""Parse NCBI E-utilities XML (esearch, efetch db=pubmed) into normalized records."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hysem_assets.core.identifiers import normalize_doi, normalize_pmid
from hysem_assets.core.records import empty_record
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.fields import clean_text, leading_year, normalize_pmcid, page_range, telling_type
from hysem_assets.sources.names import format_name

SOURCE = "PubMed"

_MATHML_NS = "http://www.w3.org/1998/Math/MathML"
_MATHML = "{%s}" % _MATHML_NS
#: MathML elements whose text is content (a lone space in <mtext> is meant).
_MATHML_TOKENS = frozenset({_MATHML + tag for tag in ("mi", "mn", "mo", "mtext", "ms")})
# Keep the familiar prefix when inline MathML is serialized into ``raw``.
ET.register_namespace("mml", _MATHML_NS)

_BRACKETED = re.compile(r"^\[(?P<inner>.*)\](?P<period>\.?)$", re.DOTALL)


@dataclass(frozen=True)
class ESearchResult:
    """One esearch page: the ids plus what is needed to page or fetch via history."""

    count: int
    ids: list[str]
    webenv: str | None
    query_key: str | None
    retstart: int
    retmax: int
    #: ErrorList/WarningList entries ("PhraseNotFound: abcXYZ") worth logging.
    warnings: list[str] = field(default_factory=list)


def parse_esearch(body: bytes, where: str = "esearch") -> ESearchResult:
    """Read an eSearchResult; an ERROR element means the query itself failed."""
    root = _parse_xml(body, where)
    _raise_on_error_element(root, where)
    if root.tag != "eSearchResult":
        raise _wrong_root(root, "eSearchResult", where)
    return ESearchResult(
        count=_int_child(root, "Count", where),
        ids=[text for el in root.iterfind("IdList/Id") if (text := clean_text(el.text))],
        webenv=clean_text(root.findtext("WebEnv")),
        query_key=clean_text(root.findtext("QueryKey")),
        retstart=_int_child(root, "RetStart", where, default=0),
        retmax=_int_child(root, "RetMax", where, default=0),
        warnings=[
            ": ".join(filter(None, (el.tag, _text(el))))
            for el in [*root.iterfind("ErrorList/*"), *root.iterfind("WarningList/*")]
        ],
    )


def parse_efetch(body: bytes, where: str = "efetch") -> list[dict[str, Any]]:
    """One record per PubmedArticle and PubmedBookArticle, in response order."""
    root = _parse_xml(body, where)
    _raise_on_error_element(root, where)
    if root.tag != "PubmedArticleSet":
        raise _wrong_root(root, "PubmedArticleSet", where)
    records = []
    for position, element in enumerate(root, start=1):
        if element.tag == "PubmedArticle":
            records.append(_article_record(element, position, where))
        elif element.tag == "PubmedBookArticle":
            records.append(_book_record(element, position, where))
    return records


def _parse_xml(body: bytes, where: str) -> ET.Element:
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise _unreadable(body, where, str(exc)) from exc
    if root.tag.rpartition("}")[2].lower() == "html":  # well-formed XHTML is still an error page
        raise SourceFormatError.unreadable(SOURCE, where, body, "XML", "an HTML document")
    return root


def _unreadable(body: bytes, where: str, detail: str) -> SourceFormatError:
    """NCBI answers rate limiting with a JSON error even for XML requests: surface it."""
    try:
        message = json.loads(body).get("error")
    except (ValueError, AttributeError):
        message = None
    if message:
        return SourceFormatError(
            SOURCE,
            where,
            f"the server returned an error: {message}",
            "slow down (3 requests/s without an API key, 10 with one) and retry",
        )
    return SourceFormatError.unreadable(SOURCE, where, body, "XML", detail)


def _raise_on_error_element(root: ET.Element, where: str) -> None:
    error = root if root.tag == "ERROR" else root.find("ERROR")
    if error is not None:
        message = _text(error) or "(no message)"
        raise SourceFormatError(
            SOURCE,
            where,
            f"E-utilities reported an error: {message}",
            "check the query term, db and history parameters (WebEnv/query_key expire)",
        )


def _wrong_root(root: ET.Element, expected: str, where: str) -> SourceFormatError:
    return SourceFormatError(
        SOURCE,
        where,
        f"expected <{expected}>, got <{root.tag}>",
        "check that the request uses db=pubmed and retmode=xml",
    )


def _int_child(root: ET.Element, tag: str, where: str, default: int | None = None) -> int:
    text = clean_text(root.findtext(tag))
    if text is None and default is not None:
        return default
    try:
        return int(text or "")
    except ValueError:
        raise SourceFormatError(
            SOURCE,
            where,
            f"<{tag}> is {text!r}, not a number",
            "the response is not a complete esearch result; retry the request",
        ) from None


def _text(element: ET.Element | None) -> str | None:
    """All text inside an element, inline markup (<i>, <sup>, MathML) flattened."""
    return None if element is None else clean_text("".join(_inline_parts(element, False)))


def _inline_parts(element: ET.Element, in_math: bool) -> list[str]:
    """Text pieces in document order; MathML layout whitespace is dropped.

    Pretty-printed MathML puts newlines between ``<mml:mi>`` tokens, which
    would otherwise turn "V̇O2max" into "V . O 2 m a x".
    """
    in_math = in_math or element.tag.startswith(_MATHML)
    is_token = element.tag in _MATHML_TOKENS
    parts = [_keep(element.text, in_math and not is_token)]
    for child in element:
        parts += _inline_parts(child, in_math)
        parts.append(_keep(child.tail, in_math))
    return parts


def _keep(text: str | None, layout: bool) -> str:
    """Drop whitespace-only text where it is only layout (between MathML elements)."""
    return "" if not text or (layout and not text.strip()) else text


def _article_record(article: ET.Element, position: int, where: str) -> dict[str, Any]:
    citation = _required(article, "MedlineCitation", position, where)
    pmid = _pmid(citation, position, where)
    item = _required(citation, "Article", position, where)
    journal = item.find("Journal")
    issue = journal.find("JournalIssue") if journal is not None else None
    authors, first_author = _authors(item.find("AuthorList"))
    publication_types = [text for el in item.iterfind("PublicationTypeList/PublicationType") if (text := _text(el))]
    record = empty_record("pubmed", pmid)
    record.update(
        pmid=pmid,
        doi=_doi(item, article.find("PubmedData/ArticleIdList")),
        title=_title(item.find("ArticleTitle"), item.find("VernacularTitle")),
        abstract=_abstract(item.find("Abstract")),
        authors=authors,
        first_author=first_author,
        year=_journal_year(issue, item),
        journal=_first_text(journal, "Title", "ISOAbbreviation")
        or clean_text(citation.findtext("MedlineJournalInfo/MedlineTA")),
        volume=_first_text(issue, "Volume"),
        issue=_first_text(issue, "Issue"),
        pages=_pages(item),
        item_type=publication_item_type(publication_types),
        publication_types="; ".join(publication_types) or None,
        notice_of=_notice_of(citation),
        language=clean_text(item.findtext("Language")),
        pmcid=_pmcid(article.find("PubmedData/ArticleIdList")),
        oa_url=_pmc_url(article.find("PubmedData/ArticleIdList")),
        raw=_serialize(article),
    )
    return record


#: ``CommentsCorrections`` link types from a notice to the work it is about, and the notice's kind.
_NOTICE_LINKS = {"ErratumFor": "erratum", "RetractionOf": "retraction", "ExpressionOfConcernFor": "retraction"}


def _notice_of(citation: ET.Element) -> str | None:
    """The works a notice corrects or retracts, from its ``CommentsCorrections`` links: "erratum:pmid:N"."""
    found = [
        f"{_NOTICE_LINKS[kind]}:pmid:{pmid}"
        for link in citation.iterfind("CommentsCorrectionsList/CommentsCorrections")
        if (kind := link.get("RefType", "")) in _NOTICE_LINKS and (pmid := _text(link.find("PMID")))
    ]
    return "; ".join(dict.fromkeys(found)) or None


def _book_record(article: ET.Element, position: int, where: str) -> dict[str, Any]:
    document = _required(article, "BookDocument", position, where)
    pmid = _pmid(document, position, where)
    book = document.find("Book")
    book_title = _first_text(book, "BookTitle")
    chapter_title = document.find("ArticleTitle")
    authors, first_author = _authors(document.find("AuthorList[@Type='authors']"))
    record = empty_record("pubmed", pmid)
    record.update(
        pmid=pmid,
        doi=_doi(document, article.find("PubmedBookData/ArticleIdList"), document.find("ArticleIdList")),
        title=_title(chapter_title, document.find("VernacularTitle")) or book_title,
        abstract=_abstract(document.find("Abstract")),
        authors=authors,
        first_author=first_author,
        year=leading_year(book.findtext("PubDate/Year") if book is not None else None)
        or leading_year(document.findtext("ContributionDate/Year")),
        journal=book_title if chapter_title is not None else None,
        volume=_first_text(book, "Volume"),
        pages=_pages(document),
        item_type="book chapter" if chapter_title is not None else "book",
        language=clean_text(document.findtext("Language")),
        pmcid=_pmcid(article.find("PubmedBookData/ArticleIdList")),
        oa_url=_pmc_url(article.find("PubmedBookData/ArticleIdList")),
        raw=_serialize(article),
    )
    return record


def _required(parent: ET.Element, tag: str, position: int, where: str) -> ET.Element:
    element = parent.find(tag)
    if element is None:
        raise SourceFormatError(
            SOURCE,
            where,
            f"{parent.tag} #{position} has no <{tag}>",
            "the record is incomplete; refetch it by PMID",
        )
    return element


def _pmid(parent: ET.Element, position: int, where: str) -> str:
    pmid = normalize_pmid(parent.findtext("PMID"))
    if pmid is None:
        raise SourceFormatError(
            SOURCE,
            where,
            f"record #{position} has no valid <PMID>",
            "the record is incomplete; refetch the page",
        )
    return pmid


def _first_text(parent: ET.Element | None, *tags: str) -> str | None:
    if parent is None:
        return None
    return next((text for tag in tags if (text := _text(parent.find(tag)))), None)


def _title(title: ET.Element | None, vernacular: ET.Element | None) -> str | None:
    """The English title; NLM brackets translated titles and uses "[Not Available]."."""
    text = _text(title)
    match = _BRACKETED.match(text or "")
    if match:
        inner = match.group("inner").strip()
        keep_period = match.group("period") and not inner.endswith((".", "?", "!"))
        text = inner + "." if keep_period else inner
    if not text or text.rstrip(".").lower() == "not available":
        return _text(vernacular)
    return text


def _abstract(abstract: ET.Element | None) -> str | None:
    if abstract is None:
        return None
    paragraphs = []
    for part in abstract.iterfind("AbstractText"):
        text = _text(part)
        category = part.get("NlmCategory")
        label = part.get("Label") or (category if category != "UNASSIGNED" else None)
        if text:
            paragraphs.append(f"{label}: {text}" if label else text)
    return "\n\n".join(paragraphs) or None


def _authors(author_list: ET.Element | None) -> tuple[list[str], str | None]:
    """("Surname, Given" list, first author's surname or collective name)."""
    authors: list[str] = []
    first_author = None
    for author in author_list.iterfind("Author") if author_list is not None else ():
        if author.get("ValidYN") == "N":
            continue
        surname = _text(author.find("LastName")) or _text(author.find("CollectiveName"))
        name = format_name(surname, _first_text(author, "ForeName", "Initials"))
        if name:
            authors.append(name)
            first_author = first_author or surname
    return authors, first_author


def _journal_year(issue: ET.Element | None, item: ET.Element) -> int | None:
    if issue is not None:
        year = leading_year(issue.findtext("PubDate/Year")) or leading_year(issue.findtext("PubDate/MedlineDate"))
        if year:
            return year
    return leading_year(item.findtext("ArticleDate/Year"))


def _pages(item: ET.Element) -> str | None:
    return (
        _first_text(item, "Pagination/MedlinePgn")
        or page_range(item.findtext("Pagination/StartPage"), item.findtext("Pagination/EndPage"))
        or _first_text(item, "ELocationID[@EIdType='pii']")
    )


def _doi(item: ET.Element, *id_lists: ET.Element | None) -> str | None:
    """The record's own DOI: direct ArticleIds only, never those of cited references."""
    candidates = [
        el.text for id_list in id_lists if id_list is not None for el in id_list.iterfind("ArticleId[@IdType='doi']")
    ]
    candidates += [el.text for el in item.iterfind("ELocationID[@EIdType='doi']") if el.get("ValidYN") != "N"]
    return next((doi for text in candidates if (doi := normalize_doi(text))), None)


def _pmcid(id_list: ET.Element | None) -> str | None:
    """The record's own PubMed Central id ("PMC123"), from its ``ArticleId IdType="pmc"``."""
    return None if id_list is None else normalize_pmcid(id_list.findtext("ArticleId[@IdType='pmc']"))


def _pmc_url(id_list: ET.Element | None) -> str | None:
    pmcid = _pmcid(id_list)
    return f"https://www.ncbi.nlm.nih.gov/pmc/articles/{pmcid}/" if pmcid else None


def publication_item_type(publication_types: Iterable[str]) -> str:
    """PubMed's type of a record: the most telling of its PublicationTypes, else a journal article."""
    return telling_type(publication_types) or "journal article"


def _serialize(element: ET.Element) -> str:
    """The element as XML text, without the whitespace that followed it in the set."""
    detached = copy.copy(element)
    detached.tail = None
    return ET.tostring(detached, encoding="unicode")
