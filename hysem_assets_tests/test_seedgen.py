"""The seed-scale benchmark's generator (benchmarks/seedgen.py) writes a snapshot the mirror serves as asked.

A tiny scale keeps it quick: the files parse through the mirror's own readers, each source
holds the records the spec asks for with the requested overlap, the benchmark's query selects
every record by evaluation alone, the open-access PDFs download from the mirror with a text
layer of 10-15 pages, and the increment adds new records without changing earlier works.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from pypdf import PdfReader

from hysem_assets.mirror.search import compile_query
from hysem_assets.mirror.server import MirrorServer, Snapshot
from hysem_assets_tests.paths import PROJECT_ROOT

sys.path.insert(0, str(PROJECT_ROOT / "benchmarks"))

import seedgen  # noqa: E402

SPEC = seedgen.SeedSpec(scale=0.005, seed=3)


@pytest.fixture(scope="module")
def snapshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("seed") / "snapshot"
    seedgen.write_snapshot(folder, SPEC, workers=1)
    return folder


def test_each_source_holds_the_requested_records_with_the_requested_overlap(snapshot_dir: Path) -> None:
    snapshot = Snapshot.load(snapshot_dir)
    assert len(snapshot.pubmed) == SPEC.records["pubmed"]
    assert len(snapshot.openalex) == SPEC.records["openalex"]
    assert len(snapshot.scopus) == SPEC.records["scopus"]
    truth = json.loads((snapshot_dir / "truth.json").read_text(encoding="utf-8"))
    assert truth["unique_works"] == SPEC.works
    combos = Counter(tuple(sorted(record["source"] for record in work["records"])) for work in truth["works"])
    assert combos == Counter({tuple(sorted(combo)): n for combo, n in SPEC.categories().items()})
    assert sum(1 for work in truth["works"] if work["doi"]) >= SPEC.works * 0.8


@pytest.mark.parametrize("source", seedgen.SOURCES)
def test_the_benchmark_query_selects_every_record_by_evaluation_alone(snapshot_dir: Path, source: str) -> None:
    snapshot = Snapshot.load(snapshot_dir)
    snapshot.harvests = {name: [] for name in snapshot.harvests}
    selected = snapshot.search(source, compile_query(seedgen.QUERY[source], source).node)
    assert len(selected) == len(snapshot.documents[source])


def test_open_access_pdfs_download_from_the_mirror_with_a_text_layer(snapshot_dir: Path, tmp_path: Path) -> None:
    truth = json.loads((snapshot_dir / "truth.json").read_text(encoding="utf-8"))
    saved = [doi for doi, status in truth["pdf_status"].items() if status == "saved"]
    assert len(saved) == SPEC.pdfs
    with MirrorServer(snapshot_dir) as mirror:
        url = f"{mirror.base_urls['unpaywall']}/v2/{saved[0]}?email=test@example.org"
        with urllib.request.urlopen(url, timeout=10) as response:
            pdf_url = json.loads(response.read())["best_oa_location"]["url_for_pdf"]
        assert pdf_url.startswith(mirror.root_url)
        with urllib.request.urlopen(pdf_url, timeout=10) as response:
            (tmp_path / "article.pdf").write_bytes(response.read())
    reader = PdfReader(tmp_path / "article.pdf")
    assert 10 <= len(reader.pages) <= 15
    text = " ".join(page.extract_text() for page in reader.pages)
    for heading in ("Introduction", "Methods", "Results", "Discussion", "References", "Table 1."):
        assert heading in text


def test_the_increment_adds_new_records_and_leaves_earlier_works_unchanged(tmp_path: Path) -> None:
    corpus = seedgen.build_corpus(SPEC)
    assert seedgen.build_corpus(SPEC).data(False) == corpus.data(False)
    before, after = corpus.data(False)["articles"], corpus.data(True)["articles"]
    assert after[: len(before)] == before
    new = after[len(before) :]
    assert sum(len(article["sources"]) for article in new) == SPEC.increment_records
