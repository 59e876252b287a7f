"""Where downloaded PDFs live and how they get there without ever leaving half a file.

A PDF's path comes from the SHA-256 of its normalized DOI (``ab/abcdef….pdf``): stable
across runs and title edits, safe on every file system, and spread over 256 folders so no
directory grows huge. A JATS XML full text is kept the same way by its PMCID
(``ab/abcdef….xml``). Next to each PDF a small JSON record keeps where it came from, so a
re-run can reuse the file and still report its source without asking anyone again.
Bytes are streamed into a temporary file in the target folder and moved into place with
``os.replace`` only once they passed every check, so readers see a whole PDF or nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import BinaryIO

from hysem_assets.core.filehash import file_sha256
from hysem_assets.fulltext.outcome import JATS, Location, PdfOutcome

#: Suffix of files still being written; whatever carries it is never a finished download.
PARTIAL_SUFFIX = ".part"
#: The reason of a row whose PDF an earlier run saved (and ``pdfs`` counts as reused).
REUSED = "reused the copy downloaded earlier"


def doi_digest(doi: str) -> str:
    """Hex SHA-256 of a normalized DOI: the name of its files."""
    return hashlib.sha256(doi.encode("utf-8")).hexdigest()


def pdf_path(downloads_dir: Path, doi: str) -> Path:
    """``<downloads_dir>/ab/abcdef….pdf`` for a normalized DOI."""
    digest = doi_digest(doi)
    return downloads_dir / digest[:2] / f"{digest}.pdf"


def jats_path(downloads_dir: Path, pmcid: str) -> Path:
    """``<downloads_dir>/ab/abcdef….xml`` for a normalized PMCID ("PMC123"): where its JATS full text is kept."""
    digest = doi_digest(pmcid)
    return downloads_dir / digest[:2] / f"{digest}.xml"


def provenance_path(pdf: Path) -> Path:
    return pdf.with_suffix(".json")


class PartialFile:
    """A temporary file beside ``target``; :meth:`commit` moves it into place, else it is removed."""

    def __init__(self, target: Path):
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=PARTIAL_SUFFIX)
        self.target = target
        self.path = Path(name)
        self.handle: BinaryIO = os.fdopen(descriptor, "wb")

    def write(self, chunk: bytes) -> None:
        self.handle.write(chunk)

    def close(self) -> None:
        """Flush and sync: a checker reading ``path`` sees every byte, and a crash after the rename
        cannot leave an empty file in place."""
        if not self.handle.closed:
            self.handle.flush()
            os.fsync(self.handle.fileno())
            self.handle.close()

    def commit(self) -> None:
        self.close()
        os.replace(self.path, self.target)

    def discard(self) -> None:
        self.handle.close()
        self.path.unlink(missing_ok=True)


@contextlib.contextmanager
def partial_file(target: Path) -> Iterator[PartialFile]:
    """A :class:`PartialFile` that is discarded unless committed, whatever goes wrong."""
    partial = PartialFile(target)
    try:
        yield partial
    finally:
        if partial.path.exists():
            partial.discard()


def write_text_atomically(path: Path, text: str) -> None:
    with partial_file(path) as partial:
        partial.write(text.encode("utf-8"))
        partial.commit()


def remember(doi: str, outcome: PdfOutcome) -> None:
    """Write the provenance record of a saved PDF (after the PDF itself is in place)."""
    assert outcome.path is not None and outcome.location is not None
    record = {"doi": doi, "sha256": outcome.sha256, "bytes": outcome.bytes, **asdict(outcome.location)}
    write_text_atomically(provenance_path(Path(outcome.path)), json.dumps(record, indent=1) + "\n")


def save_jats(downloads_dir: Path, pmcid: str, source: str, data: bytes) -> PdfOutcome:
    """Keep the JATS full text ``data`` of ``pmcid`` (fetched from ``source``), then its provenance record."""
    target = jats_path(downloads_dir, pmcid)
    with partial_file(target) as partial:
        partial.write(data)
        partial.commit()
    sha256 = hashlib.sha256(data).hexdigest()
    record = {"pmcid": pmcid, "source": source, "sha256": sha256, "bytes": len(data)}
    write_text_atomically(provenance_path(target), json.dumps(record, indent=1) + "\n")
    return jats_outcome(target, pmcid, source, sha256, len(data), "fetched")


def reuse_jats(downloads_dir: Path, pmcid: str) -> PdfOutcome | None:
    """The JATS full text of ``pmcid`` kept by an earlier run when its file is unchanged, else None."""
    path = jats_path(downloads_dir, pmcid)
    try:
        record = json.loads(provenance_path(path).read_text(encoding="utf-8"))
        intact = record["pmcid"] == pmcid and path.stat().st_size == record["bytes"]
        intact = intact and file_sha256(path) == record["sha256"]
        source = str(record["source"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return jats_outcome(path, pmcid, source, record["sha256"], record["bytes"], None) if intact else None


def jats_outcome(path: Path, pmcid: str, source: str, sha256: str, size: int, how: str | None) -> PdfOutcome:
    """The ``pdfs`` row of a work read from its JATS full text: saved, ``source`` :data:`JATS`."""
    reason = f"{how} the JATS XML full text of {pmcid} from {source}" if how else REUSED
    return PdfOutcome("saved", reason, None, str(path), sha256, size, source=JATS)


def reuse(downloads_dir: Path, doi: str) -> PdfOutcome | None:
    """The earlier download of ``doi`` when its file is still exactly what was saved, else None.

    The PDF was checked before it was first moved into place; a matching SHA-256 proves it
    is unchanged, so it needs neither Unpaywall nor the network again.
    """
    pdf = pdf_path(downloads_dir, doi)
    try:
        record = json.loads(provenance_path(pdf).read_text(encoding="utf-8"))
        intact = record["doi"] == doi and pdf.stat().st_size == record["bytes"] and file_sha256(pdf) == record["sha256"]
        location = Location(record["url"], record["host_type"], record["version"], record["license"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not intact:
        return None
    return PdfOutcome("saved", REUSED, location, str(pdf), record["sha256"], record["bytes"])
