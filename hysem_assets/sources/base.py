"""What every metadata source client takes and returns."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from hysem_assets.net.http import FetchError, RequestStats
from hysem_assets.settings.redaction import redact, redact_url
from hysem_assets.sources.errors import SourceFormatError

#: Called with (records so far, total expected or None) after every page.
ProgressCallback = Callable[[int, int | None], None]
#: Rounds in which pages or batches that failed are requested again, after the others,
#: before the fetch counts as partial. The HTTP client already retries 429, 5xx and
#: network errors; a round also covers a body cut off or garbled on the way.
RETRY_ROUNDS = 1
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Endpoint:
    """Where and how politely to talk to one source. ``api_key`` is never logged."""

    source: str
    base_url: str
    requests_per_second: float
    max_concurrency: int
    page_size: int
    api_key: str | None = field(default=None, repr=False)
    mailto: str | None = None

    @property
    def display_url(self) -> str:
        return redact_url(self.base_url)


@dataclass(frozen=True)
class Failure:
    """One request or record that failed, kept so the asset can report it."""

    where: str
    reason: str


@dataclass
class FetchOutcome:
    """Everything a source returned for one query, successes and failures alike.

    ``failures`` are requests (pages, batches) that failed after their retries: the
    records they held are missing, so the fetch is partial. ``rejected`` are single
    records a good page held that could not be read: retrying cannot mend them.
    """

    source: str
    records: list[dict[str, Any]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    rejected: list[Failure] = field(default_factory=list)
    total_available: int | None = None
    skipped: str | None = None
    #: What the source said about the query itself (e.g. PubMed ignoring an unknown phrase).
    notes: list[str] = field(default_factory=list)
    stats: RequestStats = field(default_factory=RequestStats)

    @property
    def partial(self) -> bool:
        """Requests failed for good, so records the source holds are missing."""
        return bool(self.failures)

    def fail(self, where: str, error: Exception) -> None:
        """Record a failed page, keeping only what is safe to show (no keys)."""
        if isinstance(error, (FetchError, SourceFormatError)):
            reason = str(error)
        else:
            reason = redact(f"{type(error).__name__}: {error}")
        self.failures.append(Failure(where=where, reason=reason))

    def reject_records(self, where: str, reasons: list[str]) -> None:
        """Record per-record parse failures inside an otherwise good page."""
        self.rejected.extend(Failure(where=where, reason=redact(reason)) for reason in reasons)

    def expected(self, cap: int) -> int | None:
        """How many records this fetch should end with, once the source said its total."""
        return None if self.total_available is None else min(self.total_available, cap)


def no_progress(done: int, total: int | None) -> None:
    """Default progress callback."""


async def fetch_pages(
    keys: Iterable[K], fetch_one: Callable[[K], Awaitable[Exception | None]], rounds: int = RETRY_ROUNDS
) -> dict[K, Exception]:
    """Fetch every page concurrently, then the failed ones again for ``rounds`` rounds.

    ``fetch_one`` stores what it got and returns None, or returns the error of a page it
    could not get. What comes back are the pages still failing, with their last error.
    """
    pending = list(keys)
    errors: dict[K, Exception] = {}
    for _ in range(rounds + 1):
        results = await asyncio.gather(*(fetch_one(key) for key in pending))
        errors = {key: error for key, error in zip(pending, results, strict=True) if error is not None}
        pending = list(errors)
        if not pending:
            break
    return errors


class CursorPage(Protocol):
    """One page of a cursor-paged search, as its parser reads it."""

    records: list[dict[str, Any]]
    #: A reason per result of the page that could not be read.
    failures: list[str]
    next_cursor: str | None

    @property
    def results(self) -> int:
        """Results the page held, read or not."""

    @property
    def total(self) -> int | None:
        """Results the search found, as the source says."""


async def walk_cursor(
    outcome: FetchOutcome,
    read_page: Callable[[str, str], Awaitable[CursorPage]],
    max_records: int,
    where: Callable[[int], str],
    progress: ProgressCallback = no_progress,
) -> FetchOutcome:
    """Follow a search's cursor from ``*`` until a page is empty, the cursor stops moving, every result the
    source counted was seen, or ``max_records`` are held.

    Cursor pages are sequential by nature: a page that fails (``read_page(cursor, where)`` raising a fetch
    or format error) is requested again at once, and if it still fails the walk ends there; what came
    before it is kept and the failure says where it stopped.
    """
    pages: dict[str, CursorPage] = {}
    cursor: str | None = "*"
    number, seen = 1, 0

    async def fetch_page(cursor: str) -> Exception | None:
        try:
            pages[cursor] = await read_page(cursor, where(number))
        except (FetchError, SourceFormatError) as exc:
            return exc
        return None

    while cursor and len(outcome.records) < max_records:
        failed = await fetch_pages([cursor], fetch_page)
        if failed:
            outcome.fail(where(number), failed[cursor])
            break
        page = pages.pop(cursor)
        outcome.total_available = page.total if page.total is not None else outcome.total_available
        outcome.reject_records(where(number), page.failures)
        outcome.records.extend(page.records[: max_records - len(outcome.records)])
        seen += page.results
        progress(len(outcome.records), outcome.expected(max_records))
        finished = not page.results or page.next_cursor == cursor or (page.total is not None and seen >= page.total)
        cursor = None if finished else page.next_cursor
        number += 1
    return outcome
