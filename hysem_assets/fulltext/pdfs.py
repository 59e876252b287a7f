"""The ``pdfs`` stage: for every record, its PDF on disk or the reason there is none.

A PDF the reviewer attached (:mod:`~hysem_assets.fulltext.attach`) comes first: its record
asks nobody. Next, a record with a PMCID takes the open-access JATS XML full text of a source
that serves them (the registry's ``full_text_sources``, asked in turn through each one's
rate-limited client), kept by PMCID hash as a ``.xml`` file with ``source`` ``jats`` (reused
while unchanged, like a PDF) and parsed later without any PDF step; a 404 or a failure there
only counts in ``tally`` and the record goes on to the PDF route. For the others, each
distinct DOI is handled once, however many records share it: reuse the copy saved
by an earlier run when its file is unchanged (no request at all), else ask Unpaywall for
its open-access links and try them best first until one yields a valid PDF. Unpaywall is
asked through the source's rate-limited client; PDF links go through
:class:`~hysem_assets.fulltext.download.PdfDownloader` on the same session.

A DOI that failed is tried again on the next run: most failures (timeouts, 5xx, a
repository that was down) are transient, and nothing of a failed attempt is kept.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd

from hysem_assets.core.identifiers import normalize_doi
from hysem_assets.fulltext.attach import Attachment, attached_outcomes
from hysem_assets.fulltext.download import PdfDownloader, PdfLimits
from hysem_assets.fulltext.outcome import COLUMNS, DownloadFailed, Location, PdfOutcome
from hysem_assets.fulltext.store import pdf_path, remember, reuse, reuse_jats, save_jats
from hysem_assets.fulltext.unpaywall import open_locations
from hysem_assets.net.http import FetchError, HttpClient, RetryPolicy, redact_url
from hysem_assets.settings.profile import HttpSettings
from hysem_assets.sources.base import Endpoint, ProgressCallback, no_progress
from hysem_assets.sources.endpoints import with_client
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.fields import normalize_pmcid
from hysem_assets.sources.registry import BY_NAME, label

#: Keys of the ``tally`` a run fills: JATS full texts asked for and not had, by why.
JATS_NOT_FOUND, JATS_FAILED = "jats_not_found", "jats_failed"


def download_pdfs(
    records: pd.DataFrame,
    unpaywall: Endpoint,
    downloads_dir: Path,
    http: HttpSettings,
    *,
    limits: PdfLimits = PdfLimits(),
    progress: ProgressCallback = no_progress,
    attached: Sequence[Attachment] = (),
    full_text: Sequence[Endpoint] = (),
    tally: Counter[str] | None = None,
) -> pd.DataFrame:
    """One row per record (columns :data:`~hysem_assets.fulltext.outcome.COLUMNS`); synchronous."""
    return asyncio.run(
        fetch_pdfs(
            records,
            unpaywall,
            downloads_dir,
            http,
            limits=limits,
            progress=progress,
            attached=attached,
            full_text=full_text,
            tally=tally,
        )
    )


async def fetch_pdfs(
    records: pd.DataFrame,
    unpaywall: Endpoint,
    downloads_dir: Path,
    http: HttpSettings,
    *,
    limits: PdfLimits = PdfLimits(),
    progress: ProgressCallback = no_progress,
    attached: Sequence[Attachment] = (),
    full_text: Sequence[Endpoint] = (),
    tally: Counter[str] | None = None,
) -> pd.DataFrame:
    """:func:`download_pdfs` for callers already inside an event loop.

    ``records`` needs ``cluster_id`` and ``doi`` columns (``pmid`` too, to find attachments by it,
    and ``pmcid`` for JATS full texts); a record with one of the ``attached`` PDFs takes it; one with
    a PMCID the JATS full text of the first of the ``full_text`` endpoints that has it (none given:
    nobody is asked); the others are downloaded. ``tally`` (when given) counts the JATS full texts
    asked for and not had (:data:`JATS_NOT_FOUND`, :data:`JATS_FAILED`). ``progress`` is called with
    (records done, records in all) as DOIs finish.
    """
    missing = {"cluster_id", "doi"} - set(records.columns)
    if missing:
        raise ValueError(f"records lack the column(s) {sorted(missing)}; the pdfs stage needs cluster_id and doi")
    directory = downloads_dir.resolve()
    found = attached_outcomes(records, attached)
    dois = [normalize_doi(value) if isinstance(value, str) else None for value in records["doi"]]
    if full_text and "pmcid" in records.columns:
        pmcids = [normalize_pmcid(v) if a is None else None for v, a in zip(records["pmcid"], found, strict=True)]
        wanted = sorted({pmcid for pmcid in pmcids if pmcid})
        texts = await jats_full_texts(wanted, full_text, http, directory, limits, tally) if wanted else {}
        found = [attachment or texts.get(pmcid) for attachment, pmcid in zip(found, pmcids, strict=True)]
    rows_per_doi = Counter(doi for doi, attachment in zip(dois, found) if attachment is None)
    rows_per_doi[None] += len(dois) - rows_per_doi.total()  # records with an attachment ask nobody
    total = len(dois)
    done = rows_per_doi[None]
    if done < total and not unpaywall.mailto:  # no DOI (an empty corpus): no request, no contact needed
        raise ValueError(
            "Unpaywall answers only requests that carry a contact address: set HYSEM_MAILTO or the query's mailto."
        )
    progress(done, total)

    async def work(client: HttpClient) -> dict[str, PdfOutcome]:
        downloader = PdfDownloader(client.session, limits, RetryPolicy.from_settings(http))

        async def one(doi: str) -> tuple[str, PdfOutcome]:
            nonlocal done
            outcome = await pdf_for(doi, client, unpaywall, downloader, directory)
            done += rows_per_doi[doi]
            progress(done, total)
            return doi, outcome

        return dict(await asyncio.gather(*(one(doi) for doi in sorted(set(rows_per_doi) - {None}))))

    outcomes = await with_client(unpaywall, http, work) if done < total else {}
    rows = [
        {
            "cluster_id": cluster_id,
            "doi": doi or _text(raw),
            **(attachment or (outcomes[doi] if doi else _without_doi(raw))).row(),
        }
        for cluster_id, raw, doi, attachment in zip(records["cluster_id"], records["doi"], dois, found)
    ]
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table["bytes"] = table["bytes"].astype("Int64")
    return table


async def jats_full_texts(
    pmcids: Sequence[str],
    endpoints: Sequence[Endpoint],
    http: HttpSettings,
    downloads_dir: Path,
    limits: PdfLimits,
    tally: Counter[str] | None = None,
) -> dict[str, PdfOutcome]:
    """The JATS full text of each PMCID that has one: kept by an earlier run, or fetched from the first of
    ``endpoints`` (full-text sources, each through its own rate-limited client) that serves it."""
    counts = tally if tally is not None else Counter()
    kept = await asyncio.gather(*(asyncio.to_thread(reuse_jats, downloads_dir, pmcid) for pmcid in pmcids))
    texts = {pmcid: outcome for pmcid, outcome in zip(pmcids, kept, strict=True) if outcome is not None}
    wanted = [pmcid for pmcid in pmcids if pmcid not in texts]

    async def ask(clients: list[HttpClient]) -> None:
        async def one(pmcid: str) -> None:
            for endpoint, client in zip(endpoints, clients, strict=True):
                fetch_text = BY_NAME[endpoint.source].full_text
                assert fetch_text is not None, f"{endpoint.source} serves no full texts"
                try:
                    data = await fetch_text(client, endpoint, pmcid)
                except FetchError as exc:
                    counts[JATS_NOT_FOUND if exc.status == 404 else JATS_FAILED] += 1
                    continue
                except SourceFormatError:
                    counts[JATS_FAILED] += 1
                    continue
                if len(data) > limits.max_bytes:
                    counts[JATS_FAILED] += 1
                    continue
                where = label(endpoint.source)
                texts[pmcid] = await asyncio.to_thread(save_jats, downloads_dir, pmcid, where, data)
                return

        await asyncio.gather(*(one(pmcid) for pmcid in wanted))

    if wanted:
        await _with_clients(list(endpoints), http, ask)
    return texts


async def _with_clients(
    endpoints: list[Endpoint], http: HttpSettings, work: Callable[[list[HttpClient]], Awaitable[None]]
) -> None:
    """Run ``work`` with one rate-limited client per endpoint, in order, all closed after."""
    if not endpoints:
        await work([])
        return
    first, rest = endpoints[0], endpoints[1:]
    await with_client(first, http, lambda client: _with_clients(rest, http, lambda more: work([client, *more])))


async def pdf_for(
    doi: str, client: HttpClient, unpaywall: Endpoint, downloader: PdfDownloader, downloads_dir: Path
) -> PdfOutcome:
    """The outcome for one normalized DOI: reused, downloaded, or the first link's failure."""
    reused = await asyncio.to_thread(reuse, downloads_dir, doi)
    if reused is not None:
        return reused
    try:
        links = await open_locations(client, unpaywall, doi)
    except DownloadFailed as failed:
        return PdfOutcome(failed.status, failed.reason)
    target = pdf_path(downloads_dir, doi)
    failures: list[tuple[Location, DownloadFailed]] = []
    for link in links:
        try:
            saved = await downloader.download(link.url, target)
        except DownloadFailed as failed:
            failures.append((link, failed))
            continue
        reason = "downloaded"
        if failures:
            reason += f" after {len(failures)} failing link(s): {_attempts(failures)}"
        outcome = PdfOutcome("saved", reason, _shown(link), str(target), saved.sha256, saved.bytes)
        await asyncio.to_thread(remember, doi, outcome)
        return outcome
    (link, first), later = failures[0], failures[1:]
    reason = first.reason + (f"; other link(s) failed too: {_attempts(later)}" if later else "")
    return PdfOutcome(first.status, reason, _shown(link))


def _attempts(failures: list[tuple[Location, DownloadFailed]]) -> str:
    return "; ".join(f"{redact_url(link.url)}: {failed.status} ({failed.reason})" for link, failed in failures)


def _shown(link: Location) -> Location:
    """The location as it may appear in tables and on disk: secret query parameters masked."""
    return replace(link, url=redact_url(link.url))


def _text(value: object) -> str | None:
    return (value.strip() or None) if isinstance(value, str) else None


def _without_doi(raw: object) -> PdfOutcome:
    text = _text(raw)
    reason = f"'{text}' is not a DOI" if text else "the record has no DOI"
    return PdfOutcome("no_oa_location", reason)
