#!/usr/bin/env python
"""Render the bundled sample snapshot from ``hysem_assets/sample/articles.yaml``.

The snapshot imitates what PubMed, OpenAlex, Scopus, Europe PMC, Crossref and Unpaywall return for the
sample query, so that the production clients run unchanged against the local mirror and the
later stages (deduplication, enrichment, PDFs) meet realistic disagreements between sources.
Every value, identifiers and dates included, is derived from the YAML, so re-running the
script reproduces the committed files byte for byte.

Usage: python scripts/build_sample.py [--out DIR] [--source articles.yaml]

Other bundled snapshots (hysem_assets/snapshots/*) are rendered the same way from their own
articles.yaml; ``openalex_topic`` in a YAML replaces the sample's OpenAlex topic.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "hysem_assets" / "sample"
SOURCES = ("pubmed", "openalex", "scopus")

#: Placeholder the mirror replaces with its own root URL when it serves a response.
MIRROR = "{MIRROR}"
#: Fixed "harvest" timestamps keep the output independent of the day the script runs.
HARVESTED = dt.datetime(2025, 6, 30, 4, 12, 45, 118223)
PUBMED_HEADER = (
    '<?xml version="1.0" ?>\n'
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
NLM_CATEGORIES = {
    "BACKGROUND": "BACKGROUND",
    "OBJECTIVE": "OBJECTIVE",
    "METHODS": "METHODS",
    "RESULTS": "RESULTS",
    "CONCLUSIONS": "CONCLUSIONS",
}
PUBLICATION_TYPES = {
    "Journal Article": "D016428",
    "Review": "D016454",
    "Systematic Review": "D000078182",
    "Published Erratum": "D016425",
    "Editorial": "D016421",
    "Letter": "D016422",
    "Research Support, Non-U.S. Gov't": "D013485",
    "Retraction of Publication": "D016441",
    "Retracted Publication": "D016440",
    "Randomized Controlled Trial": "D016449",
    "Clinical Trial": "D016430",
    "Multicenter Study": "D016448",
    "Meta-Analysis": "D017418",
    "Observational Study": "D064888",
    "Case Reports": "D002363",
}
LANGUAGES = {"eng": "en", "spa": "es", "chi": "zh"}
COUNTRIES = {
    "DE": "Germany",
    "ES": "Spain",
    "CN": "China",
    "NO": "Norway",
    "VN": "Viet Nam",
    "US": "United States",
    "IN": "India",
    "CA": "Canada",
    "GB": "United Kingdom",
    "CH": "Switzerland",
    "KR": "South Korea",
    "JP": "Japan",
    "BR": "Brazil",
    "IT": "Italy",
    "GH": "Ghana",
    "SE": "Sweden",
    "DK": "Denmark",
    "FI": "Finland",
    "NL": "Netherlands",
    "FR": "France",
    "TW": "Taiwan",
    "AU": "Australia",
}


@dataclass(frozen=True)
class KindInfo:
    """How each source labels one kind of work."""

    pubmed: tuple[str, ...]
    openalex: str
    crossref: str
    scopus: tuple[str, str]


KINDS = {
    "journal-article": KindInfo(("Journal Article",), "article", "journal-article", ("ar", "Article")),
    "review": KindInfo(("Journal Article", "Review"), "review", "journal-article", ("re", "Review")),
    "erratum": KindInfo(("Published Erratum",), "erratum", "journal-article", ("er", "Erratum")),
    # Crossref deposits retraction notices as journal articles; the update-to link says what they are.
    "retraction": KindInfo(("Retraction of Publication",), "retraction", "journal-article", ("er", "Erratum")),
    "editorial": KindInfo(("Editorial",), "editorial", "journal-article", ("ed", "Editorial")),
    "letter": KindInfo(("Letter",), "letter", "journal-article", ("le", "Letter")),
    "preprint": KindInfo((), "preprint", "posted-content", ("ar", "Article")),
    "conference-paper": KindInfo((), "article", "proceedings-article", ("cp", "Conference Paper")),
    "book-chapter": KindInfo(("Review",), "book-chapter", "book-chapter", ("ch", "Book Chapter")),
}
#: Notice -> notice-for relations that the noticed work must mirror (``has-erratum`` ...).
MIRRORED_RELATIONS = (("erratum-for", "has-erratum"), ("retraction-for", "has-retraction"))
#: Kinds published without peer review (no received/revised/accepted history).
NOTICE_KINDS = ("erratum", "retraction", "editorial")
AGGREGATION_TYPES = {"journal": "Journal", "conference": "Conference Proceeding", "book": "Book"}
#: Planted download faults (``oa.fault`` in the YAML): where the best location's link points,
#: relative to the mirror's /files/, and the status the PDF download stage must report.
#: The oversized/, loop/ and slow/ routes are generated by the mirror; see its module docs.
FAULTS: dict[str, tuple[str, str]] = {
    "html": ("{stem}.html", "not_pdf"),
    "truncated": ("{stem}.pdf", "invalid_pdf"),
    "missing": ("{stem}.pdf", "http_error"),
    "oversized": ("oversized/{stem}.pdf", "too_large"),
    "loop": ("loop/{stem}.pdf", "http_error"),
    "slow": ("slow/{stem}.pdf", "timeout"),
}
FREE_TO_READ = {
    "gold": ("publisherfullgold", "Gold"),
    "hybrid": ("publisherhybridgold", "Hybrid Gold"),
    "bronze": ("publisherfree2read", "Bronze"),
    "green": ("repository", "Green"),
}


# ----------------------------------------------------------------------------- primitives


def digits(seed: str, count: int) -> str:
    """A stable pseudo-random digit string: fictional ids that never change between runs."""
    value = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")
    return str(value % 10**count).zfill(count)


def orcid_for(seed: str) -> str:
    """A fictional ORCID iD with a valid ISO 7064 11,2 check character."""
    base = "00000002" + digits(seed, 7)
    total = 0
    for char in base:
        total = (total + int(char)) * 2
    check = (12 - total % 11) % 11
    full = base + ("X" if check == 10 else str(check))
    return "-".join(full[i : i + 4] for i in range(0, 16, 4))


def parse_date(value: Any) -> tuple[int, int | None, int | None]:
    """YAML dates come as ``date``, ``int`` (year) or ``"YYYY-MM"`` strings."""
    if isinstance(value, dt.date):
        return value.year, value.month, value.day
    parts = [int(part) for part in str(value).split("-")]
    parts += [None] * (3 - len(parts))
    return parts[0], parts[1], parts[2]


def as_date(parts: tuple[int, int | None, int | None]) -> dt.date:
    year, month, day = parts
    return dt.date(year, month or 1, day or 1)


def date_parts(parts: tuple[int, int | None, int | None]) -> list[int]:
    return [value for value in parts if value is not None]


TAGS = re.compile(r"</?(?:i|b|u|sub|sup)>")


def plain(text: str) -> str:
    """Drop inline markup for sources that only carry plain text."""
    return TAGS.sub("", text)


FOLD = str.maketrans({"ø": "o", "Ø": "O", "ß": "ss", "đ": "d", "Đ": "D", "æ": "ae", "Æ": "AE"})


def ascii_fold(text: str) -> str:
    """Strip diacritics the way some indexes do (Müller -> Muller, Ødegaard -> Odegaard)."""
    decomposed = unicodedata.normalize("NFKD", text.translate(FOLD))
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def initials(given: str) -> str:
    """PubMed initials: "María José" -> "MJ", "Min-jun" -> "MJ", "Emily R." -> "ER"."""
    return "".join(part[0].upper() for part in re.split(r"[\s.\-]+", given) if part)


def dotted_initials(given: str) -> str:
    """Scopus initials: "María José" -> "M.J.", "Min-jun" -> "M.-J."."""
    return "".join(
        "-".join(part[0].upper() + "." for part in word.split("-") if part) for word in given.replace(".", " ").split()
    )


def abbreviated_pages(first: str, last: str) -> str:
    """NLM's MedlinePgn style for older records: 211-224 -> 211-24."""
    keep = 0
    while keep < len(first) and len(first) == len(last) and first[keep] == last[keep]:
        keep += 1
    return f"{first}-{last[keep:]}" if len(first) == len(last) else f"{first}-{last}"


def split_pages(pages: str | None) -> tuple[str | None, str | None]:
    if not pages:
        return None, None
    first, _, last = str(pages).partition("-")
    return first, last or None


def publisher_page(doi: str | None) -> str | None:
    """Fictional publisher landing page: the sample's DOIs resolve nowhere real."""
    return f"https://www.example-publisher.org/doi/{doi}" if doi else None


def file_stem(doi: str) -> str:
    """Name of a DOI's files on the mirror: slashes cannot appear in a file name."""
    return doi.replace("/", "_")


def pdf_url(doi: str) -> str:
    return f"{MIRROR}/files/{file_stem(doi)}.pdf"


