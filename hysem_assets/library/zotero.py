"""The Zotero library of a query: items, PDF attachments and Zotero-rendered citations.

Writes go through pyzotero to the Zotero Web API v3, or to any server that speaks it
(``base_url``). Re-runs create nothing twice: every item carries its cluster id in ``extra``
and is looked up by it, then by DOI, before anything is created. A failed item keeps its
reason and the others go on. The API key never leaves this module: failures are re-raised as
:class:`ZoteroError` with the key redacted and no chained exception that could still hold it.
"""

from __future__ import annotations

import hashlib
import html
import logging
import re
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import pandas as pd
from pyzotero import zotero
from pyzotero import zotero_errors as ze

from hysem_assets.core.identifiers import normalize_doi
from hysem_assets.library.csl import STYLE_ALIASES, Citation
from hysem_assets.library.work import Kind, Person, Work
from hysem_assets.settings.redaction import MASK, redact

log = logging.getLogger(__name__)

ZOTERO_URL = "https://api.zotero.org"
#: The most objects the Zotero API accepts in one write request.
MAX_BATCH = 50
#: Line in an item's ``extra`` naming the cluster it came from, so later runs recognise it.
CLUSTER_FIELD = "hysem-cluster"
PDF_TITLE = "Full Text PDF"

# Item type, the field naming its container, and which optional fields the type has. Types
# without a DOI field keep the DOI as a "DOI: ..." line in extra, which Zotero's citeproc reads.
_ZOTERO_TYPES: dict[Kind, tuple[str, str, frozenset[str]]] = {
    "article": ("journalArticle", "publicationTitle", frozenset({"volume", "issue", "pages", "DOI"})),
    "chapter": ("bookSection", "bookTitle", frozenset({"volume", "pages"})),
    "book": ("book", "publisher", frozenset({"volume"})),
    "conference": ("conferencePaper", "proceedingsTitle", frozenset({"volume", "pages", "DOI"})),
    "preprint": ("preprint", "repository", frozenset({"DOI"})),
    "thesis": ("thesis", "university", frozenset()),
    "report": ("report", "institution", frozenset({"pages"})),
    "dataset": ("dataset", "repository", frozenset({"DOI"})),
    "other": ("document", "publisher", frozenset()),
}
_TYPE_DEPENDENT = frozenset({"volume", "issue", "pages", "DOI"})
_NOT_WORKS = frozenset({"attachment", "note", "annotation"})
_FATAL = (ze.UserNotAuthorisedError, ze.MissingCredentialsError, httpx2.ConnectError)

_T = TypeVar("_T")
_R = TypeVar("_R")


class ZoteroError(RuntimeError):
    """A Zotero request failed. ``fatal`` when no later request can succeed either
    (the key was refused, the server is unreachable). The message never holds the API key."""

    def __init__(self, message: str, *, fatal: bool = False):
        super().__init__(message)
        self.fatal = fatal


@dataclass(frozen=True)
class ZoteroLibrary:
    """Where the library lives: a user or group library, its API key and the API's base URL."""

    library_id: str
    library_type: str
    api_key: str = field(repr=False)
    base_url: str = ZOTERO_URL
    #: The most one request may take, all of it (the profile's ``http.total_timeout_s``).
    deadline_s: float = 300.0

    def __post_init__(self) -> None:
        if self.library_type not in ("user", "group"):
            raise ValueError(f'Zotero library_type must be "user" or "group", not {self.library_type!r}')
        if not str(self.library_id).strip():
            raise ValueError("Zotero library_id is empty: set it to the numeric user or group id")

    def connect(self) -> zotero.Zotero:
        """A fresh pyzotero client; pyzotero keeps per-request state on it, so one per thread."""
        client = zotero.Zotero(str(self.library_id), self.library_type, self.api_key)
        client.endpoint = self.base_url.rstrip("/")
        return client

    def redact(self, text: str) -> str:
        """The key of this library (which may not come from the environment), then every other secret."""
        return redact(text.replace(self.api_key, MASK) if self.api_key else text)


@dataclass(frozen=True)
class LibrarySync:
    """Outcome of :func:`sync_library`, per cluster id."""

    keys: dict[str, str]
    created: list[str]
    found: list[str]
    attachments: dict[str, str]
    failures: dict[str, str]


