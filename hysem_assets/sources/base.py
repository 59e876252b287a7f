"""What every metadata source client takes and returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.http import FetchError, RequestStats, redact_url

#: Called with (records so far, total expected or None) after every page.
ProgressCallback = Callable[[int, int | None], None]


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
    """Everything a source returned for one query, successes and failures alike."""

    source: str
    records: list[dict[str, Any]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    total_available: int | None = None
    skipped: str | None = None
    #: What the source said about the query itself (e.g. PubMed ignoring an unknown phrase).
    notes: list[str] = field(default_factory=list)
    stats: RequestStats = field(default_factory=RequestStats)

    def fail(self, where: str, error: Exception) -> None:
        """Record a failed page, keeping only what is safe to show (no keys)."""
        if isinstance(error, (FetchError, SourceFormatError)):
            reason = str(error)
        else:
            reason = f"{type(error).__name__}: {error}"
        self.failures.append(Failure(where=where, reason=reason))

    def fail_records(self, where: str, reasons: list[str]) -> None:
        """Record per-record parse failures inside an otherwise good page."""
        self.failures.extend(Failure(where=where, reason=reason) for reason in reasons)

    def expected(self, cap: int) -> int | None:
        """How many records this fetch should end with, once the source said its total."""
        return None if self.total_available is None else min(self.total_available, cap)


def no_progress(done: int, total: int | None) -> None:
    """Default progress callback."""
