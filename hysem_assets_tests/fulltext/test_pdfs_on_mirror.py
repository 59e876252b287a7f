"""The whole PDF stage against the loopback mirror and its planted faults.

One module-scoped run downloads the sample; the tests then read its table, the files it
left and the requests the mirror saw. Timeouts are small so the slow drip stays cheap.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import pytest

from hysem_assets.core.pdfcheck import structural_problem
from hysem_assets.fulltext.download import PdfLimits
from hysem_assets.fulltext.outcome import STATUSES
from hysem_assets.fulltext.pdfs import download_pdfs
from hysem_assets.fulltext.store import PARTIAL_SUFFIX, pdf_path
from hysem_assets.mirror.server import MirrorServer, default_snapshot_dir
from hysem_assets.settings.profile import HttpSettings
from hysem_assets.sources.base import Endpoint
from hysem_assets_tests.fulltext.recorder import Recorder

SAMPLE = default_snapshot_dir()
TRUTH = json.loads((SAMPLE / "truth.json").read_text(encoding="utf-8"))
UNKNOWN_DOI = "10.5555/not-in-unpaywall.0001"
HTTP = HttpSettings(connect_timeout_s=2, read_timeout_s=2, max_retries=1, backoff_base_s=0.01)
LIMITS = PdfLimits(max_bytes=4 * 2**20, timeout_s=0.6, requests_per_second=200, max_concurrency=8)
#: The planted cases of articles.yaml, by the status each must end with.
PLANTED = {
    "10.5555/cds.2022.0105": "not_pdf",  # url_for_pdf serves an HTML landing page
    "10.5555/jmlh.2023.0310": "not_pdf",  # no PDF link; the landing page is HTML
    "10.5555/ehr.2023.0001": "invalid_pdf",  # a truncated PDF
    "10.9999/rsac.2018.22.2.95": "http_error",  # 404
    "10.5555/pcph.2024.0812": "http_error",  # redirect loop
    "10.5555/hrl.2022.0103": "too_large",  # streamed past the cap
    "10.9999/eer.2023.262": "timeout",  # slow drip
    "10.5555/ahi.2021.0419": "saved",  # best location 404s, the PMC copy downloads
    "10.5555/jec.2019.0312": "no_oa_location",  # closed access
}


@dataclass
class Run:
    table: pd.DataFrame
    seconds: float


def records() -> pd.DataFrame:
    dois = [*TRUTH["pdf_status"], UNKNOWN_DOI, None, "not a doi"]
    return pd.DataFrame({"cluster_id": [f"c{n:03d}" for n in range(len(dois))], "doi": dois})


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
def mirror(recorder: Recorder) -> Iterator[MirrorServer]:
    with MirrorServer(middlewares=[recorder.middleware]) as server:
        yield server


def endpoint(mirror: MirrorServer) -> Endpoint:
    return Endpoint(
        "unpaywall",
        mirror.base_urls["unpaywall"],
        requests_per_second=200,
        max_concurrency=8,
        page_size=1,
        mailto="review@example.org",
    )


def run(mirror: MirrorServer, downloads: Path, limits: PdfLimits = LIMITS) -> Run:
    started = time.monotonic()
    table = download_pdfs(records(), endpoint(mirror), downloads, HTTP, limits=limits)
    return Run(table, time.monotonic() - started)


@pytest.fixture(scope="module")
def first(mirror: MirrorServer, downloads: Path) -> Run:
    return run(mirror, downloads)


@pytest.fixture(scope="module")
def table(first: Run) -> pd.DataFrame:
    return first.table.set_index("doi", drop=False)


def test_one_row_per_record_with_the_documented_columns(first: Run) -> None:
    assert list(first.table.columns) == [
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
    ]
    assert first.table["cluster_id"].tolist() == records()["cluster_id"].tolist()
    saved = first.table["status"] == "saved"
    assert set(first.table.loc[saved, "source"]) == {"127.0.0.1"} and first.table.loc[~saved, "source"].isna().all()
    assert set(first.table["status"]) == set(STATUSES)
    assert first.table["reason"].map(bool).all()


def test_every_doi_ends_with_the_status_the_sample_plants(table: pd.DataFrame) -> None:
    statuses = table.loc[list(TRUTH["pdf_status"]), "status"].to_dict()
    assert statuses == TRUTH["pdf_status"]
    assert {doi: TRUTH["pdf_status"][doi] for doi in PLANTED} == PLANTED
    assert Counter(TRUTH["pdf_status"].values())["saved"] >= 8


def test_planted_failures_say_why(table: pd.DataFrame, mirror: MirrorServer) -> None:
    reasons = table["reason"]
    assert reasons["10.5555/cds.2022.0105"] == "served text/html, not a PDF"
    assert table.loc["10.5555/jmlh.2023.0310", "url"].endswith("/files/10.5555_jmlh.2023.0310.html")
    assert "%%EOF" in reasons["10.5555/ehr.2023.0001"] and "truncated" in reasons["10.5555/ehr.2023.0001"]
    assert reasons["10.9999/rsac.2018.22.2.95"] == "HTTP 404 Not Found"
    assert reasons["10.5555/pcph.2024.0812"].startswith("redirect loop: ")
    assert reasons["10.5555/hrl.2022.0103"] == f"more than the {LIMITS.max_bytes:,}-byte cap"
    assert reasons["10.9999/eer.2023.262"] == f"no complete response within {LIMITS.timeout_s:g} s"
    assert reasons[UNKNOWN_DOI] == "Unpaywall does not know this DOI"
    assert reasons["10.5555/jec.2019.0312"] == "Unpaywall lists no open-access location (oa_status closed)"
    no_doi = table[table["doi"].isna()].iloc[0]
    assert (no_doi["status"], no_doi["reason"]) == ("no_oa_location", "the record has no DOI")
    assert table.loc["not a doi", "reason"] == "'not a doi' is not a DOI"
    failed = table[table["status"].isin(["not_pdf", "invalid_pdf", "http_error", "too_large", "timeout"])]
    assert failed["url"].str.startswith(f"{mirror.root_url}/files/").all()
    assert failed[["path", "sha256", "bytes"]].isna().all().all()


def test_a_failing_best_location_falls_back_to_the_next_one(table: pd.DataFrame, mirror: MirrorServer) -> None:
    row = table.loc["10.5555/ahi.2021.0419"]
    assert row["status"] == "saved"
    assert (row["url"], row["host_type"], row["version"]) == (
        f"{mirror.root_url}/files/PMC8398114.pdf",
        "repository",
        "publishedVersion",
    )
    assert row["reason"].startswith("downloaded after 1 failing link(s): ") and "HTTP 404" in row["reason"]


def test_saved_files_are_the_served_pdfs_at_paths_from_the_doi_hash(table: pd.DataFrame, downloads: Path) -> None:
    saved = table[table["status"] == "saved"]
    for doi, row in saved.iterrows():
        digest = hashlib.sha256(doi.encode()).hexdigest()
        path = Path(row["path"])
        assert path == downloads.resolve() / digest[:2] / f"{digest}.pdf" == pdf_path(downloads.resolve(), doi)
        data = path.read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (row["sha256"], row["bytes"])
        served = SAMPLE / "files" / row["url"].rsplit("/", 1)[-1]
        assert data == served.read_bytes()
        assert row["host_type"] in {"publisher", "repository"} and row["version"]
    assert saved["license"].notna().any()


def test_nothing_but_valid_pdfs_and_their_provenance_is_left_on_disk(table: pd.DataFrame, downloads: Path) -> None:
    files = [path for path in downloads.rglob("*") if path.is_file()]
    pdfs = sorted(path for path in files if path.suffix == ".pdf")
    assert not [path for path in files if path.name.endswith(PARTIAL_SUFFIX) or path.name.startswith(".")]
    assert sorted(path.with_suffix(".json") for path in pdfs) == sorted(p for p in files if p.suffix == ".json")
    assert len(files) == 2 * len(pdfs)
    assert sorted(map(str, pdfs)) == sorted(table.loc[table["status"] == "saved", "path"])
    for path in pdfs:
        assert path.read_bytes()[:5] == b"%PDF-" and structural_problem(path) is None


def test_a_rerun_reuses_every_saved_file_without_asking_anyone(
    first: Run, mirror: MirrorServer, downloads: Path, recorder: Recorder
) -> None:
    recorder.paths.clear()
    again = run(mirror, downloads).table
    saved = first.table["status"] == "saved"
    saved_files = {"/files/" + url.rsplit("/", 1)[-1] for url in first.table.loc[saved, "url"]}
    assert not saved_files & set(recorder.asked(lambda path: path.startswith("/files/")))
    asked = {path.split("/v2/", 1)[1] for path in recorder.paths if "/v2/" in path}
    assert not asked & set(first.table.loc[saved, "doi"])
    assert (again.loc[saved, "reason"] == "reused the copy downloaded earlier").all()
    kept = ["cluster_id", "doi", "status", "path", "sha256", "bytes", "url", "host_type", "version", "license"]
    pd.testing.assert_frame_equal(again[kept], first.table[kept])
    # failures are tried again: the next run may succeed
    assert recorder.paths["/files/10.5555_cds.2022.0105.html"] == 1


def test_a_changed_file_on_disk_is_downloaded_again(
    first: Run, mirror: MirrorServer, downloads: Path, recorder: Recorder
) -> None:
    row = first.table.set_index("doi").loc["10.9999/eer.2022.214"]
    Path(row["path"]).write_bytes(b"%PDF-1.4\nreplaced by someone\n%%EOF\n")
    recorder.paths.clear()
    again = run(mirror, downloads).table.set_index("doi").loc["10.9999/eer.2022.214"]
    assert (again["status"], again["reason"], again["sha256"]) == ("saved", "downloaded", row["sha256"])
    assert recorder.asked(lambda path: path.startswith("/files/"))["/files/10.9999_eer.2022.214.pdf"] == 1


def test_the_slow_drip_is_cut_at_the_timeout(first: Run) -> None:
    assert first.seconds < LIMITS.timeout_s + 8


def test_the_size_cap_also_rejects_a_declared_length(mirror: MirrorServer, tmp_path: Path) -> None:
    small = PdfLimits(max_bytes=4096, timeout_s=0.6, requests_per_second=200, max_concurrency=8)
    table = run(mirror, tmp_path, small).table.set_index("doi", drop=False)
    row = table.loc["10.9999/eer.2022.214"]
    assert row["status"] == "too_large"
    assert re.match(r"declares [\d,]+ bytes, over the 4,096-byte cap; other link\(s\) failed too: ", row["reason"])
    assert not (table["status"] == "saved").any()
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]


def test_records_sharing_a_doi_share_one_download_and_progress_counts_records(
    mirror: MirrorServer, tmp_path: Path, recorder: Recorder
) -> None:
    calls: list[tuple[int, int | None]] = []
    frame = pd.DataFrame(
        {"cluster_id": ["a", "b", "c"], "doi": ["10.5555/AQSR.2019.100031", "10.5555/aqsr.2019.100031", None]}
    )
    recorder.paths.clear()
    table = download_pdfs(
        frame, endpoint(mirror), tmp_path, HTTP, limits=LIMITS, progress=lambda done, total: calls.append((done, total))
    )
    assert table["status"].tolist() == ["saved", "saved", "no_oa_location"]
    assert table["doi"].tolist()[:2] == ["10.5555/aqsr.2019.100031"] * 2
    assert table.loc[0, "path"] == table.loc[1, "path"]
    assert recorder.asked(lambda path: path.startswith("/files/")) == {"/files/10.5555_aqsr.2019.100031.pdf": 1}
    assert calls == [(1, 3), (3, 3)]


def test_unpaywall_needs_a_contact_address_and_records_their_columns(mirror: MirrorServer, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="HYSEM_MAILTO"):
        download_pdfs(records(), replace(endpoint(mirror), mailto=None), tmp_path, HTTP)
    with pytest.raises(ValueError, match=r"lack the column\(s\) \['cluster_id'\]"):
        download_pdfs(pd.DataFrame({"doi": []}), endpoint(mirror), tmp_path, HTTP)


def test_a_corpus_without_dois_asks_unpaywall_nothing_and_needs_no_contact(tmp_path: Path) -> None:
    nowhere = Endpoint("unpaywall", "http://127.0.0.1:9", requests_per_second=1, max_concurrency=1, page_size=1)
    empty = download_pdfs(pd.DataFrame({"cluster_id": [], "doi": []}), nowhere, tmp_path, HTTP)
    without_doi = download_pdfs(pd.DataFrame({"cluster_id": ["c1"], "doi": [None]}), nowhere, tmp_path, HTTP)
    assert len(empty) == 0 and len(without_doi) == 1
    assert empty.dtypes.to_dict() == without_doi.dtypes.to_dict()
