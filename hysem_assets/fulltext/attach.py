"""PDFs the reviewer obtained (a library copy, an author's reprint) attached to works of a query.

Open access covers part of a review at best; a paywalled work that screening includes needs
the copy the reviewer got some other way. An attached PDF passes the same checks as a
download (``%PDF-`` magic, structure, the profile's size cap), is kept under
``HYSEM_HOME/attachments/<query>/`` by the SHA-256 of its bytes, and is listed in that
folder's register, ``attachments.json``, which ``pdfs`` reads before it downloads anything.

The register names each work by cluster id, DOI and PMID: a re-search can give a work a new
cluster id (a source adds a record to it), and its attachment still finds it. Files are moved
into place before the register names them and the register is replaced whole, under a lock,
so a crash or a second writer never leaves it naming half a file; a refused attachment writes
nothing at all.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from hysem_assets.core.atomic import write_json
from hysem_assets.core.filehash import file_sha256
from hysem_assets.core.identifiers import normalize_doi, normalize_pmid
from hysem_assets.core.pdfcheck import starts_like_pdf, structural_problem
from hysem_assets.fulltext.outcome import PdfOutcome
from hysem_assets.fulltext.store import partial_file
from hysem_assets.settings.environment import hysem_home
from hysem_assets.settings.queries import get_query
from hysem_assets.stores.tables import stored_asset

#: The ``source`` of a ``pdfs`` row whose file the reviewer attached.
ATTACHED = "attached"
CORPUS = "deduped_corpus"


class AttachmentError(ValueError):
    """An attachment refused, or a register that cannot be read; the message is the line to show."""


@dataclass(frozen=True)
class Attachment:
    """One attached PDF: the work it belongs to, the file as the reviewer named it, and where it is kept."""

    cluster_id: str
    doi: str | None
    pmid: str | None
    filename: str
    sha256: str
    bytes: int
    attached_at: str  # ISO 8601, UTC, to the second
    path: str

    @property
    def work(self) -> str:
        """The work as people name it: cluster id, with its DOI or PMID."""
        named = f"doi {self.doi}" if self.doi else f"pmid {self.pmid}" if self.pmid else ""
        return f"{self.cluster_id} ({named})" if named else self.cluster_id

    def same_work(self, cluster_id: str, doi: str | None, pmid: str | None) -> bool:
        """Whether the work is this attachment's: the same cluster id, DOI or PMID."""
        return (
            self.cluster_id == cluster_id
            or (self.doi is not None and self.doi == doi)
            or (self.pmid is not None and self.pmid == pmid)
        )

    def intact(self) -> bool:
        """Whether the kept file is still exactly the bytes attached."""
        path = Path(self.path)
        try:
            return path.stat().st_size == self.bytes and file_sha256(path) == self.sha256
        except OSError:
            return False

    def outcome(self) -> PdfOutcome:
        """The ``pdfs`` row of the work: saved, from the attached file."""
        reason = f"attached by the reviewer: {self.filename}, {self.attached_at}"
        return PdfOutcome("saved", reason, None, self.path, self.sha256, self.bytes, source=ATTACHED)


@dataclass(frozen=True)
class Attached:
    """What :func:`attach_pdf` did: the work's attachment now, and the one it had before (None: none)."""

    attachment: Attachment
    previous: Attachment | None

    @property
    def change(self) -> str:
        """``unchanged`` (this file was attached already), ``replaced`` (another file was) or ``attached``."""
        if self.previous == self.attachment:
            return "unchanged"
        if self.previous is None or self.previous.sha256 == self.attachment.sha256:
            return "attached"  # new, or its kept copy had gone and is back
        return "replaced"

    @property
    def message(self) -> str:
        """One line for the reviewer."""
        new = self.attachment
        if self.change == "unchanged":
            return f"{new.filename} is already the PDF of {new.work}; nothing changed."
        said = f"Attached {new.filename} ({_size(new.bytes)}, sha256 {new.sha256[:12]}) to {new.work}"
        if self.change == "replaced":
            said += f", replacing {self.previous.filename}"
        return said + ". Materialize pdfs (and what follows) to take it up."


