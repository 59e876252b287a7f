"""A local mirror of the scholarly APIs that serves snapshot directories under the real paths.

The production clients only need different base URLs to run against it, so the embedded
profile and the tests stay offline while still exercising the real request, search, paging
and parsing code. Searches select records: PubMed ``term``, OpenAlex ``search`` (and its
``.search`` filters), Scopus and Europe PMC ``query`` are parsed in each source's syntax and evaluated
against every record's title, abstract, keywords, MeSH headings and authors
(``hysem_assets.mirror.search``), then paged the way the real API pages them; a search that
finds nothing answers with that API's empty result. Publication-date limits are not evaluated;
the dates a source added its records are, so a living review's re-search gets only what is new:
PubMed ``datetype=edat`` (or ``crdt``) with ``mindate``/``maxdate`` against each record's
Entrez (or PubMed) history date, and OpenAlex ``from_created_date``/``to_created_date`` against
``created_date``, and Europe PMC ``FIRST_IDATE:[from TO to]`` (or ``CREATION_DATE``) clauses in
``query`` against each result's ``firstIndexDate`` (``dateOfCreation``), paged by ``cursorMark``.
Scopus search entries carry no load date, so ``ORIG-LOAD-DATE`` is not
evaluated; a re-search there returns every match again, which merging by record id absorbs.
Identifier lookups (efetch ids, OpenAlex ``doi:``/``pmid:``/``openalex:`` filters, Crossref
and Unpaywall DOIs) select by identifier. OpenAlex ``cites:W1`` (``|`` for OR) selects the works
whose ``referenced_works`` hold W1, the forward citations; it pages like any other filter.

Snapshot layout (every folder optional; a missing one means an empty source)::

    pubmed/*.xml        PubmedArticleSet documents (efetch output)
    openalex/*.json     a list of works, an API page with "results", or one work; except
    openalex/lookup_only.json
                        the same, for works reached only by identifier or ``cites:`` filters
                        (e.g. the studies a sample work cites): no search or unfiltered listing
                        returns them, so they never join what a query found
    scopus/*.json       a list of search entries, or a {"search-results": ...} page
    crossref/*.json     a list of work messages, or an API response with "message"
    unpaywall/*.json    one Unpaywall object per file, or a list of them
    europepmc/*.json    Europe PMC core search results: a list, or a saved /search page with "resultList"
    jats/*.nxml         JATS full texts (also *.xml) named by PMCID, e.g. PMC123.nxml, served at
                        {europepmc base}/PMC123/fullTextXML as application/xml; 404 for any other id
    files/*             anything served under /files/ (PDFs)
    harvest.yaml        optional: the query (per source) the records were harvested with

A real engine found a snapshot's records with text the snapshot does not hold (full text,
Emtree and MeSH indexing), so evaluation alone may miss some of them; the query named in
``harvest.yaml`` is therefore answered with every record harvested for it, as a recording
would replay it. Several directories can be served as one: the embedded default serves the
sample and every snapshot under ``hysem_assets/snapshots``.

Any ``{MIRROR}`` in a served body is replaced by the mirror's own root URL, so snapshot
links such as ``{MIRROR}/files/x.pdf`` point back at the mirror whatever port it runs on.

Three generated routes misbehave on purpose, so that downloaders meet what the web does to
them without a large file in the snapshot (``{name}`` is free; the sample links use the DOI):

    /files/oversized/{name}   200 application/pdf: ``%PDF-`` then padding, OVERSIZED_BYTES in all, sent
                              chunked (no Content-Length), so only a cap enforced while streaming stops it
    /files/loop/{name}        302 back to itself, for ever
    /files/slow/{name}        200 application/pdf: ``%PDF-`` then one byte every SLOW_DRIP_INTERVAL_S,
                              never finishing in practice (a read timeout never fires; a total one must)
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime as dt
import json
import re
import secrets
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote
from xml.sax.saxutils import escape

import yaml
from aiohttp import web
from multidict import MultiDict, MultiDictProxy

from hysem_assets.mirror.search import (
    And,
    Dialect,
    Document,
    Node,
    compile_query,
    evaluate,
    openalex_filter_query,
    simplify,
    terms,
)
from hysem_assets.mirror.texts import mesh_forms, openalex_document, person, pubmed_document, scopus_document

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Middleware = Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]

MIRROR_PLACEHOLDER = "{MIRROR}"

#: Path prefix of each source on the mirror; a client's base URL is the root URL plus this.
SOURCE_PREFIXES: dict[str, str] = {
    "pubmed": "/pubmed/entrez/eutils",
    "openalex": "/openalex",
    "scopus": "/scopus",
    "crossref": "/crossref",
    "unpaywall": "/unpaywall",
    "europepmc": "/europepmc/webservices/rest",
}

PUBMED_SET_HEADER = (
    '<?xml version="1.0" ?>\n'
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)
ESEARCH_HEADER = (
    '<?xml version="1.0" encoding="UTF-8" ?>\n'
    '<!DOCTYPE eSearchResult PUBLIC "-//NLM//DTD esearch 20060628//EN" '
    '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">\n'
)
EFETCH_ERROR_HEADER = (
    '<?xml version="1.0" encoding="UTF-8" ?>\n'
    '<!DOCTYPE eFetchResult PUBLIC "-//NLM//DTD efetch 20131226//EN" '
    '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20131226/efetch.dtd">\n'
)
PUBMED_RECORD_TAGS = ("PubmedArticle", "PubmedBookArticle")
EUTILS_MAX_RETMAX = 10_000
OPENALEX_MAX_PER_PAGE = 200
OPENALEX_MAX_RESULTS = 10_000
SCOPUS_MAX_COUNT = 200
#: The file of ``openalex/`` holding works that only identifier and ``cites:`` filters reach.
OPENALEX_LOOKUP_ONLY_FILE = "lookup_only.json"
_DOI_PREFIX = re.compile(r"^(?:https?:/+(?:dx\.)?doi\.org/|doi:)", re.IGNORECASE)


def default_snapshot_dir() -> Path:
    """The sample snapshot bundled with the package (``hysem_assets/sample``)."""
    return Path(__file__).resolve().parent.parent / "sample"


def bundled_snapshot_dirs() -> list[Path]:
    """Every snapshot bundled with the package: the sample, then each folder of ``hysem_assets/snapshots``.

    The embedded default serves their union, so a query on any bundled subject finds its works.
    """
    extra = Path(__file__).resolve().parent.parent / "snapshots"
    found = sorted(path for path in extra.iterdir() if path.is_dir()) if extra.is_dir() else []
    return [default_snapshot_dir(), *(path for path in found if not path.name.startswith(("_", ".")))]


def base_urls(root_url: str) -> dict[str, str]:
    """Base URL per source for a mirror reachable at ``root_url``."""
    root = root_url.rstrip("/")
    return {source: root + prefix for source, prefix in SOURCE_PREFIXES.items()}


def doi_key(value: str) -> str:
    """Case-insensitive lookup key of a DOI given bare, as ``doi:...`` or as a resolver URL."""
    return _DOI_PREFIX.sub("", unquote(value).strip()).lower()


# ----------------------------------------------------------------------------- snapshot

#: File in a snapshot directory naming the search each source folder was harvested with.
HARVEST_FILE = "harvest.yaml"
SEARCHED_SOURCES: tuple[Dialect, ...] = ("pubmed", "openalex", "scopus", "europepmc")


@dataclass
class Snapshot:
    """Source records held in memory, indexed the way the API handlers look them up.

    Searches evaluate their query against each record's text (``hysem_assets.mirror.search``).
    A snapshot may also declare, in ``harvest.yaml``, the query each source folder was
    harvested with: the real engine returned exactly those records for it, using text the
    snapshot does not hold (full text, Emtree or MeSH indexing), so that query is answered
    with them, plus whatever it selects from other snapshots served alongside.
    """

    directory: Path
    pubmed: dict[str, str] = field(default_factory=dict)
    openalex: list[dict[str, Any]] = field(default_factory=list)
    #: Works served only to identifier and ``cites:`` filters and ``/works/{id}`` (``openalex/lookup_only.json``).
    openalex_lookup_only: list[dict[str, Any]] = field(default_factory=list)
    scopus: list[dict[str, Any]] = field(default_factory=list)
    crossref: dict[str, dict[str, Any]] = field(default_factory=dict)
    unpaywall: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Europe PMC core results, and the JATS full-text files by PMCID (``jats/``).
    europepmc: list[dict[str, Any]] = field(default_factory=list)
    jats: dict[str, Path] = field(default_factory=dict)
    directories: tuple[Path, ...] = ()
    #: Searchable text per source, by PMID / position in ``openalex`` / position in ``scopus``.
    documents: dict[str, dict[Any, Document]] = field(default_factory=lambda: {s: {} for s in SEARCHED_SOURCES})
    #: Day each PubMed record (by PMID, Entrez and PubMed history dates) and OpenAlex work (by position) was added.
    added_on: dict[str, dict[Any, dt.date]] = field(
        default_factory=lambda: {"edat": {}, "crdt": {}, "openalex": {}, **{c: {} for c in EUROPEPMC_ADDED_FIELDS}}
    )
    #: Per source: (simplified harvest query, the record keys it returned).
    harvests: dict[str, list[tuple[Node, frozenset[Any]]]] = field(
        default_factory=lambda: {s: [] for s in SEARCHED_SOURCES}
    )

    @classmethod
    def load(cls, directory: str | Path | Sequence[str | Path]) -> Snapshot:
        """Read every source folder under ``directory`` (or the union of several directories).

        Malformed files raise naming the file; where directories share an identifier, the first wins.
        """
        roots = [Path(directory)] if isinstance(directory, (str, Path)) else [Path(d) for d in directory]
        if not roots:
            raise ValueError("no snapshot directory given")
        snapshot = cls(directory=roots[0], directories=tuple(roots))
        for root in roots:
            snapshot._add(root)
        return snapshot

    def _add(self, root: Path) -> None:
        if not root.is_dir():
            raise FileNotFoundError(f"snapshot directory {root} does not exist")
        added: dict[str, set[Any]] = {source: set() for source in SEARCHED_SOURCES}
        for path in sorted((root / "pubmed").glob("*.xml")):
            for pmid, text, element in _pubmed_records(path):
                if pmid not in self.pubmed:
                    self.pubmed[pmid] = text
                    self.documents["pubmed"][pmid] = pubmed_document(element)
                    for datetype, status in PUBMED_HISTORY_DATES.items():
                        if (day := _history_date(element, status)) is not None:
                            self.added_on[datetype][pmid] = day
                added["pubmed"].add(pmid)
        for path in _json_files(root / "openalex"):
            if path.name == OPENALEX_LOOKUP_ONLY_FILE:
                self.openalex_lookup_only.extend(_items(path, _openalex_items))
                continue
            for work in _items(path, _openalex_items):
                added["openalex"].add(_openalex_short_id(work))
                if (day := _iso_date(work.get("created_date"))) is not None:
                    self.added_on["openalex"][len(self.openalex)] = day
                self.documents["openalex"][len(self.openalex)] = openalex_document(work)
                self.openalex.append(work)
        for path in _json_files(root / "scopus"):
            for entry in _items(path, _scopus_items):
                added["scopus"].add(_scopus_key(entry))
                self.documents["scopus"][len(self.scopus)] = scopus_document(entry)
                self.scopus.append(entry)
        for path in _json_files(root / "europepmc"):
            for result in _items(path, _europepmc_items):
                added["europepmc"].add(_europepmc_key(result))
                for clause, day in _europepmc_added_dates(result).items():
                    self.added_on[clause][len(self.europepmc)] = day
                self.documents["europepmc"][len(self.europepmc)] = europepmc_document(result)
                self.europepmc.append(result)
        for path in sorted((root / "jats").glob("*.*xml")):
            self.jats.setdefault(path.stem.upper(), path)
        crossref: dict[str, dict[str, Any]] = {}
        for path in _json_files(root / "crossref"):
            crossref.update(_by_doi(path, _crossref_items, "DOI"))
        unpaywall: dict[str, dict[str, Any]] = {}
        for path in _json_files(root / "unpaywall"):
            unpaywall.update(_by_doi(path, lambda data: data if isinstance(data, list) else [data], "doi"))
        for doi, message in crossref.items():
            self.crossref.setdefault(doi, message)
        for doi, found in unpaywall.items():
            self.unpaywall.setdefault(doi, found)
        for source, text in _harvest_queries(root / HARVEST_FILE).items():
            node = simplify(compile_query(text, source).node)
            self.harvests[source].append((node, frozenset(added[source])))

    def file_path(self, name: str) -> Path | None:
        """A file under some directory's ``files/``, never outside it; None when no directory has it."""
        if name.startswith("."):
            return None
        for root in self.directories or (self.directory,):
            folder = (root / "files").resolve()
            path = (folder / name).resolve()
            if path.parent == folder and path.is_file():
                return path
        return None

    def search(self, source: Dialect, node: Node) -> set[Any]:
        """Keys of the records of ``source`` that ``node`` selects (see the class docstring)."""
        selected = {key for key, document in self.documents[source].items() if evaluate(node, document) is not False}
        simpler = simplify(node)
        for recorded, keys in self.harvests[source]:
            if recorded == simpler:
                selected |= self._positions(source, keys)
        return selected

    def _positions(self, source: str, keys: frozenset[Any]) -> set[Any]:
        if source == "openalex":
            return {i for i, work in enumerate(self.openalex) if _openalex_short_id(work) in keys}
        if source == "scopus":
            return {i for i, entry in enumerate(self.scopus) if _scopus_key(entry) in keys}
        if source == "europepmc":
            return {i for i, result in enumerate(self.europepmc) if _europepmc_key(result) in keys}
        return set(keys)

    def find_openalex(self, identifier: str) -> dict[str, Any] | None:
        """Look a work up by OpenAlex id, DOI or PMID in any of the forms OpenAlex accepts."""
        value = unquote(identifier).strip()
        lowered = value.lower()
        if lowered.startswith("pmid:"):
            return self._first(_openalex_pmid, value[5:].strip())
        if _DOI_PREFIX.match(value) or lowered.startswith("10."):
            return self._first(_openalex_doi, doi_key(value))
        return self._first(_openalex_short_id, value.rstrip("/").rsplit("/", 1)[-1].upper())

    def _first(self, key: Callable[[dict[str, Any]], str | None], wanted: str) -> dict[str, Any] | None:
        return next((work for work in (*self.openalex, *self.openalex_lookup_only) if key(work) == wanted), None)


