"""Citation chasing through OpenAlex: one level backward and forward from a review's included studies.

Backward, a study's ``referenced_works`` are read (the studies fetched by ``openalex:W1|W2`` in
batches) and the works they name fetched the same way; forward, ``cites:W1`` is cursor-paged.
Each work reached becomes one record (``source="citations"``, ``source_id`` its W-id) however many
studies lead to it; ``found_via`` says which and in which direction. A request that still fails
after its retries leaves its studies in ``not_chased`` with the reason, and whatever was fetched
before or beside it is kept.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from hysem_assets.core.identifiers import strip_openalex_id
from hysem_assets.net.http import FetchError, HttpClient
from hysem_assets.settings.queries import CitationSearch
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback, fetch_pages, no_progress, walk_cursor
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.lookups import polite_params
from hysem_assets.sources.openalex_json import WorksPage, parse_works_page

SOURCE = "citations"
#: OpenAlex ORs at most 50 values with "|" in one filter; one page of 50 holds a whole batch.
OPENALEX_ID_BATCH = 50
MAX_PER_PAGE = 200
BACKWARD, FORWARD = "backward", "forward"
_WORK_ID = re.compile(r"^W\d+$")


@dataclass
class ChaseOutcome:
    #: Records (``source="citations"``), failed requests and request stats, as a search returns them.
    fetch: FetchOutcome
    #: W-id -> how each work was reached: ``"backward:W1"`` (W1 cites it), ``"forward:W2"`` (it cites W2).
    #: Works in ``known`` are listed too, though they have no record in ``fetch``.
    found_via: dict[str, list[str]] = field(default_factory=dict)
    #: Study W-id -> why (part of) its chase failed; the rest of the outcome holds what did arrive.
    not_chased: dict[str, str] = field(default_factory=dict)
    #: ``"W1:backward"`` / ``"W1:forward"`` -> how many works the ``per_study`` cap left out.
    capped: dict[str, int] = field(default_factory=dict)

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.fetch.records


async def chase_citations(
    client: HttpClient,
    endpoint: Endpoint,
    seeds: Sequence[str],
    settings: CitationSearch = CitationSearch(),
    progress: ProgressCallback = no_progress,
    known: Collection[str] = frozenset(),
) -> ChaseOutcome:
    """Chase the citations of ``seeds`` (OpenAlex W-ids, bare or as URLs) one level.

    The seeds' own works are never returned as chased records. ``known`` names works already held:
    they are not fetched again and get no record, but their ``found_via`` is still reported.
    """
    chase = _Chase(client, endpoint, settings, progress, {w for w in map(_work_id, known) if w})
    studies = chase.studies(seeds)
    directions = []
    if settings.backward and studies:
        directions.append(chase.backward(studies))
    if settings.forward and studies:
        directions.append(chase.forward(studies))
    await asyncio.gather(*directions)
    return chase.finish()


def _work_id(value: str | None) -> str | None:
    """``W123`` from a bare id or an OpenAlex URL, upper-cased; None when it is no work id."""
    work_id = (strip_openalex_id(str(value).strip()) or "").upper() if value else ""
    return work_id if _WORK_ID.match(work_id) else None


class _Chase:
    """The state one chase builds up; each step adds to it and keeps what earlier steps got."""

    def __init__(
        self,
        client: HttpClient,
        endpoint: Endpoint,
        settings: CitationSearch,
        progress: ProgressCallback,
        known: set[str],
    ) -> None:
        self.client, self.endpoint, self.settings, self.progress = client, endpoint, settings, progress
        self.known = known
        self.outcome = ChaseOutcome(fetch=FetchOutcome(source=SOURCE, stats=client.stats))
        self.records: dict[str, dict[str, Any]] = {}
        self.via: dict[str, list[str]] = {}
        self.seeds: set[str] = set()

    def studies(self, seeds: Sequence[str]) -> list[str]:
        """The seeds as W-ids, first occurrence first; one that is no W-id goes to ``not_chased``."""
        studies: list[str] = []
        for seed in seeds:
            work_id = _work_id(seed)
            if work_id is None:
                self.not_chased(str(seed), "", "not an OpenAlex work id (W followed by digits)")
            elif work_id not in self.seeds:
                self.seeds.add(work_id)
                studies.append(work_id)
        return studies

    # ------------------------------------------------------------------------- backward

    async def backward(self, studies: list[str]) -> None:
        """Read each study's references, then fetch the works they name that are not held yet."""
        references: dict[str, list[str]] = {}

        async def read_references(batch: list[str], number: int) -> None:
            page, reason = await self.lookup(
                batch, f"included studies' references, batch {number}", "id,referenced_works"
            )
            for work in page.records if page else []:
                references[work["source_id"]] = _references(work)
            for study in batch:
                if page is None:
                    self.not_chased(study, BACKWARD, reason)
                elif study not in references:
                    self.not_chased(study, BACKWARD, "OpenAlex has no such work, so its references are unknown")

        await asyncio.gather(*(read_references(batch, n) for n, batch in enumerate(_batches(studies), start=1)))
        wanted: dict[str, list[str]] = {}  # referenced work -> the studies citing it, in the studies' order
        for study in studies:
            for work_id in self.cap(study, BACKWARD, references.get(study, [])):
                if work_id not in self.seeds:
                    wanted.setdefault(work_id, []).append(study)
        for work_id in [w for w in wanted if w in self.known]:
            self.reach(work_id, BACKWARD, wanted.pop(work_id))
        missing: list[str] = []

        async def fetch_referenced(batch: list[str], number: int) -> None:
            page, reason = await self.lookup(batch, f"referenced works, batch {number}")
            if page is None:
                for study in dict.fromkeys(study for work_id in batch for study in wanted[work_id]):
                    self.not_chased(study, BACKWARD, reason)
                return
            returned = {work["source_id"]: work for work in page.records}
            for work_id in batch:
                if work_id in returned:
                    self.add(returned[work_id])
                    self.reach(work_id, BACKWARD, wanted[work_id])
                else:
                    missing.append(work_id)
            self.progress(len(self.records), None)

        await asyncio.gather(*(fetch_referenced(batch, n) for n, batch in enumerate(_batches(list(wanted)), start=1)))
        if missing:
            self.outcome.fetch.notes.append(
                f"{len(missing)} referenced work(s) not in OpenAlex (merged or deleted): {', '.join(sorted(missing))}"
            )

    async def lookup(self, batch: list[str], where: str, select: str | None = None) -> tuple[WorksPage | None, str]:
        """One ``openalex:`` batch, retried as a search page is: its page, or None and why it failed."""
        params = {
            "filter": "openalex:" + "|".join(batch),
            "per-page": str(OPENALEX_ID_BATCH),
            **polite_params(self.endpoint),
        }
        if select:
            params["select"] = select
        got: dict[str, WorksPage] = {}

        async def fetch_one(key: str) -> Exception | None:
            try:
                _, body = await self.client.request(f"{self.endpoint.base_url}/works", params=params)
                got[key] = parse_works_page(body, where=where)
            except (FetchError, SourceFormatError) as exc:
                return exc
            return None

        failed = await fetch_pages([where], fetch_one)
        if failed:
            self.outcome.fetch.fail(where, failed[where])
            return None, f"{where} failed: {self.outcome.fetch.failures[-1].reason}"
        page = got[where]
        self.outcome.fetch.reject_records(where, page.failures)
        return page, ""

    # ------------------------------------------------------------------------- forward

    async def forward(self, studies: list[str]) -> None:
        await asyncio.gather(*(self.citing(study) for study in studies))

    async def citing(self, study: str) -> None:
        """Cursor-page ``cites:study`` until the cap; a page that stays failed ends this study's walk."""
        per_page = min(MAX_PER_PAGE, max(1, self.endpoint.page_size), self.settings.per_study)
        params = {"filter": f"cites:{study}", "per-page": str(per_page), **polite_params(self.endpoint)}

        async def read_page(cursor: str, where: str) -> WorksPage:
            _, body = await self.client.request(f"{self.endpoint.base_url}/works", params={**params, "cursor": cursor})
            return parse_works_page(body, where=where)

        walk = FetchOutcome(source=SOURCE, stats=self.client.stats)
        await walk_cursor(
            walk, read_page, self.settings.per_study, lambda number: f"works citing {study}, page {number}"
        )
        self.outcome.fetch.failures += walk.failures
        self.outcome.fetch.rejected += walk.rejected
        if walk.failures:
            self.not_chased(study, FORWARD, f"{walk.failures[-1].where} failed: {walk.failures[-1].reason}")
        taken, total = walk.records, walk.total_available
        if total is not None and total > len(taken) and len(taken) >= self.settings.per_study:
            self.outcome.capped[f"{study}:{FORWARD}"] = total - len(taken)
        for work in taken:
            work_id = work["source_id"]
            if work_id in self.seeds:
                continue
            if work_id not in self.known:
                self.add(work)
            self.reach(work_id, FORWARD, [study])
        self.progress(len(self.records), None)

    # ------------------------------------------------------------------------- bookkeeping

    def cap(self, study: str, direction: str, work_ids: list[str]) -> list[str]:
        if len(work_ids) > self.settings.per_study:
            self.outcome.capped[f"{study}:{direction}"] = len(work_ids) - self.settings.per_study
        return work_ids[: self.settings.per_study]

    def add(self, record: dict[str, Any]) -> None:
        """Keep the first record of a work, relabelled as a chased one."""
        self.records.setdefault(record["source_id"], {**record, "source": SOURCE})

    def reach(self, work_id: str, direction: str, studies: list[str]) -> None:
        entries = self.via.setdefault(work_id, [])
        entries.extend(f"{direction}:{study}" for study in studies if f"{direction}:{study}" not in entries)

    def not_chased(self, study: str, direction: str, reason: str) -> None:
        reason = f"{direction}: {reason}" if direction else reason
        previous = self.outcome.not_chased.get(study)
        self.outcome.not_chased[study] = f"{previous}; {reason}" if previous else reason

    def finish(self) -> ChaseOutcome:
        """Records and ``found_via`` in a stable order (by W-id, then direction and study)."""
        fetch = self.outcome.fetch
        fetch.records = [self.records[work_id] for work_id in sorted(self.records)]
        fetch.total_available = len(fetch.records)
        self.outcome.found_via = {work_id: sorted(self.via[work_id]) for work_id in sorted(self.via)}
        return self.outcome


def _batches(work_ids: list[str]) -> list[list[str]]:
    return [work_ids[i : i + OPENALEX_ID_BATCH] for i in range(0, len(work_ids), OPENALEX_ID_BATCH)]


def _references(record: dict[str, Any]) -> list[str]:
    """The W-ids a parsed work's raw JSON lists in ``referenced_works``, in its order, once each."""
    work = json.loads(record["raw"])
    found = (_work_id(ref) for ref in work.get("referenced_works") or [] if isinstance(ref, str))
    return list(dict.fromkeys(work_id for work_id in found if work_id))