def attachments_dir(slug: str) -> Path:
    return hysem_home() / "attachments" / slug


def register_path(slug: str) -> Path:
    return attachments_dir(slug) / "attachments.json"


def attachments(slug: str) -> list[Attachment]:
    """The PDFs attached to works of query ``slug``, by cluster id; none when nothing was ever attached."""
    path = register_path(slug)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["attachments"]
        return [Attachment(**entry) for entry in entries]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AttachmentError(
            f"{path}: the register of attached PDFs cannot be read ({exc}); restore it from a backup or remove it "
            "and attach the PDFs again"
        ) from None


def attach_pdf(slug: str, work: str, data: bytes, filename: str, *, max_bytes: int | None = None) -> Attached:
    """Attach the PDF ``data`` (named ``filename``) to ``work`` of query ``slug``: a DOI, PMID or cluster id
    of its ``deduped_corpus``. Refused with :class:`AttachmentError`, nothing written, when the work is not
    the query's, the bytes are not a whole PDF or exceed ``max_bytes`` (default: the profile's PDF size cap),
    or the same PDF is attached to another work. Another file replaces the work's attachment."""
    row = find_work(query_corpus(slug), work, slug)
    cluster_id, doi, pmid = row["cluster_id"], normalize_doi(row["doi"]), normalize_pmid(row["pmid"])
    filename = Path(filename).name or "the file"  # a browser may send a path
    refuse_oversized(len(data), filename, max_bytes)
    if not starts_like_pdf(data):
        raise AttachmentError(f"{filename} is not a PDF (it does not start with %PDF-); nothing was attached")
    if problem := _structural_problem(data):
        raise AttachmentError(f"{filename} is a damaged PDF: {problem}; nothing was attached")
    sha256 = hashlib.sha256(data).hexdigest()
    target = attachments_dir(slug) / sha256[:2] / f"{sha256}.pdf"
    with _locked(slug):
        register = attachments(slug)
        previous = next((a for a in register if a.same_work(cluster_id, doi, pmid)), None)
        if previous is not None and previous.sha256 == sha256 and previous.intact():
            return Attached(previous, previous)
        if other := next((a for a in register if a.sha256 == sha256 and a is not previous), None):
            raise AttachmentError(
                f"{filename} is already attached to {other.work} of {slug!r}; nothing was attached. Detach it there "
                f"first (`hysem pdf detach --query {slug} {other.cluster_id}`) if it belongs to {cluster_id}"
            )
        _store(data, target)
        now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        new = Attachment(cluster_id, doi, pmid, filename, sha256, len(data), now, str(target))
        _write_register(slug, [*(a for a in register if a is not previous), new])
        if previous is not None and previous.path != new.path:
            _discard(Path(previous.path))
    return Attached(new, previous)


def attach_file(slug: str, work: str, path: Path, *, max_bytes: int | None = None) -> Attached:
    """:func:`attach_pdf` for a file on disk; one over the size cap is refused before it is read."""
    limit = max_bytes if max_bytes is not None else _profile_max_bytes()
    refuse_oversized(path.stat().st_size, path.name, limit)
    return attach_pdf(slug, work, path.read_bytes(), path.name, max_bytes=limit)


def detach_pdf(slug: str, work: str) -> Attachment:
    """Take the attached PDF off ``work`` (a DOI, PMID or cluster id) of query ``slug`` and delete its kept file;
    the attachment removed. Refused when the work has none."""
    get_query(slug)
    named = (work.strip(), normalize_doi(work), normalize_pmid(work))
    if not register_path(slug).is_file():  # nothing attached: refused before any folder is made
        raise _not_attached(slug, work)
    with _locked(slug):
        register = attachments(slug)
        found = next((a for a in register if a.same_work(*named)), None)
        if found is None:
            raise _not_attached(slug, work)
        _write_register(slug, [a for a in register if a is not found])
        _discard(Path(found.path))
    return found


def _not_attached(slug: str, work: str) -> AttachmentError:
    return AttachmentError(
        f"no PDF is attached to {work!r} in {slug!r}; `hysem pdf list --query {slug}` shows the attached ones"
    )