def to_zotero_item(row: Mapping[str, Any]) -> dict[str, Any]:
    """A new-item template for one corpus row (journalArticle, bookSection, preprint, ...)."""
    work = Work.from_row(row)
    item_type, container_field, optional = _ZOTERO_TYPES[work.kind]
    extra = [
        f"DOI: {work.doi}" if work.doi and "DOI" not in optional else None,
        f"PMID: {work.pmid}" if work.pmid else None,
        f"{CLUSTER_FIELD}: {work.id}",
    ]
    fields = {
        "title": work.title,
        "abstractNote": work.abstract,
        container_field: work.container,
        "volume": work.volume,
        "issue": work.issue,
        "pages": work.pages,
        "date": str(work.year) if work.year else None,
        "language": work.language,
        "DOI": work.doi,
        "url": work.url,
        "extra": "\n".join(line for line in extra if line),
    }
    item: dict[str, Any] = {"itemType": item_type, "creators": [_creator(person) for person in work.authors]}
    for name, value in fields.items():
        if value and (name in optional or name not in _TYPE_DEPENDENT):
            item[name] = value
    return item


def find_existing(
    library: ZoteroLibrary, items: Mapping[str, Mapping[str, Any]], max_workers: int = 4
) -> tuple[dict[str, str], dict[str, str]]:
    """Keys of the items already in the library, matched by cluster id or DOI; and lookup failures.

    The cluster id finds items an earlier run wrote (even if the work has gained a DOI since);
    the DOI finds items added by hand. An item whose lookup failed is reported, not created:
    creating it could make a duplicate.
    """

    def look_up(client: zotero.Zotero, entry: tuple[str, Mapping[str, Any]]) -> tuple[str, str | None, str | None]:
        cluster_id, item = entry
        doi, cluster = _identity(item)
        for query in filter(None, (cluster, doi)):
            try:
                hits = _call(library, f"search for {query}", client.items, q=query, qmode="everything")
            except ZoteroError as error:
                if error.fatal:
                    raise
                return cluster_id, None, str(error)
            matches = [hit["data"] for hit in hits if _same_work(hit.get("data", {}), doi, cluster)]
            if matches:  # several copies: the oldest is the one people have been citing
                oldest = min(matches, key=lambda data: (data.get("dateAdded", ""), data["key"]))
                return cluster_id, oldest["key"], None
        return cluster_id, None, None

    found, failures = _split(_in_parallel(library, look_up, list(items.items()), max_workers))
    log.info("Zotero: %d of %d items already in the library", len(found), len(items))
    return found, failures


def create_items(
    library: ZoteroLibrary, items: Mapping[str, Mapping[str, Any]], batch_size: int = MAX_BATCH
) -> tuple[dict[str, str], dict[str, str]]:
    """Create items in batches of at most 50; return new keys and failures per cluster id.

    Batches go one after another: the API locks a library while it writes, so parallel
    writes would only collide. A rejected item or batch keeps the server's reason.
    """
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"batch_size must be between 1 and {MAX_BATCH} (the Zotero API limit), not {batch_size}")
    client = library.connect()
    entries = list(items.items())
    keys: dict[str, str] = {}
    failures: dict[str, str] = {}
    batches = range(0, len(entries), batch_size)
    for number, start in enumerate(batches, 1):
        batch = entries[start : start + batch_size]
        try:
            response = _call(
                library, f"create batch {number}/{len(batches)}", client.create_items, [dict(item) for _, item in batch]
            )
        except ZoteroError as error:
            if error.fatal:
                raise
            failures.update({cluster_id: str(error) for cluster_id, _ in batch})
            continue
        for index, (cluster_id, _) in enumerate(batch):
            slot = str(index)
            key = response.get("success", {}).get(slot) or response.get("unchanged", {}).get(slot)
            if key:
                keys[cluster_id] = key
            else:
                failed = response.get("failed", {}).get(slot) or {}
                code, message = failed.get("code", "?"), failed.get("message", "no reason given")
                failures[cluster_id] = library.redact(f"Zotero rejected the item (HTTP {code}): {message}")
        log.info("Zotero: batch %d/%d written (%d items)", number, len(batches), len(batch))
    return keys, failures


