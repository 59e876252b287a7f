"""What the PDF stage reports for each record: one status from a fixed set, with its evidence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import urlsplit

import pandas as pd

PdfStatus = Literal["saved", "no_oa_location", "not_pdf", "too_large", "http_error", "timeout", "invalid_pdf"]

#: Every status a record can end with; the asset's table and checks rely on exactly these.
STATUSES: tuple[PdfStatus, ...] = get_args(PdfStatus)

#: The ``source`` of a row whose saved file is a JATS XML full text (PubMed Central / Europe PMC), not a PDF.
JATS = "jats"

#: Columns of the ``pdfs`` table, in order. ``source`` (where a saved file came from) is newer than the rest:
#: tables written before it lack it (and hold PDFs only, see :func:`is_jats`).
COLUMNS = (
    "cluster_id",
    "doi",
    "status",
    "reason",
    "path",
    "sha256",
    "bytes",
    "source",
    "url",
    "host_type",
    "version",
    "license",
)


def is_jats(table: pd.DataFrame) -> pd.Series:
    """Per row of a ``pdfs`` table, whether its saved file is a JATS full text (False for a table without ``source``)."""
    if "source" not in table.columns:
        return pd.Series(False, index=table.index)
    return (table["status"] == "saved") & (table["source"] == JATS).fillna(False).astype(bool)


@dataclass(frozen=True)
class Location:
    """One link Unpaywall offers for a DOI, with what it says about the copy behind it."""

    url: str
    host_type: str | None = None
    version: str | None = None
    license: str | None = None


@dataclass(frozen=True)
class PdfOutcome:
    """How one DOI ended: a saved file, or why there is none (``reason`` is meant for people).

    ``source`` says where a saved file came from when no link did (``attached``: the reviewer's own copy;
    ``jats``: a JATS XML full text, kept instead of a PDF); a downloaded file's source is the host of its link."""

    status: PdfStatus
    reason: str
    location: Location | None = None
    path: str | None = None
    sha256: str | None = None
    bytes: int | None = None
    source: str | None = None

    def row(self) -> dict[str, object]:
        """The outcome's columns of the ``pdfs`` table (all but cluster_id and doi)."""
        location = self.location or Location(url="")
        return {
            "status": self.status,
            "reason": self.reason,
            "path": self.path,
            "sha256": self.sha256,
            "bytes": self.bytes,
            "source": self.source or (urlsplit(location.url).hostname if self.status == "saved" else None),
            "url": location.url or None,
            "host_type": location.host_type,
            "version": location.version,
            "license": location.license,
        }


class DownloadFailed(Exception):
    """A link or lookup that ended without a PDF; ``status`` says which way it failed."""

    def __init__(self, status: PdfStatus, reason: str):
        self.status = status
        self.reason = reason
        super().__init__(f"{status}: {reason}")
