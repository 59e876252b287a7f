"""Paths from DOI hashes, atomic writes, and reuse of earlier downloads."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hysem_assets.fulltext.outcome import Location, PdfOutcome
from hysem_assets.fulltext.store import doi_digest, partial_file, pdf_path, provenance_path, remember, reuse

DOI = "10.5555/ahi.2021.0307"


def test_path_is_sharded_by_the_sha256_of_the_doi(tmp_path: Path) -> None:
    digest = hashlib.sha256(DOI.encode()).hexdigest()
    assert doi_digest(DOI) == digest
    assert pdf_path(tmp_path, DOI) == tmp_path / digest[:2] / f"{digest}.pdf"
    assert pdf_path(tmp_path, "10.5555/ahi.2021.0308") != pdf_path(tmp_path, DOI)
    awkward = "10.1002/(sici)1097-0258(19960315)15:5<453::aid-sim178>3.0.co;2-#"
    assert pdf_path(tmp_path, awkward).name == f"{doi_digest(awkward)}.pdf"


def test_a_committed_partial_file_replaces_the_target(tmp_path: Path) -> None:
    target = tmp_path / "ab" / "x.pdf"
    with partial_file(target) as partial:
        partial.write(b"%PDF-")
        assert partial.path.parent == target.parent and partial.path.exists() and not target.exists()
        partial.commit()
    assert target.read_bytes() == b"%PDF-" and [p.name for p in target.parent.iterdir()] == ["x.pdf"]


def test_a_failed_write_leaves_the_old_file_and_no_partial(tmp_path: Path) -> None:
    target = tmp_path / "x.pdf"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), partial_file(target) as partial:
        partial.write(b"new")
        raise RuntimeError("connection dropped")
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["x.pdf"]


def saved(tmp_path: Path, data: bytes = b"%PDF-1.4 fake") -> PdfOutcome:
    path = pdf_path(tmp_path, DOI)
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    location = Location("http://127.0.0.1/files/x.pdf", "publisher", "publishedVersion", "cc-by")
    outcome = PdfOutcome("saved", "downloaded", location, str(path), hashlib.sha256(data).hexdigest(), len(data))
    remember(DOI, outcome)
    return outcome


def test_an_unchanged_download_is_reused_with_its_provenance(tmp_path: Path) -> None:
    outcome = saved(tmp_path)
    assert provenance_path(Path(outcome.path)).is_file()
    assert reuse(tmp_path, DOI) == PdfOutcome(
        "saved", "reused the copy downloaded earlier", outcome.location, outcome.path, outcome.sha256, outcome.bytes
    )


def test_a_changed_missing_or_unrecorded_file_is_not_reused(tmp_path: Path) -> None:
    outcome = saved(tmp_path)
    path = Path(outcome.path)
    path.write_bytes(b"%PDF-1.4 fakE")
    assert reuse(tmp_path, DOI) is None
    path.unlink()
    assert reuse(tmp_path, DOI) is None
    assert reuse(tmp_path, "10.5555/never.downloaded") is None
    path.write_bytes(b"%PDF-1.4 fake")
    provenance_path(path).write_text("{not json", encoding="utf-8")
    assert reuse(tmp_path, DOI) is None