def _json_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


def _items(path: Path, extract: Callable[[Any], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    try:
        return extract(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a recognised API payload ({error})") from error


def _by_doi(path: Path, extract: Callable[[Any], list[dict[str, Any]]], key: str) -> dict[str, dict[str, Any]]:
    items = _items(path, extract)
    missing = [position for position, item in enumerate(items) if not item.get(key)]
    if missing:
        raise ValueError(f"{path}: item {missing[0]} has no '{key}'")
    return {doi_key(item[key]): item for item in items}


def _openalex_items(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, list):
        return data
    if "results" in data:
        return data["results"]
    if "id" in data:
        return [data]
    raise KeyError("expected a list of works, an API page or a work")


def _scopus_items(data: Any) -> list[dict[str, Any]]:
    entries = data["search-results"].get("entry", []) if isinstance(data, dict) else data
    return [entry for entry in entries if "error" not in entry]


def _crossref_items(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, list):
        return data
    message = data.get("message", data)
    return message["items"] if "items" in message else [message]


def _pubmed_records(path: Path) -> Iterable[tuple[str, str, ET.Element]]:
    """(PMID, serialized element, element) for each article of a PubmedArticleSet file."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as error:
        raise ValueError(f"{path}: not well-formed XML ({error})") from error
    for element in root:
        if element.tag not in PUBMED_RECORD_TAGS:
            continue
        pmid = element.findtext("MedlineCitation/PMID") or element.findtext("BookDocument/PMID")
        if not pmid:
            raise ValueError(f"{path}: a {element.tag} without a PMID")
        element.tail = None
        yield pmid.strip(), ET.tostring(element, encoding="unicode"), element


#: E-utilities ``datetype`` values the mirror evaluates -> the PubMedPubDate status holding that date.
PUBMED_HISTORY_DATES = {"edat": "entrez", "crdt": "pubmed"}


def _history_date(element: ET.Element, status: str) -> dt.date | None:
    found = element.find(f"PubmedData/History/PubMedPubDate[@PubStatus='{status}']")
    if found is None:
        return None
    try:
        return dt.date(*(int(found.findtext(part) or 1) for part in ("Year", "Month", "Day")))
    except ValueError:
        return None


def _iso_date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def _within(day: dt.date | None, first: dt.date | None, last: dt.date | None) -> bool:
    """A record without the date is kept: the mirror cannot tell, and a re-search merges what it gets again."""
    return day is None or ((first is None or day >= first) and (last is None or day <= last))


def _entrez_day(value: str | None) -> dt.date | None:
    """An E-utilities ``mindate``/``maxdate`` (YYYY, YYYY/MM or YYYY/MM/DD); None when absent."""
    if not value:
        return None
    parts = [int(part) for part in value.strip().split("/")]
    return dt.date(*(parts + [1] * (3 - len(parts))))


def _harvest_queries(path: Path) -> dict[Dialect, str]:
    """The harvest file: source -> query text in that source's syntax; no file, no harvests."""
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML ({error})") from error
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of source to query text")
    unknown = sorted(set(data) - set(SEARCHED_SOURCES))
    if unknown:
        raise ValueError(f"{path}: unknown source '{unknown[0]}' (allowed: {', '.join(SEARCHED_SOURCES)})")
    if not all(isinstance(text, str) and text.strip() for text in data.values()):
        raise ValueError(f"{path}: every query must be a non-empty string")
    return dict(data)


def _scopus_key(entry: dict[str, Any]) -> str:
    return str(entry.get("eid") or entry.get("dc:identifier") or id(entry))


def _openalex_short_id(work: dict[str, Any]) -> str:
    return str(work.get("id", "")).rsplit("/", 1)[-1].upper()


def _openalex_doi(work: dict[str, Any]) -> str | None:
    return doi_key(work["doi"]) if work.get("doi") else None


def _openalex_pmid(work: dict[str, Any]) -> str | None:
    pmid = (work.get("ids") or {}).get("pmid")
    return str(pmid).rstrip("/").rsplit("/", 1)[-1] if pmid else None


# ----------------------------------------------------------------------------- helpers


def _root_url(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


def _json(request: web.Request, payload: Any, status: int = 200) -> web.Response:
    text = json.dumps(payload, ensure_ascii=False).replace(MIRROR_PLACEHOLDER, _root_url(request))
    return web.json_response(text=text, status=status)


def _xml(request: web.Request, text: str, status: int = 200) -> web.Response:
    body = text.replace(MIRROR_PLACEHOLDER, _root_url(request))
    return web.Response(text=body, status=status, content_type="text/xml", charset="UTF-8")


async def _params(request: web.Request) -> MultiDict[str]:
    """Query string plus form body: E-utilities accept the same parameters either way."""
    params: MultiDict[str] = MultiDict(request.query)
    if request.method == "POST":
        form: MultiDictProxy[Any] = await request.post()
        params.extend((key, str(value)) for key, value in form.items())
    return params


def _int(params: Mapping[str, str], name: str, default: int) -> int:
    """A non-negative integer parameter; ValueError names the parameter for the error body."""
    raw = params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got '{raw}'") from None
    if value < 0:
        raise ValueError(f"{name} must not be negative, got '{raw}'")
    return value


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps(["mirror", offset]).encode()).decode()


def _decode_cursor(token: str) -> int:
    """Offset behind an opaque cursor; ``*`` starts at 0. ValueError for anything else."""
    if token == "*":
        return 0
    try:
        tag, offset = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (binascii.Error, ValueError, TypeError):
        raise ValueError(f"invalid cursor '{token}'") from None
    if tag != "mirror" or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"invalid cursor '{token}'")
    return offset


# ----------------------------------------------------------------------------- PubMed


@dataclass
class _SearchNotes:
    """What esearch reports beside the ids: terms found nowhere, and messages."""

    phrases: list[str] = field(default_factory=list)
    quoted_phrases: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


class _PubMed:
    """E-utilities esearch/efetch over the snapshot's PubMed records."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.histories: dict[str, list[list[str]]] = {}

    async def esearch(self, request: web.Request) -> web.Response:
        """The term selects records (see ``Snapshot.search``); paging and the history server are honoured.

        A search that finds nothing says so the way E-utilities does: ``PhraseNotFound`` for
        words no record holds, ``QuotedPhraseNotFound`` for such phrases, "No items found.".
        """
        params = await _params(request)
        database = params.get("db", "pubmed")
        if database != "pubmed":
            return self._error(request, "eSearchResult", f"Invalid db name specified: {database}")
        try:
            start = _int(params, "retstart", 0)
            count = min(_int(params, "retmax", 20), EUTILS_MAX_RETMAX)
        except ValueError as error:
            return self._error(request, "eSearchResult", str(error))
        term = params.get("term", "")
        query = compile_query(term, "pubmed")
        selected = self.snapshot.search("pubmed", query.node)
        all_ids = [pmid for pmid in self.snapshot.pubmed if pmid in selected]
        added_on = self.snapshot.added_on.get(params.get("datetype", "").lower())
        if added_on is not None:
            try:
                first, last = _entrez_day(params.get("mindate")), _entrez_day(params.get("maxdate"))
            except (TypeError, ValueError):
                return self._error(request, "eSearchResult", "Invalid mindate or maxdate")
            all_ids = [pmid for pmid in all_ids if _within(added_on.get(pmid), first, last)]
        ids = all_ids[start : start + count]
        history = self._store(params, all_ids) if params.get("usehistory", "").lower() == "y" else None
        notes = self._notes(query.node, bool(all_ids))
        if params.get("retmode", "xml").lower() == "json":
            return _json(request, self._esearch_json(len(all_ids), start, ids, history, term, notes))
        if params.get("rettype") == "count":
            return _xml(request, f"{ESEARCH_HEADER}<eSearchResult><Count>{len(all_ids)}</Count></eSearchResult>\n")
        return _xml(request, self._esearch_xml(len(all_ids), start, ids, history, term, notes))

    def _notes(self, node: Node, found: bool) -> _SearchNotes:
        """Words and phrases that no PubMed record holds, and the no-hits message."""
        notes = _SearchNotes()
        documents = self.snapshot.documents["pubmed"].values()
        for term in terms(node):
            if any(term.matches(document) for document in documents):
                continue
            shown = " ".join(term.words)
            if len(term.words) > 1:
                notes.quoted_phrases.append(f'"{shown}"')
            else:
                notes.phrases.append(shown)
        if not found:
            notes.messages.append("No items found.")
        return notes

    def _store(self, params: MultiDict[str], ids: list[str]) -> tuple[str, int]:
        """Keep the result on the history server; reuse a known WebEnv as the real one does."""
        webenv = params.get("WebEnv") or params.get("webenv") or ""
        if webenv not in self.histories:
            webenv = f"MCID_{secrets.token_hex(12)}"
            self.histories[webenv] = []
        self.histories[webenv].append(ids)
        return webenv, len(self.histories[webenv])

    @staticmethod
    def _esearch_xml(
        total: int, start: int, ids: list[str], history: tuple[str, int] | None, term: str, notes: _SearchNotes
    ) -> str:
        parts = [f"<Count>{total}</Count><RetMax>{len(ids)}</RetMax><RetStart>{start}</RetStart>"]
        if history:
            parts.append(f"<QueryKey>{history[1]}</QueryKey><WebEnv>{history[0]}</WebEnv>")
        id_list = "".join(f"<Id>{pmid}</Id>\n" for pmid in ids)
        parts.append(f"<IdList>\n{id_list}</IdList>" if ids else "<IdList/>")
        parts.append(f"<TranslationSet/><QueryTranslation>{escape(term)}</QueryTranslation>")
        if notes.phrases:
            found = "".join(f"<PhraseNotFound>{escape(p)}</PhraseNotFound>" for p in notes.phrases)
            parts.append(f"<ErrorList>{found}</ErrorList>")
        warnings = [f"<QuotedPhraseNotFound>{escape(p)}</QuotedPhraseNotFound>" for p in notes.quoted_phrases]
        warnings += [f"<OutputMessage>{escape(m)}</OutputMessage>" for m in notes.messages]
        if warnings:
            parts.append(f"<WarningList>{''.join(warnings)}</WarningList>")
        return f"{ESEARCH_HEADER}<eSearchResult>{''.join(parts)}</eSearchResult>\n"

    @staticmethod
    def _esearch_json(
        total: int, start: int, ids: list[str], history: tuple[str, int] | None, term: str, notes: _SearchNotes
    ) -> dict[str, Any]:
        result: dict[str, Any] = {"count": str(total), "retmax": str(len(ids)), "retstart": str(start)}
        if history:
            result.update(querykey=str(history[1]), webenv=history[0])
        result.update(idlist=ids, translationset=[], querytranslation=term)
        if notes.phrases:
            result["errorlist"] = {"phrasesnotfound": notes.phrases, "fieldsnotfound": []}
        if notes.quoted_phrases or notes.messages:
            result["warninglist"] = {
                "phrasesignored": [],
                "quotedphrasesnotfound": notes.quoted_phrases,
                "outputmessages": notes.messages,
            }
        return {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result}

    async def efetch(self, request: web.Request) -> web.Response:
        """Records for ``id=`` (in the requested order) or for a WebEnv/query_key slice."""
        params = await _params(request)
        database = params.get("db", "pubmed")
        if database != "pubmed":
            return self._error(request, "eFetchResult", f"Invalid db name specified: {database}")
        if params.get("retmode", "xml").lower() != "xml":
            return self._error(request, "eFetchResult", "The mirror serves PubMed records as retmode=xml only")
        requested = [part.strip() for value in params.getall("id", []) for part in value.split(",") if part.strip()]
        if not requested:
            try:
                requested = self._history_slice(params)
            except (KeyError, ValueError) as error:
                return self._error(request, "eFetchResult", error.args[0])
        records = [self.snapshot.pubmed[pmid] for pmid in requested if pmid in self.snapshot.pubmed]
        body = "\n".join(records)
        return _xml(request, f"{PUBMED_SET_HEADER}<PubmedArticleSet>\n{body}</PubmedArticleSet>\n")

    def _history_slice(self, params: MultiDict[str]) -> list[str]:
        webenv = params.get("WebEnv") or params.get("webenv")
        if not webenv:
            raise KeyError("Empty id list - nothing todo")
        start = _int(params, "retstart", 0)
        count = min(_int(params, "retmax", 20), EUTILS_MAX_RETMAX)
        key = _int(params, "query_key", 1)
        stored = self.histories.get(webenv, [])
        if not 1 <= key <= len(stored):
            raise KeyError(
                f"Cannot retrieve history data. query_key: {key}, WebEnv: {webenv}, retstart: {start}, retmax: {count}"
            )
        return stored[key - 1][start : start + count]

    @staticmethod
    def _error(request: web.Request, root: str, message: str) -> web.Response:
        header = EFETCH_ERROR_HEADER if root == "eFetchResult" else ESEARCH_HEADER
        return _xml(request, f"{header}<{root}>\n\t<ERROR>{escape(message)}</ERROR>\n</{root}>\n", status=400)


# ----------------------------------------------------------------------------- OpenAlex


_OPENALEX_FILTER_KEYS: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "doi": _openalex_doi,
    "ids.openalex": _openalex_short_id,
    "openalex": _openalex_short_id,
    "openalex_id": _openalex_short_id,
    "ids.pmid": _openalex_pmid,
    "pmid": _openalex_pmid,
}


def _openalex_error(request: web.Request, message: str, status: int = 400) -> web.Response:
    return _json(request, {"error": "Invalid query parameters error.", "message": message}, status=status)


def _filter_value(key: Callable[[dict[str, Any]], str | None], value: str) -> str:
    """Normalise a filter value the same way ``key`` normalises the work's identifier."""
    if key is _openalex_doi:
        return doi_key(value)
    return value.strip().rstrip("/").rsplit("/", 1)[-1].upper()


def _identifier_filter(expression: str) -> Callable[[dict[str, Any]], bool]:
    """Keep identifier filters (doi, openalex, pmid) and ``cites`` (``|`` for OR); other filters are ignored."""
    tests: list[Callable[[dict[str, Any]], bool]] = []
    for clause in expression.split(","):
        name, _, values = clause.partition(":")
        name = name.strip().lower()
        key = _openalex_short_id if name == "cites" else _OPENALEX_FILTER_KEYS.get(name)
        if key is None:
            continue
        wanted = {_filter_value(key, value) for value in values.split("|") if value.strip()}
        if name == "cites":
            tests.append(lambda work, wanted=wanted: not wanted.isdisjoint(_cited_ids(work)))
        else:
            tests.append(lambda work, key=key, wanted=wanted: _filter_value(key, key(work) or "") in wanted)
    return lambda work: all(test(work) for test in tests)


def _cited_ids(work: dict[str, Any]) -> set[str]:
    return {_filter_value(_openalex_short_id, str(ref)) for ref in work.get("referenced_works") or []}


def _selects_by_identifier(expression: str) -> bool:
    """Whether a filter names works by identifier or citation, which lookup-only works answer too."""
    names = {clause.partition(":")[0].strip().lower() for clause in expression.split(",")}
    return bool(names & {*_OPENALEX_FILTER_KEYS, "cites"})


def _created_bound(expression: str, side: str) -> dt.date | None:
    """The ``from_created_date`` or ``to_created_date`` filter's day, or None."""
    for clause in expression.split(","):
        name, _, value = clause.partition(":")
        if name.strip().lower() == f"{side}_created_date":
            try:
                return dt.date.fromisoformat(value.strip())
            except ValueError:
                raise ValueError(f"Invalid query parameters error: {side}_created_date must be YYYY-MM-DD") from None
    return None


#: Query parameters that search text; ``search.exact`` without stemming.
OPENALEX_SEARCH_PARAMS = ("search", "search.exact", "search.semantic")


def _openalex_text_query(params: Mapping[str, str], search_param: str | None) -> Node | None:
    """The ``search`` parameter AND-ed with every text-search filter; None when there is neither."""
    nodes = []
    if search_param is not None:
        nodes.append(compile_query(params[search_param], "openalex", stemmed=search_param != "search.exact").node)
    for clause in params.get("filter", "").split(","):
        name, _, value = clause.partition(":")
        found = openalex_filter_query(name, value)
        if found is not None:
            nodes.append(found.node)
    if not nodes:
        return None
    return nodes[0] if len(nodes) == 1 else And(tuple(nodes))


def _select(work: dict[str, Any], fields: str | None) -> dict[str, Any]:
    if not fields:
        return work
    wanted = [name.strip() for name in fields.split(",") if name.strip()]
    return {name: work.get(name) for name in wanted}


class _OpenAlex:
    """``/works`` with cursor or page paging, and ``/works/{id}``."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    async def works(self, request: web.Request) -> web.Response:
        """Cursor paging returns a next_cursor while a page has results, then null (as the API does)."""
        started = time.perf_counter()
        params = request.query
        try:
            per_page = _int(params, "per-page" if "per-page" in params else "per_page", 25)
            page = _int(params, "page", 1)
        except ValueError as error:
            return _openalex_error(request, str(error))
        if not 1 <= per_page <= OPENALEX_MAX_PER_PAGE:
            return _openalex_error(request, f"per-page parameter must be between 1 and {OPENALEX_MAX_PER_PAGE}")
        cursor = params.get("cursor")
        if cursor is not None and "page" in params:
            return _openalex_error(request, "Cannot use page parameter with cursor pagination")
        searches = [name for name in OPENALEX_SEARCH_PARAMS if params.get(name)]
        if len(searches) > 1:
            return _openalex_error(request, f"Only one search parameter is allowed per request, got {searches}")
        node = _openalex_text_query(params, searches[0] if searches else None)
        selected = self.snapshot.search("openalex", node) if node is not None else None
        keep = _identifier_filter(params.get("filter", ""))
        try:
            first, last = (_created_bound(params.get("filter", ""), name) for name in ("from", "to"))
        except ValueError as error:
            return _openalex_error(request, str(error))
        added_on = self.snapshot.added_on["openalex"]
        works = [
            work
            for position, work in enumerate(self.snapshot.openalex)
            if (selected is None or position in selected)
            and keep(work)
            and _within(added_on.get(position), first, last)
        ]
        if node is None and _selects_by_identifier(params.get("filter", "")):
            works += [
                work
                for work in self.snapshot.openalex_lookup_only
                if keep(work) and _within(_iso_date(work.get("created_date")), first, last)
            ]
        if cursor is None:
            if page < 1 or page * per_page > OPENALEX_MAX_RESULTS:
                return _openalex_error(
                    request,
                    "Maximum results size of 10,000 records is exceeded. "
                    "Cursor pagination is required for records beyond 10,000.",
                )
            offset, shown_page = (page - 1) * per_page, page
        else:
            try:
                offset, shown_page = _decode_cursor(cursor), None
            except ValueError as error:
                return _openalex_error(request, str(error))
        results = works[offset : offset + per_page]
        next_cursor = _encode_cursor(offset + len(results)) if cursor is not None and results else None
        meta = {
            "count": len(works),
            "db_response_time_ms": round((time.perf_counter() - started) * 1000),
            "page": shown_page,
            "per_page": per_page,
            "next_cursor": next_cursor,
            "groups_count": None,
        }
        selected = [_select(work, params.get("select")) for work in results]
        return _json(request, {"meta": meta, "results": selected, "group_by": []})

    async def work(self, request: web.Request) -> web.Response:
        identifier = request.match_info["id"]
        work = self.snapshot.find_openalex(identifier)
        if work is None:
            message = f"Work {identifier} is not in the mirror snapshot."
            return _json(request, {"error": "404 Not Found", "message": message}, status=404)
        return _json(request, _select(work, request.query.get("select")))


# ----------------------------------------------------------------------------- Scopus


def _scopus_error(request: web.Request, status: int, code: str, text: str) -> web.Response:
    return _json(request, {"service-error": {"status": {"statusCode": code, "statusText": text}}}, status=status)


class _Scopus:
    """The Scopus Search API (``/content/search/scopus``): start/count paging and cursors."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    async def search(self, request: web.Request) -> web.Response:
        params = MultiDict(request.query)
        if not (request.headers.get("X-ELS-APIKey") or params.get("apiKey")):
            return _scopus_error(
                request,
                401,
                "AUTHENTICATION_ERROR",
                "Requestor configuration settings insufficient for access to this resource.",
            )
        try:
            count = _int(params, "count", 25)
            start = _int(params, "start", 0)
            cursor = params.get("cursor")
            if cursor is not None:
                start = _decode_cursor(cursor)
        except ValueError as error:
            return _scopus_error(request, 400, "INVALID_INPUT", str(error))
        if count > SCOPUS_MAX_COUNT:
            return _scopus_error(
                request, 400, "INVALID_INPUT", "Exceeds the maximum number allowed for the service level"
            )
        selected = self.snapshot.search("scopus", compile_query(params.get("query", ""), "scopus").node)
        matching = [entry for position, entry in enumerate(self.snapshot.scopus) if position in selected]
        total = len(matching)
        entries = matching[start : start + count]
        results: dict[str, Any] = {
            "opensearch:totalResults": str(total),
            "opensearch:startIndex": str(start),
            "opensearch:itemsPerPage": str(len(entries)),
            "opensearch:Query": {"@role": "request", "@searchTerms": params.get("query", ""), "@startPage": str(start)},
            "link": self._links(request, start, count, total, cursor is None),
        }
        if cursor is not None:
            results["cursor"] = {"@current": cursor, "@next": _encode_cursor(start + len(entries)) if entries else ""}
        results["entry"] = entries or [{"@_fa": "true", "error": "Result set was empty"}]
        return _json(request, {"search-results": results})

    @staticmethod
    def _links(request: web.Request, start: int, count: int, total: int, offsets: bool) -> list[dict[str, str]]:
        """self/first/prev/next/last links; the API key is never echoed back into them."""
        query = {key: value for key, value in request.query.items() if key != "apiKey"}
        url = request.url.with_query(query)

        def link(ref: str, at: int | None = None) -> dict[str, str]:
            target = url.update_query(start=str(at)) if at is not None and offsets else url
            return {"@_fa": "true", "@ref": ref, "@href": str(target), "@type": "application/json"}

        links = [link("self"), link("first", 0)]
        if offsets and start > 0:
            links.append(link("prev", max(start - count, 0)))
        if offsets and start + count < total:
            links.append(link("next", start + count))
            links.append(link("last", max(total - count, 0)))
        return links


# ----------------------------------------------------------------------------- Europe PMC

EUROPEPMC_VERSION = "6.9"
EUROPEPMC_MAX_PAGE_SIZE = 1000
EUROPEPMC_RESULT_TYPES = ("idlist", "lite", "core")
#: Query clauses naming when Europe PMC added a record -> the result field holding that day.
EUROPEPMC_ADDED_FIELDS = {"FIRST_IDATE": ("firstIndexDate",), "CREATION_DATE": ("dateOfCreation", "firstIndexDate")}
_EUROPEPMC_ADDED = re.compile(
    r"\b(FIRST_IDATE|CREATION_DATE)\s*:\s*(?:\[\s*(\S+)\s+TO\s+([^\s\]]+)\s*\]|\"?([0-9-]{4,10})\"?)", re.IGNORECASE
)
#: Core-only fields a lite result lacks (its journal comes as journalTitle/journalVolume/issue instead).
_EUROPEPMC_CORE_ONLY = frozenset(
    "abstractText authorList affiliation meshHeadingList keywordList chemicalList fullTextUrlList journalInfo "
    "pubTypeList grantsList subsetList commentCorrectionList dateOfCreation dateOfRevision dateOfCompletion "
    "language pubModel publicationStatus license authMan epmcAuthMan nihAuthMan hasData hasEvaluations "
    "authorIdList dataLinksTagsList electronicPublicationDate fullTextReceivedDate manuscriptId embargoDate".split()
)
_EUROPEPMC_IDLIST = ("id", "source", "pmid", "pmcid", "fullTextIdList")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")


def _europepmc_items(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, list):
        return data
    if "resultList" in data:
        return data["resultList"].get("result", [])
    if "id" in data and "source" in data:
        return [data]
    raise KeyError("expected a list of results, a search page with 'resultList' or one result")


def _europepmc_key(result: dict[str, Any]) -> str:
    return f"{str(result.get('source', '')).upper()}:{result.get('id', '')}"


def _europepmc_added_dates(result: dict[str, Any]) -> dict[str, dt.date]:
    """The day behind each "added" clause the mirror evaluates, where the result states it."""
    found = {}
    for clause, keys in EUROPEPMC_ADDED_FIELDS.items():
        day = next((day for key in keys if (day := _iso_date(result.get(key))) is not None), None)
        if day is not None:
            found[clause] = day
    return found


def _europepmc_day(value: str, last: bool) -> dt.date | None:
    """``2024-01-31``, ``20240131`` or ``2024`` (its first or last day); ``*`` is an open end."""
    value = value.strip().strip('"')
    if value == "*":
        return None
    digits = value.replace("-", "")
    if len(digits) == 4 and digits.isdigit():
        return dt.date(int(digits), 12, 31) if last else dt.date(int(digits), 1, 1)
    if len(digits) != 8 or not digits.isdigit():
        raise ValueError(f"invalid date '{value}'")
    return dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))