def attach_pdfs(
    library: ZoteroLibrary, parents: Mapping[str, str], pdfs: Mapping[str, Path | str], max_workers: int = 4
) -> tuple[dict[str, str], dict[str, str]]:
    """Upload each cluster's PDF as a child attachment, in parallel; attachment keys and failures.

    A PDF already attached (same file name and MD5) is not uploaded again; an attachment left
    without its file by an interrupted run gets the file.
    """
    failures = {cluster_id: "no Zotero item to attach the PDF to" for cluster_id in pdfs if cluster_id not in parents}
    tasks = [
        (cluster_id, parents[cluster_id], Path(path)) for cluster_id, path in pdfs.items() if cluster_id in parents
    ]

    def attach(client: zotero.Zotero, task: tuple[str, str, Path]) -> tuple[str, str | None, str | None]:
        cluster_id, parent, path = task
        try:
            return cluster_id, _attach(library, client, parent, path), None
        except ZoteroError as error:
            if error.fatal:
                raise
            return cluster_id, None, str(error)
        except OSError as error:
            return cluster_id, None, f"cannot read the PDF {path}: {error.strerror or error}"

    attached, upload_failures = _split(_in_parallel(library, attach, tasks, max_workers))
    log.info("Zotero: %d of %d PDFs attached", len(attached), len(pdfs))
    return attached, {**failures, **upload_failures}


def sync_library(
    library: ZoteroLibrary, corpus: pd.DataFrame, pdfs: Mapping[str, Path | str] | None = None, max_workers: int = 4
) -> LibrarySync:
    """Bring the corpus into the library: look up, create what is missing, attach PDFs."""
    items = {str(row["cluster_id"]): to_zotero_item(row) for row in corpus.to_dict("records")}
    found, failures = find_existing(library, items, max_workers)
    settled = found.keys() | failures.keys()
    missing = {cluster_id: item for cluster_id, item in items.items() if cluster_id not in settled}
    created, create_failures = create_items(library, missing)
    known = {**found, **created}
    keys = {cluster_id: known[cluster_id] for cluster_id in items if cluster_id in known}
    attachments, attach_failures = attach_pdfs(library, keys, pdfs or {}, max_workers)
    return LibrarySync(
        keys=keys,
        created=list(created),
        found=list(found),
        attachments=attachments,
        failures={**failures, **create_failures, **attach_failures},
    )


def zotero_citation(library: ZoteroLibrary, item_key: str, style: str = "apa", locale: str = "en-US") -> Citation:
    """Zotero's own rendering of one item (in-text and bibliography), for when citeproc-py fails."""
    client = library.connect()
    client.locale = locale
    style_name = _zotero_style(style)
    rendered = {
        content: _call(library, f"{content} of {item_key}", client.item, item_key, content=content, style=style_name)
        for content in ("citation", "bib")
    }
    in_text, entry = (rendered[content][0] if rendered[content] else "" for content in ("citation", "bib"))
    return Citation(_html_text(in_text), _html_text(entry), in_text, entry)


def with_zotero_fallback(
    citations: Mapping[str, Citation],
    keys: Mapping[str, str],
    library: ZoteroLibrary,
    style: str = "apa",
    locale: str = "en-US",
) -> dict[str, Citation]:
    """Replace each failed local citation by Zotero's rendering; a failed fallback adds its reason."""
    result = dict(citations)
    for cluster_id, citation in citations.items():
        if not citation.error or cluster_id not in keys:
            continue
        try:
            result[cluster_id] = zotero_citation(library, keys[cluster_id], style, locale)
        except ZoteroError as error:
            if error.fatal:
                raise
            result[cluster_id] = replace(citation, error=f"{citation.error}; Zotero fallback failed: {error}")
    return result


class DeadlineExceeded(Exception):
    """A Zotero call still unanswered at the library's deadline."""