def timestamp(moment: dt.datetime) -> dict[str, Any]:
    """Crossref's date object with date-parts, date-time and epoch milliseconds."""
    epoch = int(moment.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
    return {
        "date-parts": [[moment.year, moment.month, moment.day]],
        "date-time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "timestamp": epoch,
    }


# ----------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class Author:
    key: str
    given: str | None = None
    family: str | None = None
    collective: str | None = None
    institution: dict[str, Any] | None = None
    orcid: str | None = None
    native: str | None = None

    def folded(self) -> Author:
        return replace(self, given=ascii_fold(self.given or ""), family=ascii_fold(self.family or ""))

    @property
    def display(self) -> str:
        return self.collective or f"{self.given} {self.family}"


@dataclass(frozen=True)
class Record:
    """One source's view of a work: its id plus the fields that source spells differently."""

    source: str
    source_id: str
    work: dict[str, Any]
    doi_style: str | None
    pmc: str | None
    canonical_doi: str | None

    @property
    def doi(self) -> str | None:
        doi = self.work.get("doi")
        if doi and self.doi_style == "upper":
            return doi.upper()
        return doi


class Sample:
    """The parsed YAML with people, institutions and journals resolved into each work."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.query: str = data["query"]
        self.mesh: dict[str, str] = data["mesh_vocabulary"]
        self.topic: dict[str, Any] = data.get("openalex_topic", TOPIC)
        institutions = {key: {"key": key, **value} for key, value in data["institutions"].items()}
        self.people = {key: self._person(key, value, institutions) for key, value in data["people"].items()}
        self.journals = {key: {"key": key, **value} for key, value in data["journals"].items()}
        works = [self._work(article) for article in data["articles"]]
        self.works = [work for work in works if not work.get("cited_only")]
        #: Works reached only through citations (``cited_only``): kept out of every search and the truth's works.
        self.cited_only = [work for work in works if work.get("cited_only")]
        self.by_id = {work["id"]: work for work in works}
        self._check()

    @staticmethod
    def _person(key: str, value: dict[str, Any], institutions: dict[str, Any]) -> Author:
        return Author(
            key=key,
            given=value["given"],
            family=value["family"],
            institution=institutions[value["aff"]],
            orcid=orcid_for(key) if value.get("orcid") else None,
            native=value.get("native"),
        )

    def _author(self, entry: str | dict[str, str]) -> Author:
        if isinstance(entry, str):
            return self.people[entry]
        return Author(key=entry["collective"], collective=entry["collective"])

    def _work(self, article: dict[str, Any]) -> dict[str, Any]:
        work = dict(article)
        work["authors"] = [self._author(entry) for entry in article["authors"]]
        work["journal"] = self.journals[article["journal"]]
        work["published"] = parse_date(article["published"])
        work["epub"] = parse_date(article["epub"]) if "epub" in article else None
        for key in ("volume", "issue", "pages"):
            if work.get(key) is not None:
                work[key] = str(work[key])
        work.setdefault("relations", {})
        work["sources"] = article.get("sources", {})
        return work

    def _check(self) -> None:
        """Fail loudly on the mistakes a hand-edited YAML invites."""
        seen: set[tuple[str, str]] = set()
        for work in self.works + self.cited_only:
            if work.get("cited_only") and (set(work["sources"]) != {"openalex"} or work.get("oa") or work["relations"]):
                raise ValueError(f"{work['id']}: a cited_only work is an OpenAlex record only, without oa or relations")
            for target in work.get("cites", []):
                if target not in self.by_id or "openalex" not in self.by_id[target]["sources"]:
                    raise ValueError(f"{work['id']}: cites {target}, which is not an OpenAlex work of the file")
            for source, spec in work["sources"].items():
                key = (source, str(spec["id"]))
                if source not in SOURCES or key in seen:
                    raise ValueError(f"{work['id']}: bad or duplicate record {key}")
                seen.add(key)
            for target in work["relations"].values():
                if target not in self.by_id:
                    raise ValueError(f"{work['id']}: relation to unknown work {target}")
            for forward, backward in MIRRORED_RELATIONS:
                target = work["relations"].get(forward)
                if target and self.by_id[target]["relations"].get(backward) != work["id"]:
                    raise ValueError(f"{work['id']}: {forward} {target} lacks {backward} {work['id']}")
            self._check_oa(work)
        if len(self.by_id) != len(self.works) + len(self.cited_only):
            raise ValueError("duplicate work ids")

    @staticmethod
    def _check_oa(work: dict[str, Any]) -> None:
        """Every link a PDF downloader may follow must stay on the mirror: the sample is offline."""
        oa = work.get("oa")
        if not oa:
            return
        fault = oa.get("fault")
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"{work['id']}: unknown oa.fault '{fault}' (one of {sorted(FAULTS)})")
        if not oa.get("pdf") and fault != "html":
            raise ValueError(f"{work['id']}: an open-access work without a PDF link needs fault: html")
        if oa.get("repository_pdf") and not (work["sources"].get("pubmed", {}).get("pmc") and fault):
            raise ValueError(f"{work['id']}: repository_pdf needs a pmc and a failing best location")

    def record(self, work: dict[str, Any], source: str) -> Record | None:
        """The work as ``source`` holds it, or None when that source lacks it."""
        spec = work["sources"].get(source)
        if spec is None:
            return None
        overrides = {k: v for k, v in spec.items() if k not in ("id", "pmc", "ascii_names", "doi_style")}
        view = {**work, **overrides}
        if spec.get("ascii_names"):
            view["authors"] = [a if a.collective else a.folded() for a in work["authors"]]
        return Record(source, str(spec["id"]), view, spec.get("doi_style"), spec.get("pmc"), work.get("doi"))

    def records(self, source: str) -> list[Record]:
        found = (self.record(work, source) for work in self.works)
        return [record for record in found if record is not None]

    def source_id(self, work_id: str, source: str) -> str | None:
        spec = self.by_id[work_id]["sources"].get(source)
        return str(spec["id"]) if spec else None


def sections(abstract: Any) -> list[tuple[str | None, str]]:
    """Abstract as (label, text) pairs; an unlabelled abstract is one pair with label None."""
    if not abstract:
        return []
    if isinstance(abstract, str):
        return [(None, abstract)]
    return list(abstract.items())


def english_title(work: dict[str, Any]) -> str:
    return work.get("title_en") or work["title"]


def vernacular_title(work: dict[str, Any]) -> str | None:
    return work["title"] if work.get("title_en") else work.get("title_native")


def is_open(work: dict[str, Any]) -> bool:
    return bool(work.get("oa"))


def copyright_line(work: dict[str, Any]) -> str:
    holder = "The Author(s)" if is_open(work) else work["journal"]["publisher"]
    return f"© {work['published'][0]} {holder}"


# ----------------------------------------------------------------------------- PubMed


def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrs)
    if text is not None:
        element.text = text
    return element


def sub_markup(parent: ET.Element, tag: str, text: str, **attrs: str) -> ET.Element:
    """An element whose text may hold PubMed's inline markup (<i>, <sub>, <sup>...)."""
    element = sub(parent, tag, **attrs)
    fragment = ET.fromstring(f"<x>{text}</x>")
    element.text = fragment.text
    element.extend(list(fragment))
    return element


def date_element(parent: ET.Element, tag: str, day: dt.date, padded: bool = True, **attrs: str) -> None:
    element = sub(parent, tag, **attrs)
    sub(element, "Year", str(day.year))
    sub(element, "Month", f"{day.month:02d}" if padded else str(day.month))
    sub(element, "Day", f"{day.day:02d}" if padded else str(day.day))


def pub_date(parent: ET.Element, parts: tuple[int, int | None, int | None]) -> None:
    element = sub(parent, "PubDate")
    sub(element, "Year", str(parts[0]))
    if parts[1]:
        sub(element, "Month", MONTHS[parts[1] - 1])
    if parts[2]:
        sub(element, "Day", f"{parts[2]:02d}")


def pubmed_title(work: dict[str, Any]) -> str:
    """PubMed brackets translated titles and ends every title with a period."""
    if work["language"] != "eng":
        return f"[{english_title(work)}]."
    title = work["title"]
    return title if title.endswith((".", "?", "!")) else f"{title}."


def pubmed_authors(parent: ET.Element, authors: list[Author], **attrs: str) -> None:
    author_list = sub(parent, "AuthorList", CompleteYN="Y", **attrs)
    for author in authors:
        element = sub(author_list, "Author", ValidYN="Y")
        if author.collective:
            sub(element, "CollectiveName", author.collective)
            continue
        sub(element, "LastName", author.family)
        sub(element, "ForeName", author.given)
        sub(element, "Initials", initials(author.given or ""))
        if author.orcid:
            sub(element, "Identifier", author.orcid, Source="ORCID")
        info = sub(element, "AffiliationInfo")
        sub(info, "Affiliation", author.institution["raw"] + ".")


def pubmed_abstract(parent: ET.Element, work: dict[str, Any]) -> None:
    parts = sections(work.get("abstract"))
    if not parts:
        return
    abstract = sub(parent, "Abstract")
    for label, text in parts:
        attrs = {"Label": label, "NlmCategory": NLM_CATEGORIES[label]} if label else {}
        sub_markup(abstract, "AbstractText", text, **attrs)
    sub(abstract, "CopyrightInformation", f"Copyright {copyright_line(work)}.")


def pubmed_journal(article: ET.Element, work: dict[str, Any]) -> None:
    journal = work["journal"]
    element = sub(article, "Journal")
    if journal.get("eissn"):
        sub(element, "ISSN", journal["eissn"], IssnType="Electronic")
    else:
        sub(element, "ISSN", journal["issn"], IssnType="Print")
    issue = sub(element, "JournalIssue", CitedMedium="Internet" if journal.get("eissn") else "Print")
    sub(issue, "Volume", work["volume"])
    if work.get("issue"):
        sub(issue, "Issue", work["issue"])
    pub_date(issue, work["published"])
    sub(element, "Title", journal["nlm_title"])
    sub(element, "ISOAbbreviation", journal["iso"])


def pubmed_pagination(article: ET.Element, work: dict[str, Any]) -> None:
    first, last = split_pages(work.get("pages"))
    if not first:
        return
    element = sub(article, "Pagination")
    sub(element, "StartPage", first)
    if last:
        sub(element, "EndPage", last)
    old_style = work["published"][0] < 2020
    medline = (abbreviated_pages(first, last) if old_style else f"{first}-{last}") if last else first
    sub(element, "MedlinePgn", medline)


def pubmed_citation_reference(sample: Sample, target_id: str) -> str:
    """The RefSource text PubMed prints for a linked article."""
    work = sample.by_id[target_id]
    year, month, _ = work["published"]
    when = f"{year} {MONTHS[month - 1]}" if month else str(year)
    issue = f"({work['issue']})" if work.get("issue") else ""
    return f"{work['journal']['iso']}. {when};{work['volume']}{issue}:{work['pages']}. doi: {work['doi']}."


#: CommentsCorrections RefType for each notice relation, in the order PubMed lists them.
PUBMED_LINKS = (
    ("ErratumFor", "erratum-for"),
    ("ErratumIn", "has-erratum"),
    ("RetractionOf", "retraction-for"),
    ("RetractionIn", "has-retraction"),
)


def pubmed_corrections(citation: ET.Element, work: dict[str, Any], sample: Sample) -> None:
    links = [(kind, work["relations"].get(relation)) for kind, relation in PUBMED_LINKS]
    links = [(kind, target) for kind, target in links if target and sample.source_id(target, "pubmed")]
    if not links:
        return
    element = sub(citation, "CommentsCorrectionsList")
    for kind, target in links:
        link = sub(element, "CommentsCorrections", RefType=kind)
        sub(link, "RefSource", pubmed_citation_reference(sample, target))
        sub(link, "PMID", sample.source_id(target, "pubmed"), Version="1")


def pubmed_history(parent: ET.Element, work: dict[str, Any], with_review: bool) -> dt.date:
    """Append the PubMed History block; returns the date the record entered PubMed."""
    entered = as_date(work["epub"] or work["published"])
    history = sub(parent, "History")
    steps = [("received", 150), ("revised", 90), ("accepted", 60)] if with_review else []
    for status, days_before in steps:
        date_element(history, "PubMedPubDate", entered - dt.timedelta(days=days_before), padded=False, PubStatus=status)
    for status, days_after in (("pubmed", 1), ("medline", 45), ("entrez", 0)):
        day = entered + dt.timedelta(days=days_after)
        element = sub(history, "PubMedPubDate", PubStatus=status)
        for tag, value in (("Year", day.year), ("Month", day.month), ("Day", day.day), ("Hour", 6), ("Minute", 0)):
            sub(element, tag, str(value))
    return entered


def pubmed_keywords(parent: ET.Element, work: dict[str, Any]) -> None:
    if work.get("keywords"):
        keywords = sub(parent, "KeywordList", Owner="NOTNLM")
        for keyword in work["keywords"]:
            sub(keywords, "Keyword", keyword, MajorTopicYN="N")


def pubmed_mesh(citation: ET.Element, work: dict[str, Any], sample: Sample) -> None:
    """Alphabetical MeSH headings; the first two listed in the YAML are the major topics."""
    headings = sub(citation, "MeshHeadingList")
    for term in sorted(work["mesh"]):
        heading = sub(headings, "MeshHeading")
        major = "Y" if term in work["mesh"][:2] else "N"
        sub(heading, "DescriptorName", term, UI=sample.mesh[term], MajorTopicYN=major)


def pubmed_data(root: ET.Element, tag: str, record: Record, with_review: bool) -> None:
    """PubmedData / PubmedBookData: history, status and the article ids."""
    data = sub(root, tag)
    pubmed_history(data, record.work, with_review)
    sub(data, "PublicationStatus", "ppublish")
    ids = sub(data, "ArticleIdList")
    sub(ids, "ArticleId", record.source_id, IdType="pubmed")
    if record.doi:
        sub(ids, "ArticleId", record.doi, IdType="doi")
    if record.pmc:
        sub(ids, "ArticleId", record.pmc, IdType="pmc")


def pubmed_types(work: dict[str, Any]) -> tuple[str, ...]:
    """PublicationType names; a retracted article keeps its own and gains "Retracted Publication"."""
    names = KINDS[work["kind"]].pubmed + tuple(work.get("extra_pubtypes", ()))
    return names + (("Retracted Publication",) if "has-retraction" in work["relations"] else ())


def pubmed_revised(work: dict[str, Any], sample: Sample) -> dt.date:
    """DateRevised: some months after entry, or just after a later retraction notice is linked."""
    entered = as_date(work["epub"] or work["published"])
    revised = entered + dt.timedelta(days=400)
    notice = work["relations"].get("has-retraction")
    if notice:
        notice_work = sample.by_id[notice]
        revised = max(revised, as_date(notice_work["epub"] or notice_work["published"]) + dt.timedelta(days=7))
    return min(revised, HARVESTED.date())


def pubmed_article_part(citation: ET.Element, record: Record) -> None:
    """The MedlineCitation/Article element: journal issue, title, abstract, authors, types."""
    work = record.work
    journal = work["journal"]
    model = "Print-Electronic" if work["epub"] else ("Print" if journal.get("issn") else "Electronic")
    article = sub(citation, "Article", PubModel=model)
    pubmed_journal(article, work)
    sub_markup(article, "ArticleTitle", pubmed_title(work))
    pubmed_pagination(article, work)
    if record.doi:
        sub(article, "ELocationID", record.doi, EIdType="doi", ValidYN="Y")
    pubmed_abstract(article, work)
    pubmed_authors(article, work["authors"])
    sub(article, "Language", work["language"])
    types = sub(article, "PublicationTypeList")
    for name in pubmed_types(work):
        sub(types, "PublicationType", name, UI=PUBLICATION_TYPES[name])
    vernacular = vernacular_title(work)
    if vernacular and work["language"] != "eng":
        latin = vernacular[-1].isascii()
        sub(article, "VernacularTitle", f"{vernacular}." if latin and not vernacular.endswith(".") else vernacular)
    if work["epub"]:
        date_element(article, "ArticleDate", as_date(work["epub"]), DateType="Electronic")


def pubmed_article(record: Record, sample: Sample) -> ET.Element:
    """A PubmedArticle; records with MeSH terms are MEDLINE-indexed, the others are not."""
    work = record.work
    journal = work["journal"]
    indexed = bool(work.get("mesh"))
    root = ET.Element("PubmedArticle")
    if indexed:
        citation = sub(root, "MedlineCitation", Status="MEDLINE", Owner="NLM", IndexingMethod="Automated")
    else:
        citation = sub(root, "MedlineCitation", Status="PubMed-not-MEDLINE", Owner="NLM")
    sub(citation, "PMID", record.source_id, Version="1")
    entered = as_date(work["epub"] or work["published"])
    if indexed:
        date_element(citation, "DateCompleted", entered + dt.timedelta(days=45))
    date_element(citation, "DateRevised", pubmed_revised(work, sample))
    pubmed_article_part(citation, record)
    info = sub(citation, "MedlineJournalInfo")
    sub(info, "Country", journal["country"])
    sub(info, "MedlineTA", journal["iso"])
    sub(info, "NlmUniqueID", journal["nlm_id"])
    sub(info, "ISSNLinking", journal.get("issn") or journal["eissn"])
    if indexed:
        sub(citation, "CitationSubset", "IM")
    pubmed_corrections(citation, work, sample)
    if indexed:
        pubmed_mesh(citation, work, sample)
    pubmed_keywords(citation, work)
    pubmed_data(root, "PubmedData", record, with_review=work["kind"] not in NOTICE_KINDS)
    return root


def pubmed_book_article(record: Record, sample: Sample) -> ET.Element:
    """A PubmedBookArticle: a Bookshelf chapter with its book, editors and NBK accession."""
    work = record.work
    book = work["journal"]
    root = ET.Element("PubmedBookArticle")
    document = sub(root, "BookDocument")
    sub(document, "PMID", record.source_id, Version="1")
    ids = sub(document, "ArticleIdList")
    sub(ids, "ArticleId", work["bookaccession"], IdType="bookaccession")
    book_element = sub(document, "Book")
    publisher = sub(book_element, "Publisher")
    sub(publisher, "PublisherName", book["publisher"])
    sub(publisher, "PublisherLocation", book["location"])
    sub(book_element, "BookTitle", book["title"], book=book["key"])
    pub_date(book_element, work["published"])
    pubmed_authors(book_element, [sample.people[key] for key in book["editors"]], Type="editors")
    sub(book_element, "Medium", "Internet")
    sub(document, "LocationLabel", work["chapter"], Type="chapter")
    sub_markup(document, "ArticleTitle", pubmed_title(work), book=book["key"], part=work["bookaccession"].lower())
    sub(document, "Language", work["language"])
    pubmed_authors(document, work["authors"], Type="authors")
    for name in KINDS[work["kind"]].pubmed:
        sub(document, "PublicationType", name, UI=PUBLICATION_TYPES[name])
    pubmed_abstract(document, work)
    pubmed_keywords(document, work)
    contributed = as_date(work["published"])
    date_element(document, "ContributionDate", contributed)
    date_element(document, "DateRevised", contributed + dt.timedelta(days=180))
    pubmed_data(root, "PubmedBookData", record, with_review=False)
    return root


def render_pubmed(sample: Sample) -> str:
    """One efetch-style PubmedArticleSet, newest PMIDs first as PubMed lists them."""
    records = sorted(sample.records("pubmed"), key=lambda r: int(r.source_id), reverse=True)
    lines = []
    for record in records:
        build = pubmed_book_article if record.work["kind"] == "book-chapter" else pubmed_article
        lines.append(ET.tostring(build(record, sample), encoding="unicode"))
    return PUBMED_HEADER + "<PubmedArticleSet>\n" + "\n".join(lines) + "</PubmedArticleSet>\n"


# ----------------------------------------------------------------------------- OpenAlex


def openalex_url(prefix: str, seed: str, count: int) -> str:
    return f"https://openalex.org/{prefix}{digits(seed, count)}"


def openalex_source(journal: dict[str, Any]) -> dict[str, Any]:
    issns = [issn for issn in (journal.get("issn"), journal.get("eissn")) if issn]
    source_type = {"book": "book series"}.get(journal["type"], journal["type"])
    return {
        "id": openalex_url("S", journal["key"], 10),
        "display_name": journal["title"],
        "issn_l": issns[0] if issns else None,
        "issn": issns or None,
        "is_oa": bool(journal.get("oa")),
        "is_in_doaj": bool(journal.get("oa")) and journal["type"] == "journal",
        "is_core": journal["type"] == "journal",
        "host_organization": openalex_url("P", journal["publisher"], 10),
        "host_organization_name": journal["publisher"],
        "type": source_type,
    }


PMC_SOURCE = {
    "id": "https://openalex.org/S4306400806",
    "display_name": "PubMed Central",
    "issn_l": None,
    "issn": None,
    "is_oa": True,
    "is_in_doaj": False,
    "is_core": False,
    "host_organization": None,
    "host_organization_name": None,
    "type": "repository",
}


def openalex_location(
    source: dict[str, Any], landing: str | None, *, is_oa: bool, pdf: str | None, terms: str | None, version: str
) -> dict[str, Any]:
    return {
        "is_oa": is_oa,
        "landing_page_url": landing,
        "pdf_url": pdf,
        "source": source,
        "license": terms,
        "license_id": f"https://openalex.org/licenses/{terms}" if terms else None,
        "version": version,
        "is_accepted": True,
        "is_published": version == "publishedVersion",
    }


def openalex_locations(record: Record) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The publisher (or preprint server) location plus a PMC copy where one exists, and the best OA one."""
    work = record.work
    oa = work.get("oa") or {}
    doi = record.canonical_doi
    preprint = work["kind"] == "preprint"
    green = oa.get("status") == "green" and not preprint
    open_at_source = bool(oa) and not green
    landing = f"https://doi.org/{doi}" if work.get("doi") else publisher_page(doi)
    primary = openalex_location(
        openalex_source(work["journal"]),
        landing,
        is_oa=open_at_source,
        pdf=pdf_url(doi) if open_at_source and oa.get("pdf") else None,
        terms=oa.get("license") if open_at_source else None,
        version="submittedVersion" if preprint else "publishedVersion",
    )
    locations = [primary]
    pmc = work["sources"].get("pubmed", {}).get("pmc")
    if pmc or green:
        locations.append(
            openalex_location(
                PMC_SOURCE,
                f"https://www.ncbi.nlm.nih.gov/pmc/articles/{pmc}" if pmc else landing,
                is_oa=True,
                pdf=pdf_url(doi) if green else None,
                terms=oa.get("license"),
                version="acceptedVersion" if green else "publishedVersion",
            )
        )
    return locations, next((location for location in locations if location["is_oa"]), None)


def openalex_authorships(record: Record) -> list[dict[str, Any]]:
    work = record.work
    authors = work["authors"]
    authorships = []
    for position, author in enumerate(authors):
        place = "first" if position == 0 else ("last" if position == len(authors) - 1 else "middle")
        raw_name = author.native if author.native and openalex_language(work) == "zh" else author.display
        institution = author.institution
        institutions = (
            []
            if institution is None
            else [
                {
                    "id": openalex_url("I", institution["key"], 10),
                    "display_name": institution["name"],
                    "ror": f"https://ror.org/0{digits('ror' + institution['key'], 8)}",
                    "country_code": institution["country"],
                    "type": institution["type"],
                    "lineage": [openalex_url("I", institution["key"], 10)],
                }
            ]
        )
        authorships.append(
            {
                "author_position": place,
                "author": {
                    "id": openalex_url("A5", author.key, 9),
                    "display_name": author.display,
                    "orcid": f"https://orcid.org/{author.orcid}" if author.orcid else None,
                },
                "institutions": institutions,
                "countries": [institution["country"]] if institution else [],
                "is_corresponding": position == 0,
                "raw_author_name": raw_name,
                "raw_affiliation_strings": [institution["raw"]] if institution else [],
                "affiliations": [
                    {
                        "raw_affiliation_string": institution["raw"],
                        "institution_ids": [openalex_url("I", institution["key"], 10)],
                    }
                ]
                if institution
                else [],
            }
        )
    return authorships


def inverted_index(work: dict[str, Any]) -> dict[str, list[int]] | None:
    """OpenAlex ships abstracts only as word -> positions; section labels become plain words."""
    words: list[str] = []
    for label, text in sections(work.get("abstract")):
        if label:
            words.append(label.capitalize())
        words.extend(plain(text).split())
    if not words:
        return None
    index: dict[str, list[int]] = {}
    for position, word in enumerate(words):
        index.setdefault(word, []).append(position)
    return index


def counts_by_year(work: dict[str, Any]) -> list[dict[str, int]]:
    """Spread the citation count over the years since publication, newest first."""
    total = work.get("cited_by", 0)
    years = list(range(HARVESTED.year, work["published"][0], -1)) or [HARVESTED.year]
    share, rest = divmod(total, len(years))
    counts = [share + (1 if i < rest else 0) for i in range(len(years))]
    return [{"year": year, "cited_by_count": count} for year, count in zip(years, counts) if count]


def referenced_works(work: dict[str, Any], sample: Sample) -> list[str]:
    """Cite up to three earlier sample works so the citation graph is not empty, plus the works in ``cites``.

    A retraction notice cites just the retracted article; a ``cited_only`` work just its ``cites``.
    """
    retracted = work["relations"].get("retraction-for")
    if retracted:
        target = sample.by_id[retracted]["sources"].get("openalex")
        return [f"https://openalex.org/{target['id']}"] if target else []
    named = {f"https://openalex.org/{sample.source_id(target, 'openalex')}" for target in work.get("cites", [])}
    if work.get("cited_only"):
        return sorted(named)
    earlier = [
        other
        for other in sample.works
        if "openalex" in other["sources"] and as_date(other["published"]) < as_date(work["published"])
    ]
    earlier.sort(key=lambda other: digits(work["id"] + other["id"], 6))
    return sorted(named | {f"https://openalex.org/{other['sources']['openalex']['id']}" for other in earlier[:3]})


TOPIC = {
    "id": "https://openalex.org/T10190",
    "display_name": "Air Quality and Health Impacts",
    "subfield": {"id": "https://openalex.org/subfields/2307", "display_name": "Health, Toxicology and Mutagenesis"},
    "field": {"id": "https://openalex.org/fields/23", "display_name": "Environmental Science"},
    "domain": {"id": "https://openalex.org/domains/3", "display_name": "Physical Sciences"},
}


def openalex_language(work: dict[str, Any]) -> str:
    """OpenAlex uses two-letter codes; a record may already override it with one."""
    return LANGUAGES.get(work["language"], work["language"])


def openalex_work(record: Record, sample: Sample) -> dict[str, Any]:
    work = record.work
    wid = record.source_id
    doi = record.doi
    doi_url = f"https://doi.org/{doi}" if doi else None
    date = as_date(work["epub"] or work["published"])
    locations, best = openalex_locations(record)
    primary = locations[0]
    status = (work.get("oa") or {}).get("status", "closed")
    pmid = sample.source_id(work["id"], "pubmed")
    pmc = work["sources"].get("pubmed", {}).get("pmc")
    ids: dict[str, str] = {"openalex": f"https://openalex.org/{wid}"}
    if doi_url:
        ids["doi"] = doi_url
    if pmid:
        ids["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{pmid}"
    if pmc:
        ids["pmcid"] = f"https://www.ncbi.nlm.nih.gov/pmc/articles/{pmc[3:]}"
    first, last = split_pages(work.get("pages"))
    authorships = openalex_authorships(record)
    institution_ids = sorted({i["id"] for a in authorships for i in a["institutions"]})
    score = 0.9 + int(digits(wid, 2)) / 1000
    references = referenced_works(work, sample)
    return {
        "id": f"https://openalex.org/{wid}",
        "doi": doi_url,
        "title": work["title"],
        "display_name": work["title"],
        "publication_year": date.year,
        "publication_date": date.isoformat(),
        "ids": ids,
        "language": openalex_language(work),
        "primary_location": primary,
        "type": KINDS[work["kind"]].openalex,
        "type_crossref": KINDS[work["kind"]].crossref,
        "indexed_in": ["crossref"]
        + (["doaj"] if primary["source"]["is_in_doaj"] else [])
        + (["pubmed"] if pmid else []),
        "open_access": {
            "is_oa": best is not None,
            "oa_status": status,
            "oa_url": (best["pdf_url"] or best["landing_page_url"]) if best else None,
            "any_repository_has_fulltext": len(locations) > 1,
        },
        "authorships": authorships,
        "countries_distinct_count": len({c for a in authorships for c in a["countries"]}),
        "institutions_distinct_count": len(institution_ids),
        "corresponding_author_ids": [authorships[0]["author"]["id"]],
        "corresponding_institution_ids": [i["id"] for i in authorships[0]["institutions"]],
        "cited_by_count": work.get("cited_by", 0),
        "biblio": {
            "volume": work.get("volume"),
            "issue": work.get("issue"),
            "first_page": first,
            "last_page": last or first,
        },
        "is_retracted": "has-retraction" in work["relations"],
        "is_paratext": False,
        "primary_topic": {**sample.topic, "score": round(score, 4)},
        "topics": [{**sample.topic, "score": round(score, 4)}],
        "keywords": [
            {
                "id": f"https://openalex.org/keywords/{re.sub(r'[^a-z0-9]+', '-', k.lower()).strip('-')}",
                "display_name": k,
                "score": round(0.7 - 0.1 * i, 2),
            }
            for i, k in enumerate(work.get("keywords", [])[:3])
        ],
        "mesh": [
            {
                "descriptor_ui": sample.mesh[term],
                "descriptor_name": term,
                "qualifier_ui": "",
                "qualifier_name": None,
                "is_major_topic": term in work["mesh"][:2],
            }
            for term in work.get("mesh", [])
        ]
        if pmid
        else [],
        "locations_count": len(locations),
        "locations": locations,
        "best_oa_location": best,
        "referenced_works_count": len(references),
        "referenced_works": references,
        "related_works": [],
        "abstract_inverted_index": inverted_index(work),
        "cited_by_api_url": f"https://api.openalex.org/works?filter=cites:{wid}",
        "counts_by_year": counts_by_year(work),
        "updated_date": HARVESTED.isoformat(timespec="microseconds"),
        "created_date": (date - dt.timedelta(days=3)).isoformat(),
    }


def render_openalex(sample: Sample) -> list[dict[str, Any]]:
    """OpenAlex works ordered as a relevance-sorted search would roughly return them."""
    works = [openalex_work(record, sample) for record in sample.records("openalex")]
    return sorted(works, key=lambda w: (-w["cited_by_count"], w["id"]))


def render_cited_only(sample: Sample) -> dict[str, str]:
    """The ``cited_only`` works, where the mirror serves them to identifier and ``cites:`` filters only."""
    records = [sample.record(work, "openalex") for work in sample.cited_only]
    works = sorted((openalex_work(record, sample) for record in records if record), key=lambda w: w["id"])
    return {"openalex/lookup_only.json": json_text(works)} if works else {}


# ----------------------------------------------------------------------------- Scopus


def scopus_abstract(work: dict[str, Any]) -> str | None:
    """Scopus flattens sections into "Label: text" runs and appends the copyright line."""
    parts = sections(work.get("abstract"))
    if not parts:
        return None
    text = " ".join(f"{label.capitalize()}: {plain(body)}" if label else plain(body) for label, body in parts)
    return f"{text} {copyright_line(work)}"


def scopus_affiliation(institution: dict[str, Any]) -> dict[str, Any]:
    parts = institution["raw"].split(", ")
    city = parts[parts.index(institution["name"]) + 1]
    afid = "60" + digits(institution["key"], 6)
    return {
        "@_fa": "true",
        "affiliation-url": f"https://api.elsevier.com/content/affiliation/affiliation_id/{afid}",
        "afid": afid,
        "affilname": institution["name"],
        "affiliation-city": city,
        "affiliation-country": COUNTRIES[institution["country"]],
    }


def scopus_authors(authors: list[Author]) -> list[dict[str, Any]]:
    """Scopus lists individual authors only; group authors are dropped."""
    people = [author for author in authors if not author.collective]
    entries = []
    for seq, author in enumerate(people, start=1):
        authid = "57" + digits(author.key, 9)
        entries.append(
            {
                "@_fa": "true",
                "@seq": str(seq),
                "author-url": f"https://api.elsevier.com/content/author/author_id/{authid}",
                "authid": authid,
                "authname": f"{author.family} {dotted_initials(author.given or '')}",
                "surname": author.family,
                "given-name": author.given,
                "initials": dotted_initials(author.given or ""),
                "afid": [{"@_fa": "true", "$": "60" + digits(author.institution["key"], 6)}],
            }
        )
    return entries


def article_number(first: str | None, last: str | None) -> str | None:
    """Electronic article numbers (e214, 100148) go to Scopus' article-number, not pageRange."""
    if first and not last and (not first.isdigit() or len(first) > 4):
        return first
    return None


def scopus_cover(work: dict[str, Any]) -> tuple[str, str]:
    year, month, day = work["published"]
    cover = dt.date(year, month or 1, day or 1).isoformat()
    parts = (str(day) if day else "", MONTH_NAMES[month - 1] if month else "", str(year))
    shown = " ".join(part for part in parts if part)
    return cover, shown


def scopus_entry(record: Record, sample: Sample) -> dict[str, Any]:
    work = record.work
    journal = work["journal"]
    sid = record.source_id
    kind = KINDS[work["kind"]]
    authors = scopus_authors(work["authors"])
    cover, shown = scopus_cover(work)
    first, last = split_pages(work.get("pages"))
    number = article_number(first, last)
    institutions = []
    for author in work["authors"]:
        if author.institution and author.institution not in institutions:
            institutions.append(author.institution)
    entry: dict[str, Any] = {
        "@_fa": "true",
        "link": [
            {"@_fa": "true", "@ref": "self", "@href": f"https://api.elsevier.com/content/abstract/scopus_id/{sid}"},
            {
                "@_fa": "true",
                "@ref": "author-affiliation",
                "@href": f"https://api.elsevier.com/content/abstract/scopus_id/{sid}?field=author,affiliation",
            },
            {
                "@_fa": "true",
                "@ref": "scopus",
                "@href": f"https://www.scopus.com/inward/record.uri?partnerID=HzOxMe3b&scp={sid}&origin=inward",
            },
            {
                "@_fa": "true",
                "@ref": "scopus-citedby",
                "@href": f"https://www.scopus.com/inward/citedby.uri?partnerID=HzOxMe3b&scp={sid}&origin=inward",
            },
        ],
        "prism:url": f"https://api.elsevier.com/content/abstract/scopus_id/{sid}",
        "dc:identifier": f"SCOPUS_ID:{sid}",
        "eid": f"2-s2.0-{sid}",
        "dc:title": plain(english_title(work)),
        "dc:creator": authors[0]["authname"] if authors else None,
        "prism:publicationName": journal["title"],
    }
    if journal.get("issn"):
        entry["prism:issn"] = journal["issn"].replace("-", "")
    if journal.get("eissn"):
        entry["prism:eIssn"] = journal["eissn"].replace("-", "")
    if journal.get("isbn"):
        entry["prism:isbn"] = [{"@_fa": "true", "$": journal["isbn"].replace("-", "")}]
    if work.get("volume"):
        entry["prism:volume"] = work["volume"]
    if work.get("issue"):
        entry["prism:issueIdentifier"] = work["issue"]
    entry["prism:pageRange"] = None if number or not first else (f"{first}-{last}" if last else first)
    entry["prism:coverDate"] = cover
    entry["prism:coverDisplayDate"] = shown
    if record.doi:
        entry["prism:doi"] = record.doi
    description = scopus_abstract(work)
    if description:
        entry["dc:description"] = description
    entry["citedby-count"] = str(round(work.get("cited_by", 0) * 0.9))
    entry["affiliation"] = [scopus_affiliation(institution) for institution in institutions]
    pmid = sample.source_id(work["id"], "pubmed")
    if pmid:
        entry["pubmed-id"] = pmid
    entry["prism:aggregationType"] = AGGREGATION_TYPES[journal["type"]]
    entry["subtype"], entry["subtypeDescription"] = kind.scopus
    entry["author-count"] = {"@limit": "100", "@total": str(len(authors)), "$": str(len(authors))}
    entry["author"] = authors
    if work.get("keywords"):
        entry["authkeywords"] = " | ".join(work["keywords"])
    if number:
        entry["article-number"] = number
    entry["source-id"] = "2110" + digits(journal["key"], 7)
    entry["fund-no"] = "undefined"
    entry["openaccess"] = "1" if is_open(work) else "0"
    entry["openaccessFlag"] = is_open(work)
    if is_open(work):
        code, label = FREE_TO_READ[work["oa"]["status"]]
        entry["freetoread"] = {"value": [{"$": "all"}, {"$": code}]}
        entry["freetoreadLabel"] = {"value": [{"$": "All Open Access"}, {"$": label}]}
    return entry


def render_scopus(sample: Sample) -> list[dict[str, Any]]:
    """Scopus entries sorted by cover date, newest first, as the search API does by default."""
    entries = [scopus_entry(record, sample) for record in sample.records("scopus")]
    return sorted(entries, key=lambda e: (e["prism:coverDate"], e["eid"]), reverse=True)


# ----------------------------------------------------------------------------- Crossref


JATS_TAGS = {"i": "italic", "b": "bold", "sub": "sub", "sup": "sup"}


def jats(text: str) -> str:
    """Crossref abstracts are JATS fragments with namespaced inline markup."""
    return re.sub(r"<(/?)(i|b|sub|sup)>", lambda m: f"<{m.group(1)}jats:{JATS_TAGS[m.group(2)]}>", text)


def crossref_abstract(work: dict[str, Any]) -> str | None:
    parts = sections(work.get("abstract"))
    if not parts:
        return None
    if parts[0][0] is None:
        return f"<jats:p>{jats(parts[0][1])}</jats:p>"
    return "".join(
        f"<jats:sec><jats:title>{label.capitalize()}</jats:title><jats:p>{jats(text)}</jats:p></jats:sec>"
        for label, text in parts
    )


def crossref_person(author: Author, position: int) -> dict[str, Any]:
    sequence = "first" if position == 0 else "additional"
    if author.collective:
        return {"name": author.collective, "sequence": sequence, "affiliation": []}
    person: dict[str, Any] = {}
    if author.orcid:
        person.update({"ORCID": f"https://orcid.org/{author.orcid}", "authenticated-orcid": False})
    person.update(
        {
            "given": author.given,
            "family": author.family,
            "sequence": sequence,
            "affiliation": [{"name": author.institution["raw"]}],
        }
    )
    return person


def crossref_relations(work: dict[str, Any], sample: Sample) -> dict[str, Any]:
    relation_names = {"preprint": ("has-preprint", "object"), "published-as": ("is-preprint-of", "subject")}
    relations: dict[str, Any] = {}
    for kind, target in sorted(work["relations"].items()):
        if kind in relation_names:
            name, asserted = relation_names[kind]
            relations[name] = [{"id-type": "doi", "id": sample.by_id[target]["doi"], "asserted-by": asserted}]
    return relations


def at(day: dt.date, hour: int = 0, minute: int = 0) -> dict[str, Any]:
    return timestamp(dt.datetime.combine(day, dt.time(hour, minute)))


def crossref_container(work: dict[str, Any], sample: Sample) -> dict[str, Any]:
    """Where the work appeared: journal, proceedings (with event), book or preprint server."""
    journal = work["journal"]
    fields: dict[str, Any] = {"publisher": journal["publisher"]}
    if journal["type"] == "repository":
        fields.update(
            {
                "subtype": "preprint",
                "institution": [{"name": journal["title"]}],
                "group-title": "Epidemiology",
                "posted": {"date-parts": [date_parts(work["published"])]},
            }
        )
    else:
        fields["container-title"] = [journal["title"]]
        fields["short-container-title"] = [journal["iso"]] if journal.get("iso") else []
    if journal.get("event"):
        event = journal["event"]
        fields["event"] = {
            "name": event["name"],
            "location": event["location"],
            "start": {"date-parts": [date_parts(parse_date(event["start"]))]},
            "end": {"date-parts": [date_parts(parse_date(event["end"]))]},
        }
    if journal.get("isbn"):
        fields["ISBN"] = [journal["isbn"]]
    if journal.get("editors"):
        fields["editor"] = [crossref_person(sample.people[key], i) for i, key in enumerate(journal["editors"])]
    issns = [
        (value, medium)
        for value, medium in ((journal.get("issn"), "print"), (journal.get("eissn"), "electronic"))
        if value
    ]
    if issns:
        fields["ISSN"] = [value for value, _ in issns]
        fields["issn-type"] = [{"type": medium, "value": value} for value, medium in issns]
    return fields


def crossref_dates(work: dict[str, Any]) -> dict[str, Any]:
    """Print, online and issued dates plus Crossref's own created/deposited/indexed stamps."""
    printed = date_parts(work["published"])
    online = date_parts(work["epub"]) if work["epub"] else printed
    created = as_date(work["epub"] or work["published"])
    dates: dict[str, Any] = {
        "indexed": {**timestamp(HARVESTED), "version": "3.41.2"},
        "created": at(created, 9, 30),
        "deposited": at(created + dt.timedelta(days=30), 14, 5),
        "published-online": {"date-parts": [online]},
        "issued": {"date-parts": [online]},
        "published": {"date-parts": [online]},
    }
    if work.get("volume") or work["kind"] in ("conference-paper", "book-chapter"):
        dates["published-print"] = {"date-parts": [printed]}
    if work.get("issue"):
        dates["journal-issue"] = {"issue": work["issue"], "published-print": {"date-parts": [printed]}}
    return dates


def crossref_access(work: dict[str, Any]) -> dict[str, Any]:
    """License and links: a text-mining PDF link where the publisher (or server) hosts one."""
    doi = work["doi"]
    oa = work.get("oa") or {}
    links = [
        {
            "URL": f"https://doi.org/{doi}",
            "content-type": "unspecified",
            "content-version": "vor",
            "intended-application": "similarity-checking",
        }
    ]
    if oa.get("pdf") and (oa["status"] != "green" or work["kind"] == "preprint"):
        links.insert(
            0,
            {
                "URL": pdf_url(doi),
                "content-type": "application/pdf",
                "content-version": "vor",
                "intended-application": "text-mining",
            },
        )
    access: dict[str, Any] = {"link": links, "resource": {"primary": {"URL": publisher_page(doi)}}}
    if oa.get("license"):
        access["license"] = [
            {
                "start": at(as_date(work["epub"] or work["published"])),
                "content-version": "vor",
                "delay-in-days": 0,
                "URL": f"https://creativecommons.org/licenses/{oa['license'].removeprefix('cc-')}/4.0/",
            }
        ]
    abstract = crossref_abstract(work) if is_open(work) else None
    if abstract:
        access["abstract"] = abstract
    return access


#: Notice relation -> (Crossref field, whether this work is the notice, update type, label).
CROSSREF_UPDATES = (
    ("erratum-for", "update-to", True, "correction", "Correction"),
    ("has-erratum", "updated-by", False, "correction", "Correction"),
    ("retraction-for", "update-to", True, "retraction", "Retraction"),
    ("has-retraction", "updated-by", False, "retraction", "Retraction"),
)


def crossref_updates(work: dict[str, Any], sample: Sample) -> dict[str, Any]:
    """Correction and retraction links in both directions, and preprint/published-version relations.

    The notice carries ``update-to`` (the DOI it corrects or retracts); the corrected or
    retracted work carries ``updated-by`` (the notice's DOI), both dated by the notice.
    """
    updates: dict[str, Any] = {"relation": crossref_relations(work, sample)}
    for relation, field_name, is_notice, update_type, label in CROSSREF_UPDATES:
        target = work["relations"].get(relation)
        if target:
            notice = work if is_notice else sample.by_id[target]
            updates.setdefault(field_name, []).append(
                {
                    "DOI": sample.by_id[target]["doi"],
                    "type": update_type,
                    "label": label,
                    "source": "publisher",
                    "updated": at(as_date(notice["epub"] or notice["published"])),
                }
            )
    return updates


def crossref_message(work: dict[str, Any], sample: Sample) -> dict[str, Any]:
    """A Crossref ``/works/{doi}`` message with the fields clients read most."""
    doi = work["doi"]
    # A retraction notice cites only the article it retracts.
    references = 1 if work["kind"] == "retraction" else 20 + int(digits("refs" + doi, 2)) % 40
    message: dict[str, Any] = {
        "DOI": doi,
        "type": KINDS[work["kind"]].crossref,
        "title": [work["title"]],
        "original-title": [work["title_native"]] if work.get("title_native") else [],
        "author": [crossref_person(author, i) for i, author in enumerate(work["authors"])],
        **crossref_container(work, sample),
    }
    for key in ("volume", "issue"):
        if work.get(key):
            message[key] = work[key]
    if work.get("pages"):
        message["page"] = work["pages"]
    message.update(crossref_dates(work))
    message.update(crossref_access(work))
    message.update(crossref_updates(work, sample))
    message.update(
        {
            "language": LANGUAGES[work["language"]],
            "reference-count": references,
            "references-count": references,
            "is-referenced-by-count": round(work.get("cited_by", 0) * 0.8),
            "member": digits("member" + work["journal"]["publisher"], 5).lstrip("0"),
            "prefix": doi.split("/")[0],
            "source": "Crossref",
            "score": 1,
            "content-domain": {"domain": [], "crossmark-restriction": False},
            "URL": f"https://doi.org/{doi}",
        }
    )
    return message


def render_crossref(sample: Sample) -> list[dict[str, Any]]:
    works = sorted((work for work in sample.works if work.get("doi")), key=lambda work: work["doi"])
    return [crossref_message(work, sample) for work in works]


# ----------------------------------------------------------------------------- Unpaywall


def unpaywall_location(work: dict[str, Any], host: str, is_best: bool) -> dict[str, Any]:
    oa = work["oa"]
    doi = work["doi"]
    pmc = work["sources"].get("pubmed", {}).get("pmc")
    preprint = work["kind"] == "preprint"
    repository = host == "repository" and not preprint
    # PMC's article page is served by the mirror: a downloader falls back to it when the best location fails
    landing = f"{MIRROR}/files/{pmc}.html" if repository and pmc else f"https://doi.org/{doi}"
    pdf = pdf_url(doi) if oa.get("pdf") and (is_best or host == "publisher") else None
    if is_best and oa.get("fault"):
        planted = f"{MIRROR}/files/" + FAULTS[oa["fault"]][0].format(stem=file_stem(doi))
        pdf, landing = (planted, landing) if pdf else (None, planted)
    if not is_best and oa.get("repository_pdf"):
        pdf = f"{MIRROR}/files/{pmc}.pdf"
    evidence = {
        "publisher": "oa journal (via doaj)" if work["journal"].get("oa") else "open (via page says license)",
        "repository": "oa repository (via OAI-PMH doi match)" if preprint else "oa repository (via pmcid lookup)",
    }[host]
    if oa["status"] == "bronze":
        evidence = "open (via free article)"
    version = "submittedVersion" if preprint else ("acceptedVersion" if oa["status"] == "green" else "publishedVersion")
    return {
        "endpoint_id": None,
        "evidence": evidence,
        "host_type": host,
        "is_best": is_best,
        "license": oa.get("license"),
        "pmh_id": f"oai:healthrxiv.org:{doi}" if preprint else None,
        "repository_institution": "HealthRxiv" if preprint else None,
        "updated": HARVESTED.isoformat(timespec="microseconds"),
        "url": pdf or landing,
        "url_for_landing_page": landing,
        "url_for_pdf": pdf,
        "version": version,
    }


def unpaywall_object(work: dict[str, Any]) -> dict[str, Any]:
    journal = work["journal"]
    oa = work.get("oa")
    pmc = work["sources"].get("pubmed", {}).get("pmc")
    locations: list[dict[str, Any]] = []
    if oa:
        green = oa["status"] == "green" or work["kind"] == "preprint"
        best_host = "repository" if green else "publisher"
        locations.append(unpaywall_location(work, best_host, True))
        if pmc and not green:
            locations.append(unpaywall_location(work, "repository", False))
    issns = [issn for issn in (journal.get("issn"), journal.get("eissn")) if issn]
    published = as_date(work["epub"] or work["published"])
    return {
        "best_oa_location": locations[0] if locations else None,
        "data_standard": 2,
        "doi": work["doi"],
        "doi_url": f"https://doi.org/{work['doi']}",
        "genre": KINDS[work["kind"]].crossref,
        "has_repository_copy": any(location["host_type"] == "repository" for location in locations),
        "is_oa": bool(locations),
        "is_paratext": False,
        "journal_is_in_doaj": bool(journal.get("oa")) and journal["type"] == "journal",
        "journal_is_oa": bool(journal.get("oa")),
        "journal_issn_l": issns[0] if issns else None,
        "journal_issns": ",".join(issns) or None,
        "journal_name": journal["title"],
        "oa_locations": locations,
        "oa_locations_embargoed": [],
        "oa_status": oa["status"] if oa else "closed",
        "published_date": published.isoformat(),
        "publisher": journal["publisher"],
        "title": plain(work["title"]),
        "updated": HARVESTED.isoformat(timespec="microseconds"),
        "year": published.year,
        "z_authors": [
            {"name": a.collective, "sequence": "additional"}
            if a.collective
            else {"family": a.family, "given": a.given, "sequence": "first" if i == 0 else "additional"}
            for i, a in enumerate(work["authors"])
        ],
    }


def render_unpaywall(sample: Sample) -> dict[str, dict[str, Any]]:
    """One Unpaywall v2 object per DOI, keyed by file name (slashes become underscores)."""
    return {f"{work['doi'].replace('/', '_')}.json": unpaywall_object(work) for work in sample.works if work.get("doi")}


def mirror_files(work: dict[str, Any]) -> dict[str, str]:
    """Files under files/ that the Unpaywall links of a work with a DOI need, with what each holds.

    ``pdf`` is the article, ``truncated`` the article cut short, ``html`` a landing page;
    scripts/build_sample_pdfs.py renders them. Missing files and generated routes need none.
    """
    oa = work.get("oa")
    if not oa:
        return {}
    fault = oa.get("fault")
    stem = file_stem(work["doi"])
    pmc = work["sources"].get("pubmed", {}).get("pmc")
    files: dict[str, str] = {}
    if oa.get("pdf") and not fault:
        files[f"{stem}.pdf"] = "pdf"
    if fault in ("html", "truncated"):
        files[FAULTS[fault][0].format(stem=stem)] = fault
    if pmc:
        files[f"{pmc}.html"] = "html"
    if oa.get("repository_pdf"):
        files[f"{pmc}.pdf"] = "pdf"
    return files


def expected_pdf_status(work: dict[str, Any]) -> str:
    """The status the PDF download stage must report for the work's DOI."""
    oa = work.get("oa")
    if not oa:
        return "no_oa_location"
    if oa.get("repository_pdf") or not oa.get("fault"):
        return "saved"
    return FAULTS[oa["fault"]][1]


# ----------------------------------------------------------------------------- truth


def truth_record(record: Record) -> dict[str, str]:
    source_id = f"2-s2.0-{record.source_id}" if record.source == "scopus" else record.source_id
    return {"source": record.source, "source_id": source_id}


def render_truth(sample: Sample) -> dict[str, Any]:
    """Which source records describe the same work: the answer key for deduplication."""
    works = []
    for work in sample.works:
        records = [truth_record(r) for r in (sample.record(work, s) for s in SOURCES) if r is not None]
        works.append(
            {
                "id": work["id"],
                "kind": work["kind"],
                "title": plain(work["title"]),
                "doi": work.get("doi"),
                "year": work["published"][0],
                "records": records,
                "relations": [{"type": kind, "work": target} for kind, target in sorted(work["relations"].items())],
            }
        )
    return {
        "query": sample.query,
        "expected_counts": {source: len(sample.records(source)) for source in SOURCES},
        "unique_works": len(works),
        "multi_source_works": sum(len(work["records"]) > 1 for work in works),
        "retracted_dois": sorted(work["doi"] for work in sample.works if "has-retraction" in work["relations"]),
        "pdf_status": dict(sorted((w["doi"], expected_pdf_status(w)) for w in sample.works if w.get("doi"))),
        "works": works,
        **({"cited_only_works": [cited_only_truth(w, sample) for w in sample.cited_only]} if sample.cited_only else {}),
    }


def cited_only_truth(work: dict[str, Any], sample: Sample) -> dict[str, Any]:
    """A work no search finds, with the works it cites and the works citing it (ids of this file)."""
    return {
        "id": work["id"],
        "kind": work["kind"],
        "title": plain(work["title"]),
        "doi": work.get("doi"),
        "year": work["published"][0],
        "records": [truth_record(record) for record in [sample.record(work, "openalex")] if record],
        "cites": sorted(work.get("cites", [])),
        "cited_by": sorted(other["id"] for other in sample.by_id.values() if work["id"] in other.get("cites", [])),
    }


# ----------------------------------------------------------------------------- Europe PMC


def europepmc_abstract(work: dict[str, Any]) -> str | None:
    """Europe PMC's abstractText: labelled sections as ``<h4>Label</h4>text``, inline markup kept."""
    parts = sections(work.get("abstract"))
    return "".join(f"<h4>{label.title()}</h4>{text}" if label else text for label, text in parts) or None


def europepmc_authors(authors: list[Author]) -> tuple[str, list[dict[str, Any]]]:
    """authorString ("Family GI, ...") and authorList, as Europe PMC copies them from PubMed (affiliations left out)."""
    listed: list[dict[str, Any]] = []
    for author in authors:
        if author.collective:
            listed.append({"collectiveName": author.collective})
            continue
        entry = {
            "fullName": f"{author.family} {initials(author.given or '')}".strip(),
            "firstName": author.given,
            "lastName": author.family,
            "initials": initials(author.given or ""),
        }
        if author.orcid:
            entry["authorId"] = {"type": "ORCID", "value": author.orcid}
        listed.append(entry)
    names = [entry.get("collectiveName") or entry["fullName"] for entry in listed]
    return (", ".join(names) + "." if names else ""), listed


def europepmc_links(record: Record) -> list[dict[str, str]]:
    """The DOI link (Europe PMC marks it subscription-only), plus the mirror's PMC copies of an open article."""
    work = record.work
    links = []
    if record.doi:
        links.append(
            {
                "availability": "Subscription required",
                "availabilityCode": "S",
                "documentStyle": "doi",
                "site": "DOI",
                "url": f"https://doi.org/{record.doi}",
            }
        )
    if record.pmc and is_open(work):
        styles = [("html", f"{record.pmc}.html")]
        if work["oa"].get("repository_pdf"):
            styles.append(("pdf", f"{record.pmc}.pdf"))
        for style, name in styles:
            links.append(
                {
                    "availability": "Open access",
                    "availabilityCode": "OA",
                    "documentStyle": style,
                    "site": "Europe_PMC",
                    "url": f"{MIRROR}/files/{name}",
                }
            )
    return links


def europepmc_result(record: Record, sample: Sample) -> dict[str, Any]:
    """The core search result of a PubMed record (source MED): Europe PMC copies the citation from PubMed.

    It created the record on the day it entered PubMed (the Entrez date the efetch history
    shows) and first indexed it a day later, as the real service does.
    """
    work = record.work
    journal = work["journal"]
    entered = as_date(work["epub"] or work["published"])
    printed = as_date(work["published"])
    book_revised = printed + dt.timedelta(days=180)  # the Bookshelf record's DateRevised
    author_string, author_list = europepmc_authors(work["authors"])
    result: dict[str, Any] = {"id": record.source_id, "source": "MED", "pmid": record.source_id}
    if record.pmc:
        result.update(pmcid=record.pmc, fullTextIdList={"fullTextId": [record.pmc]})
    if record.doi:
        result["doi"] = record.doi.lower()
    result["title"] = pubmed_title(work)
    if author_list:
        result.update(authorString=author_string, authorList={"author": author_list})
    if work["kind"] == "book-chapter":
        result["bookOrReportDetails"] = {"publisher": journal["publisher"], "yearOfPublication": work["published"][0]}
    else:
        info: dict[str, Any] = {"issue": work.get("issue"), "volume": work.get("volume")}
        info = {key: value for key, value in info.items() if value}
        year, month, _ = work["published"]
        info.update(
            dateOfPublication=f"{year} {MONTHS[month - 1]}" if month else str(year),
            yearOfPublication=work["published"][0],
            printPublicationDate=printed.isoformat(),
            journal={
                "title": journal["nlm_title"],
                "medlineAbbreviation": journal["iso"],
                "isoabbreviation": journal["iso"],
                "nlmid": journal["nlm_id"],
                **({"issn": journal["issn"]} if journal.get("issn") else {}),
                **({"essn": journal["eissn"]} if journal.get("eissn") else {}),
            },
        )
        result["journalInfo"] = info
    result["pubYear"] = str(work["published"][0])
    first, last = split_pages(work.get("pages"))
    if first:
        result["pageInfo"] = f"{first}-{last}" if last else first
    if abstract := europepmc_abstract(work):
        result["abstractText"] = abstract
    result.update(
        language=work["language"],
        pubModel="Print-Electronic" if work["epub"] else "Print",
        pubTypeList={"pubType": list(pubmed_types(work))},
    )
    if work.get("mesh"):
        major = set(work["mesh"][:2])
        result["meshHeadingList"] = {
            "meshHeading": [
                {"majorTopic_YN": "Y" if term in major else "N", "descriptorName": term}
                for term in sorted(work["mesh"])
            ]
        }
    if work.get("keywords"):
        result["keywordList"] = {"keyword": list(work["keywords"])}
    if links := europepmc_links(record):
        result["fullTextUrlList"] = {"fullTextUrl": links}
    in_pmc = "Y" if record.pmc else "N"
    result.update(
        isOpenAccess="Y" if record.pmc and is_open(work) else "N",
        inEPMC=in_pmc,
        inPMC=in_pmc,
        hasPDF="Y" if record.pmc and is_open(work) and work["oa"].get("repository_pdf") else "N",
        hasBook="Y" if work["kind"] == "book-chapter" else "N",
        citedByCount=0,
        hasReferences=in_pmc,
        dateOfCreation=entered.isoformat(),
        firstIndexDate=(entered + dt.timedelta(days=1)).isoformat(),
        dateOfRevision=(book_revised if work["kind"] == "book-chapter" else pubmed_revised(work, sample)).isoformat(),
        firstPublicationDate=min(entered, printed).isoformat(),
    )
    if work["epub"]:
        result["electronicPublicationDate"] = entered.isoformat()
    return result


def render_europepmc(sample: Sample) -> dict[str, str]:
    """Europe PMC core results for every work PubMed holds (same PMIDs and PMCIDs), newest PMIDs first."""
    records = sorted(sample.records("pubmed"), key=lambda r: int(r.source_id), reverse=True)
    return {"europepmc/works.json": json_text([europepmc_result(record, sample) for record in records])}


# ----------------------------------------------------------------------------- output


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1) + "\n"