def _europepmc_windows(query: str) -> list[tuple[str, dt.date | None, dt.date | None]]:
    """Every FIRST_IDATE / CREATION_DATE clause of ``query`` as (clause, first day, last day); all must hold."""
    windows = []
    for found in _EUROPEPMC_ADDED.finditer(query):
        clause, start, end, single = found.groups()
        if single is not None:
            start = end = single
        windows.append((clause.upper(), _europepmc_day(start, False), _europepmc_day(end, True)))
    return windows


def europepmc_document(result: Mapping[str, Any]) -> Document:
    """A Europe PMC result (core; lite has no abstract, keywords or MeSH)."""
    authors = []
    for author in (result.get("authorList") or {}).get("author") or []:
        if author.get("collectiveName"):
            authors.append(author["collectiveName"])
        else:
            surname = author.get("lastName") or author.get("fullName")
            authors.append(person(surname, author.get("firstName"), author.get("initials")))
    if not authors and result.get("authorString"):
        authors = [person(name.strip()) for name in str(result["authorString"]).rstrip(".").split(",") if name.strip()]
    mesh = [
        form
        for heading in (result.get("meshHeadingList") or {}).get("meshHeading") or []
        for name in [heading.get("descriptorName")]
        + [q.get("qualifierName") for q in (heading.get("meshQualifierList") or {}).get("meshQualifier") or []]
        if name
        for form in mesh_forms(name)
    ]
    journal = (result.get("journalInfo") or {}).get("journal") or {}
    journal_titles = [result["journalTitle"]] if result.get("journalTitle") else []
    types = (result.get("pubTypeList") or {}).get("pubType") or str(result.get("pubType") or "").split(";")
    return Document.build(
        title=_HTML_TAG.sub(" ", result.get("title") or ""),
        abstract=_HTML_TAG.sub(" ", result.get("abstractText") or ""),
        keywords=(result.get("keywordList") or {}).get("keyword") or [],
        mesh=mesh,
        authors=authors,
        journal=[journal.get("title") or "", journal.get("medlineAbbreviation") or "", *journal_titles],
        types=[str(kind) for kind in types],
    )