def query_corpus(slug: str) -> pd.DataFrame:
    """The works of query ``slug`` (its ``deduped_corpus``); an undeclared query or one not yet searched is refused."""
    get_query(slug)
    return stored_asset(CORPUS, slug, "attach PDFs to its works", AttachmentError)


def find_work(corpus: pd.DataFrame, work: str, slug: str) -> pd.Series:
    """The corpus row that ``work`` names: its cluster id, else its DOI, else its PMID."""
    text = work.strip()
    doi, pmid = normalize_doi(text), normalize_pmid(text)
    for column, value, normalize in (
        ("cluster_id", text, str),
        ("doi", doi, normalize_doi),
        ("pmid", pmid, normalize_pmid),
    ):
        if value is None:
            continue
        matches = corpus[corpus[column].map(lambda v: normalize(v) if isinstance(v, str) else None) == value]
        if len(matches) == 1:
            return matches.iloc[0]
        if len(matches) > 1:
            raise AttachmentError(
                f"{work!r} names {len(matches)} works of {slug!r} ({', '.join(matches['cluster_id'])}); "
                "name one by its cluster id; nothing was attached"
            )
    raise AttachmentError(
        f"no work of {slug!r} has the DOI, PMID or cluster id {work!r}; nothing was attached. Find the work's "
        f"cluster id with `hysem screen export --query {slug} works.csv`"
    )


def refuse_oversized(size: int, filename: str, max_bytes: int | None) -> None:
    limit = max_bytes if max_bytes is not None else _profile_max_bytes()
    if size > limit:
        raise AttachmentError(
            f"{filename} is {_size(size)}, over the {_size(limit)} limit on PDFs (the profile's "
            "pdfs.max_megabytes); nothing was attached"
        )


def usable_attachments(register: Sequence[Attachment]) -> tuple[list[Attachment], list[Attachment]]:
    """The attachments whose kept file is intact, and those whose file went missing or changed."""
    intact = [a for a in register if a.intact()]
    return intact, [a for a in register if a not in intact]


def attached_outcomes(records: pd.DataFrame, register: Sequence[Attachment]) -> list[PdfOutcome | None]:
    """For each record (``cluster_id``, ``doi``, optional ``pmid``), the outcome of its attachment, else None."""
    pmids = records["pmid"] if "pmid" in records else [None] * len(records)
    found = []
    for cluster_id, doi, pmid in zip(records["cluster_id"], records["doi"], pmids):
        work = (cluster_id, normalize_doi(doi) if isinstance(doi, str) else None, normalize_pmid(pmid))
        match = next((a for a in register if a.same_work(*work)), None)
        found.append(match.outcome() if match else None)
    return found


def _size(count: int) -> str:
    return f"{count / 2**20:.1f} MB" if count >= 2**20 else f"{count / 1024:.1f} KB"


def _profile_max_bytes() -> int:
    from hysem_assets.settings.profile import load_settings

    return int(load_settings().profile.pdfs.max_megabytes * 2**20)


def _structural_problem(data: bytes) -> str | None:
    """Why ``data`` is not a whole, readable PDF (None: it is), checked outside ``HYSEM_HOME`` so that a
    refused file leaves nothing there."""
    with tempfile.TemporaryDirectory(prefix="hysem-attach-") as folder:
        path = Path(folder) / "attached.pdf"
        path.write_bytes(data)
        return structural_problem(path)


def _store(data: bytes, target: Path) -> None:
    """``data`` at ``target``, whole or not at all; a file already there with these bytes is kept."""
    if target.is_file() and file_sha256(target) == hashlib.sha256(data).hexdigest():
        return
    with partial_file(target) as partial:
        partial.write(data)
        partial.commit()


def _discard(path: Path) -> None:
    """Delete a kept file no longer attached, and its shard folder once empty."""
    path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        path.parent.rmdir()


def _write_register(slug: str, register: list[Attachment]) -> None:
    ordered = sorted(register, key=lambda a: a.cluster_id)
    write_json(register_path(slug), {"attachments": [asdict(a) for a in ordered]})


@contextmanager
def _locked(slug: str) -> Iterator[None]:
    """One writer of the query's register at a time (the command line and the screening page may both attach)."""
    folder = attachments_dir(slug)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "attachments.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