def render(sample: Sample) -> dict[str, str]:
    """Every generated file, keyed by its path relative to the snapshot directory."""
    files = {
        "truth.json": json_text(render_truth(sample)),
        "pubmed/efetch.xml": render_pubmed(sample),
        "openalex/works.json": json_text(render_openalex(sample)),
        **render_cited_only(sample),
        "scopus/entries.json": json_text(render_scopus(sample)),
        "crossref/works.json": json_text(render_crossref(sample)),
        **render_europepmc(sample),
    }
    for name, body in render_unpaywall(sample).items():
        files[f"unpaywall/{name}"] = json_text(body)
    return files


def write(files: dict[str, str], out: Path) -> None:
    """Write the files, first removing stale Unpaywall objects of DOIs no longer listed."""
    stale = out / "unpaywall"
    if stale.is_dir():
        for path in stale.glob("*.json"):
            path.unlink()
    for relative, text in files.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SAMPLE_DIR / "articles.yaml", help="source-of-truth YAML")
    parser.add_argument("--out", type=Path, default=SAMPLE_DIR, help="snapshot directory to (re)write")
    args = parser.parse_args(argv)
    sample = Sample(yaml.safe_load(args.source.read_text(encoding="utf-8")))
    files = render(sample)
    write(files, args.out)
    counts = render_truth(sample)["expected_counts"]
    print(f"wrote {len(files)} files to {args.out} ({len(sample.works)} works; {counts})")


if __name__ == "__main__":
    main()