def _within(deadline_s: float, function: Callable[..., _R], *args: Any, **kwargs: Any) -> _R:
    """``function(*args, **kwargs)``, given up on after ``deadline_s``: the HTTP client times each read only,
    so a server that drips its answer would hold the run for ever. The abandoned call ends with its thread."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="zotero-call", daemon=True)
    worker.start()
    worker.join(deadline_s)
    if worker.is_alive():
        raise DeadlineExceeded(f"no complete answer within {deadline_s:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _call(library: ZoteroLibrary, action: str, function: Callable[..., _R], *args: Any, **kwargs: Any) -> _R:
    """Run one pyzotero call within the library's deadline; a failure becomes a ZoteroError with the key
    redacted (a missed deadline is fatal: the next request would wait as long).

    The error is raised outside the ``except`` block so it carries no ``__context__``:
    pyzotero's messages include response bodies, which a misbehaving server may fill with
    the request's headers.
    """
    try:
        return _within(library.deadline_s, function, *args, **kwargs)
    except Exception as exc:  # every pyzotero and transport error is reported the same way
        error = ZoteroError(
            library.redact(f"Zotero {action} failed: {type(exc).__name__}: {' '.join(str(exc).split())}"),
            fatal=isinstance(exc, (*_FATAL, DeadlineExceeded)),
        )
    raise error


def _in_parallel(
    library: ZoteroLibrary, work: Callable[[zotero.Zotero, _T], _R], tasks: list[_T], max_workers: int
) -> list[_R]:
    """``work(client, task)`` for every task on a few threads, each thread with its own client."""
    local = threading.local()

    def run(task: _T) -> _R:
        if not hasattr(local, "client"):
            local.client = library.connect()
        return work(local.client, task)

    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="zotero") as pool:
        futures = [pool.submit(run, task) for task in tasks]
        try:
            return [future.result() for future in futures]
        except ZoteroError:
            for future in futures:
                future.cancel()
            raise


def _split(results: list[tuple[str, str | None, str | None]]) -> tuple[dict[str, str], dict[str, str]]:
    values = {cluster_id: value for cluster_id, value, _ in results if value}
    failures = {cluster_id: reason for cluster_id, _, reason in results if reason}
    return values, failures


def _attach(library: ZoteroLibrary, client: zotero.Zotero, parent: str, path: Path) -> str:
    with path.open("rb") as handle:
        md5 = hashlib.file_digest(handle, "md5").hexdigest()
    children = _call(library, f"listing attachments of {parent}", client.children, parent)
    for child in children:
        data = child.get("data", {})
        if data.get("itemType") == "attachment" and data.get("filename") == path.name:
            if data.get("md5") == md5:
                return data["key"]
            upload = {"key": data["key"], "filename": str(path), "md5": data.get("md5")}
            return _uploaded_key(library, _call(library, f"upload of {path.name}", client.upload_attachments, [upload]))
    result = _call(library, f"upload of {path.name}", client.attachment_both, [(PDF_TITLE, str(path))], parentid=parent)
    return _uploaded_key(library, result)


def _uploaded_key(library: ZoteroLibrary, result: Mapping[str, list[dict[str, Any]]]) -> str:
    for status in ("success", "unchanged"):
        if result.get(status):
            return result[status][0]["key"]
    reasons = [failure.get("error") or "no reason given" for failure in result.get("failure", [])]
    raise ZoteroError(library.redact(f"Zotero rejected the attachment: {reasons}"))


def _identity(item: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(DOI, cluster id) an item is known by, from its DOI field or its ``extra`` lines."""
    extra = _extra_fields(item.get("extra") or "")
    return normalize_doi(item.get("DOI") or extra.get("doi")), extra.get(CLUSTER_FIELD)


def _same_work(data: Mapping[str, Any], doi: str | None, cluster: str | None) -> bool:
    if data.get("itemType") in _NOT_WORKS:
        return False
    their_doi, their_cluster = _identity(data)
    return bool((doi and their_doi == doi) or (cluster and their_cluster == cluster))


def _extra_fields(extra: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in extra.splitlines():
        name, separator, value = line.partition(":")
        if separator and value.strip():
            fields.setdefault(name.strip().lower(), value.strip())
    return fields


def _creator(person: Person) -> dict[str, str]:
    if person.literal:
        return {"creatorType": "author", "name": person.literal}
    given = ", ".join(part for part in (person.given, person.suffix) if part)
    return {"creatorType": "author", "lastName": person.family, "firstName": given}


def _zotero_style(style: str) -> str:
    """The Zotero style repository id for a style name or the stem of a .csl path."""
    name = Path(style).stem if style.endswith(".csl") else style.lower()
    return STYLE_ALIASES.get(name, name)


def _html_text(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", markup)).split())