def _europepmc_lite(result: dict[str, Any]) -> dict[str, Any]:
    lite = {key: value for key, value in result.items() if key not in _EUROPEPMC_CORE_ONLY}
    info = result.get("journalInfo") or {}
    journal = info.get("journal") or {}
    extra = {
        "journalTitle": journal.get("medlineAbbreviation") or journal.get("isoabbreviation") or journal.get("title"),
        "issue": info.get("issue"),
        "journalVolume": info.get("volume"),
        "journalIssn": "; ".join(filter(None, (journal.get("issn"), journal.get("essn")))) or None,
        "pubType": "; ".join(t.lower() for t in (result.get("pubTypeList") or {}).get("pubType") or []) or None,
    }
    lite.update({key: value for key, value in extra.items() if value and key not in lite})
    return lite


def _europepmc_error(request: web.Request, message: str, status: int = 400) -> web.Response:
    return _json(request, {"version": EUROPEPMC_VERSION, "errCode": status, "errMsg": message}, status=status)


class _EuropePMC:
    """The Europe PMC REST ``/search`` (cursorMark paging, format=json) and ``/{PMCID}/fullTextXML``."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    async def search(self, request: web.Request) -> web.Response:
        """Every page carries the cursor of the next one (the last page's leads to an empty page), as Solr's do."""
        params = request.query
        query = params.get("query", "")
        result_type = params.get("resultType", "lite").lower()
        if not query.strip():
            return _europepmc_error(request, "query parameter is required")
        if result_type not in EUROPEPMC_RESULT_TYPES:
            return _europepmc_error(request, f"resultType must be one of {', '.join(EUROPEPMC_RESULT_TYPES)}")
        if params.get("format", "xml").lower() != "json":
            return _europepmc_error(request, "The mirror serves Europe PMC searches as format=json only")
        try:
            size = _int(params, "pageSize", 25)
            cursor = params.get("cursorMark", "*")
            offset = _decode_cursor(cursor)
            windows = _europepmc_windows(query)
        except ValueError as error:
            return _europepmc_error(request, str(error))
        if size > EUROPEPMC_MAX_PAGE_SIZE:
            return _europepmc_error(request, f"pageSize must be between 0 and {EUROPEPMC_MAX_PAGE_SIZE}")
        selected = self.snapshot.search("europepmc", compile_query(query, "europepmc").node)
        added_on = self.snapshot.added_on
        matching = [
            result
            for position, result in enumerate(self.snapshot.europepmc)
            if position in selected
            and all(_within(added_on[clause].get(position), first, last) for clause, first, last in windows)
        ]
        page = matching[offset : offset + size]
        echo = {
            "queryString": query,
            "resultType": result_type,
            "cursorMark": cursor,
            "pageSize": size,
            "sort": params.get("sort", ""),
            "synonym": params.get("synonym", "false").lower() in ("true", "y", "yes"),
        }
        body: dict[str, Any] = {"version": EUROPEPMC_VERSION, "hitCount": len(matching)}
        if matching:
            next_cursor = _encode_cursor(offset + len(page)) if page else cursor
            body["nextCursorMark"] = next_cursor
            body["nextPageUrl"] = str(request.url.update_query(cursorMark=next_cursor))
        if result_type == "idlist":
            page = [{key: result[key] for key in _EUROPEPMC_IDLIST if key in result} for result in page]
        elif result_type == "lite":
            page = [_europepmc_lite(result) for result in page]
        body.update(request=echo, resultList={"result": page})
        return _json(request, body)

    async def full_text(self, request: web.Request) -> web.Response:
        pmcid = request.match_info["pmcid"].upper()
        path = self.snapshot.jats.get(pmcid if pmcid.startswith("PMC") else f"PMC{pmcid}")
        if path is None:
            return web.Response(status=404, text="", content_type="application/xml")
        return web.Response(body=path.read_bytes(), content_type="application/xml", charset="UTF-8")


# ----------------------------------------------------------------------------- download faults

#: Size of the /files/oversized/ body: past the PDF downloader's default cap of 50 MiB.
OVERSIZED_BYTES = 64 * 2**20
#: Pause between the bytes of a /files/slow/ body.
SLOW_DRIP_INTERVAL_S = 0.2
#: Length the /files/slow/ response declares; at one byte per interval it takes ~14 minutes.
SLOW_DRIP_BYTES = 4096
_PDF_HEADER = b"%PDF-1.7\n"


async def _pdf_stream(request: web.Request, length: int | None) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "application/pdf"})
    if length is None:
        response.enable_chunked_encoding()
    else:
        response.content_length = length
    await response.prepare(request)
    await response.write(_PDF_HEADER)
    return response


async def _oversized(request: web.Request) -> web.StreamResponse:
    response = await _pdf_stream(request, None)
    padding = b"0" * (1 << 20)
    sent = len(_PDF_HEADER)
    try:
        while sent < OVERSIZED_BYTES:
            chunk = padding[: OVERSIZED_BYTES - sent]
            await response.write(chunk)
            sent += len(chunk)
        await response.write_eof()
    except ConnectionError:  # the client stopped reading at its cap, as it should
        pass
    return response


async def _loop(request: web.Request) -> web.Response:
    return web.Response(status=302, headers={"Location": str(request.rel_url)})


async def _slow(request: web.Request) -> web.StreamResponse:
    response = await _pdf_stream(request, SLOW_DRIP_BYTES)
    try:
        for _ in range(SLOW_DRIP_BYTES - len(_PDF_HEADER)):
            await asyncio.sleep(SLOW_DRIP_INTERVAL_S)
            await response.write(b"0")
    except ConnectionError:  # the client gave up waiting, as it should
        pass
    return response


# ----------------------------------------------------------------------------- Crossref, Unpaywall, files


class _Lookups:
    """Single-DOI endpoints (Crossref works, Unpaywall v2) and the /files area."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    async def crossref_work(self, request: web.Request) -> web.Response:
        message = self.snapshot.crossref.get(doi_key(request.match_info["doi"]))
        if message is None:
            return web.Response(text="Resource not found.", status=404, content_type="text/plain")
        envelope = {"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": message}
        return _json(request, envelope)

    async def unpaywall(self, request: web.Request) -> web.Response:
        doi = unquote(request.match_info["doi"])
        if not request.query.get("email"):
            message = "Please add an email address to your request: ?email=you@example.com"
            return _json(request, {"HTTP_status_code": 422, "error": True, "message": message}, status=422)
        found = self.snapshot.unpaywall.get(doi_key(doi))
        if found is None:
            message = f"'{doi}' is an invalid doi. See https://doi.org/{doi}"
            return _json(request, {"HTTP_status_code": 404, "error": True, "message": message}, status=404)
        return _json(request, found)

    async def file(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        path = self.snapshot.file_path(name)
        if path is None:
            return web.Response(text=f"{name} is not in the mirror snapshot.", status=404, content_type="text/plain")
        return web.FileResponse(path)


def create_app(snapshot: Snapshot, middlewares: Sequence[Middleware] = ()) -> web.Application:
    """An aiohttp application serving ``snapshot`` under every source's real API paths.

    ``middlewares`` wrap every handler, e.g. to inject throttling or faults in resilience drills.
    """
    pubmed, openalex, scopus, lookups = _PubMed(snapshot), _OpenAlex(snapshot), _Scopus(snapshot), _Lookups(snapshot)
    app = web.Application(middlewares=list(middlewares))
    europepmc = _EuropePMC(snapshot)
    app.router.add_get(f"{SOURCE_PREFIXES['europepmc']}/search", europepmc.search)
    app.router.add_get(f"{SOURCE_PREFIXES['europepmc']}/{{pmcid}}/fullTextXML", europepmc.full_text)
    eutils = SOURCE_PREFIXES["pubmed"]
    for method in ("GET", "POST"):
        app.router.add_route(method, f"{eutils}/esearch.fcgi", pubmed.esearch)
        app.router.add_route(method, f"{eutils}/efetch.fcgi", pubmed.efetch)
    app.router.add_get(f"{SOURCE_PREFIXES['openalex']}/works", openalex.works)
    app.router.add_get(f"{SOURCE_PREFIXES['openalex']}/works/{{id:.+}}", openalex.work)
    app.router.add_get(f"{SOURCE_PREFIXES['scopus']}/content/search/scopus", scopus.search)
    app.router.add_get(f"{SOURCE_PREFIXES['crossref']}/works/{{doi:.+}}", lookups.crossref_work)
    app.router.add_get(f"{SOURCE_PREFIXES['unpaywall']}/v2/{{doi:.+}}", lookups.unpaywall)
    app.router.add_get("/files/{name}", lookups.file)
    app.router.add_get("/files/oversized/{name}", _oversized)
    app.router.add_get("/files/loop/{name}", _loop)
    app.router.add_get("/files/slow/{name}", _slow)
    return app


# ----------------------------------------------------------------------------- running


class MirrorServer:
    """Runs the mirror on its own event loop in a daemon thread.

    Synchronous callers (Dagster resources, tests, the command line) can start it, read
    ``base_urls`` and point unchanged clients at it. Use as a context manager or call
    ``start()``/``stop()``; ``port=0`` binds a free port. It serves one snapshot directory,
    the union of several, or by default every bundled snapshot (``bundled_snapshot_dirs``).
    """

    def __init__(
        self,
        snapshot_dir: str | Path | Sequence[str | Path] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        middlewares: Sequence[Middleware] = (),
    ) -> None:
        if snapshot_dir is None:
            self.snapshot_dirs = bundled_snapshot_dirs()
        elif isinstance(snapshot_dir, (str, Path)):
            self.snapshot_dirs = [Path(snapshot_dir)]
        else:
            self.snapshot_dirs = [Path(path) for path in snapshot_dir]
        self.snapshot_dir = self.snapshot_dirs[0] if self.snapshot_dirs else None
        self.middlewares = tuple(middlewares)
        self.host = host
        self.port = port
        self.snapshot: Snapshot | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    def start(self) -> MirrorServer:
        """Load the snapshot and start serving; returns once the port accepts connections."""
        if self._thread is not None:
            return self
        self.snapshot = Snapshot.load(self.snapshot_dirs)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="hysem-mirror", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        try:
            asyncio.run_coroutine_threadsafe(self._serve(self.snapshot), loop).result(timeout=30)
        except BaseException:
            self._halt()
            raise
        return self

    async def _serve(self, snapshot: Snapshot) -> None:
        runner = web.AppRunner(create_app(snapshot, self.middlewares), access_log=None)
        await runner.setup()
        self._runner = runner
        await web.TCPSite(runner, self.host, self.port).start()
        self.port = runner.addresses[0][1]

    def stop(self) -> None:
        """Stop serving and end the loop thread; safe to call twice."""
        if self._loop is None:
            return
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=30)
            self._runner = None
        self._halt()

    def _halt(self) -> None:
        assert self._loop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> MirrorServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def root_url(self) -> str:
        if self._thread is None:
            raise RuntimeError("the mirror is not running; call start() first")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_urls(self) -> dict[str, str]:
        """Base URL per source (pubmed, openalex, scopus, crossref, unpaywall, europepmc)."""
        return base_urls(self.root_url)
