"""A work with an open-access JATS full text takes it before any PDF, and is parsed with no PDF step.

The bundled sample has no ``jats/`` folder; these tests copy it into a temporary snapshot, add
the JATS XML of one sample work that also has a PDF (a real Europe PMC article, filed under the
work's PMCID), serve it with the mirror and run the stages from the searches to ``parsed_docs``.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from dagster import DagsterInstance, build_asset_context, materialize
from lxml import etree

from hysem_assets.core.filehash import file_sha256
from hysem_assets.defs.acquisition import deduped_corpus, raw_metadata_assets
from hysem_assets.defs.fulltext import pdfs
from hysem_assets.defs.parsing import parsed_docs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import PdfParser, build_resources
from hysem_assets.defs.screening import screening
from hysem_assets.fulltext.outcome import JATS
from hysem_assets.fulltext.pdfs import JATS_FAILED, JATS_NOT_FOUND, download_pdfs
from hysem_assets.fulltext.store import REUSED, jats_path
from hysem_assets.mirror.server import SOURCE_PREFIXES, MirrorServer, default_snapshot_dir
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.profile import HttpSettings, load_settings
from hysem_assets.sources.base import Endpoint
from hysem_assets_tests.acquisition.helpers import SAMPLE
from hysem_assets_tests.fulltext.recorder import Recorder
from hysem_assets_tests.paths import REALDATA

TRUTH = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))
#: A sample work with a PMCID (in PubMed's and OpenAlex's records) whose open-access PDF downloads.
DOI, PMCID = "10.9999/eer.2022.214", "PMC9501837"
#: A real JATS article of Europe PMC, served under the sample work's PMCID.
ARTICLE = REALDATA / "europepmc" / "jats" / "PMC64502.nxml"
FULL_TEXT = "/fullTextXML"
#: Another sample work whose PDF downloads, asked of Unpaywall as before.
TRUTH_SAVED = "10.5555/ahi.2019.0203"


@pytest.fixture
def article(realdata: Path) -> Path:
    return ARTICLE


@pytest.fixture
def snapshot(tmp_path: Path, article: Path) -> Path:
    folder = tmp_path / "snapshot"
    shutil.copytree(default_snapshot_dir(), folder)
    (folder / "jats").mkdir()
    shutil.copyfile(article, folder / "jats" / f"{PMCID}.nxml")
    return folder


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def mirror(snapshot: Path, recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> Iterator[MirrorServer]:
    monkeypatch.setenv("SCOPUS_API_KEY", "sample-snapshot")  # the mirror takes any key
    with MirrorServer(snapshot, middlewares=[recorder.middleware]) as server:
        for source, url in server.base_urls.items():
            monkeypatch.setenv(f"HYSEM_{source.upper()}_URL", url)
        yield server


def materialize_stages(profile=None, *, parse: bool = True):
    assets = [*raw_metadata_assets, deduped_corpus, screening, pdfs, *([parsed_docs] if parse else [])]
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        result = materialize(assets, instance=instance, resources=build_resources(profile), partition_key=SAMPLE)
    assert result.success
    return {
        event.asset_key.to_user_string(): {key: value.value for key, value in event.materialization.metadata.items()}
        for event in result.get_asset_materialization_events()
    }


def pdf_statuses(table: pd.DataFrame) -> dict[str, str]:
    by_doi = table.dropna(subset=["doi"]).set_index("doi")["status"].to_dict()
    return {doi: by_doi[doi] for doi in TRUTH["pdf_status"]}


def test_the_sample_work_with_a_jats_full_text_skips_its_pdf(mirror: MirrorServer, recorder: Recorder, article: Path):
    metadata = materialize_stages()

    corpus = pd.read_parquet(asset_file("deduped_corpus", SAMPLE)).set_index("doi")
    assert corpus.loc[DOI, "pmcid"] == PMCID
    table = pd.read_parquet(asset_file("pdfs", SAMPLE))
    row = table.set_index("doi").loc[DOI]
    assert (row["status"], row["source"]) == ("saved", JATS)
    assert row["path"].endswith(".xml") and Path(row["path"]).read_bytes() == article.read_bytes()
    assert row["sha256"] == file_sha256(article) and row["bytes"] == article.stat().st_size
    assert PMCID in row["reason"] and pd.isna(row["url"])
    # Nobody was asked for a PDF of it (neither Unpaywall nor a link), and every other work is as before.
    unpaywall = f"{SOURCE_PREFIXES['unpaywall']}/v2/{DOI}"
    assert not [path for path in recorder.paths if path == unpaywall or DOI.replace("/", "_") in path]
    assert recorder.paths[f"{SOURCE_PREFIXES['unpaywall']}/v2/{TRUTH_SAVED}"] == 1
    assert pdf_statuses(table) == TRUTH["pdf_status"]
    assert (table["source"] == JATS).sum() == 1
    # Every other work with a PMCID was asked once, found none (404) and went on to its PDF.
    pmcids = set(corpus["pmcid"].dropna())
    assert len(pmcids) > 1 and recorder.asked(lambda path: path.endswith(FULL_TEXT)) == Counter(
        {f"{SOURCE_PREFIXES['europepmc']}/{pmcid}{FULL_TEXT}": 1 for pmcid in pmcids}
    )
    assert metadata["pdfs"]["jats_full_texts"] == 1 and metadata["pdfs"]["jats_not_found"] == len(pmcids) - 1
    assert metadata["pdfs"]["jats_failed"] == 0

    parsed = pd.read_parquet(asset_file("parsed_docs", SAMPLE)).set_index("doi")
    document = parsed.loc[DOI]
    assert document["status"] == "jats" and pd.isna(document["error"]) and document["pages"] == 0
    root = etree.parse(str(article)).getroot()
    heading = "".join(root.find("body/sec/title").itertext()).strip()
    title = " ".join("".join(root.find("front/article-meta/title-group/article-title").itertext()).split())
    assert f"## {heading}" in document["markdown"] and title in document["markdown"]
    assert document["token_count"] > 0 and document["parser"].startswith("jats")
    assert (parsed["status"] == "jats").sum() == 1
    assert set(parsed.drop(index=DOI)["status"]) <= {"native", "ocr", "failed"}
    assert metadata["parsed_docs"]["jats_full_texts"] == 1 and metadata["parsed_docs"]["jats"] == 1


def test_with_jats_full_text_off_no_full_text_is_asked_for(mirror: MirrorServer, recorder: Recorder):
    profile = load_settings().profile
    profile.pdfs.jats_full_text = False
    metadata = materialize_stages(profile, parse=False)
    assert recorder.asked(lambda path: path.endswith(FULL_TEXT)) == Counter()
    table = pd.read_parquet(asset_file("pdfs", SAMPLE))
    assert pdf_statuses(table) == TRUTH["pdf_status"]
    row = table.set_index("doi").loc[DOI]
    assert row["source"] == "127.0.0.1" and row["path"].endswith(".pdf")
    assert metadata["pdfs"]["jats_full_texts"] == 0 and metadata["pdfs"]["jats_not_found"] == 0


def test_a_jats_row_is_parsed_in_process_and_reused_by_its_bytes(tmp_path: Path, article: Path):
    kept = jats_path(tmp_path, PMCID)
    kept.parent.mkdir(parents=True)
    shutil.copyfile(article, kept)
    table = pd.DataFrame(
        {
            "cluster_id": ["c1"],
            "doi": [DOI],
            "status": ["saved"],
            "reason": [REUSED],
            "path": [str(kept)],
            "sha256": [file_sha256(kept)],
            "source": [JATS],
        }
    )
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        runs = []
        for _ in range(2):
            context = build_asset_context(partition_key=SAMPLE, instance=instance)
            runs.append(parsed_docs(context, pdf_parser=PdfParser(), pdfs=table))
    first, second = runs
    assert first.value["status"].tolist() == ["jats"] and first.value["device"].tolist() == ["cpu"]
    assert first.metadata["jats_full_texts"].value == 1 and first.metadata["works_reused"].value == 0
    assert second.metadata["works_reused"].value == 1
    assert second.value["markdown"].tolist() == first.value["markdown"].tolist()


def test_a_kept_full_text_is_reused_and_a_missing_one_costs_one_request(
    mirror: MirrorServer, recorder: Recorder, tmp_path: Path, article: Path
):
    def endpoint(source: str) -> Endpoint:
        return Endpoint(source, mirror.base_urls[source], 200, 8, 1, mailto="review@example.org")

    records = pd.DataFrame(
        {
            "cluster_id": ["c1", "c2", "c3"],
            "doi": [DOI, "10.5555/ahi.2019.0203", "10.5555/jec.2019.0312"],
            "pmcid": [PMCID, "PMC6452771", None],
        }
    )
    http = HttpSettings(connect_timeout_s=2, read_timeout_s=2, max_retries=1, backoff_base_s=0.01)
    runs = []
    for _ in range(2):
        tally: Counter[str] = Counter()
        table = download_pdfs(
            records, endpoint("unpaywall"), tmp_path, http, full_text=[endpoint("europepmc")], tally=tally
        )
        runs.append(
            (table.set_index("cluster_id"), tally, recorder.asked(lambda path: path.endswith(FULL_TEXT)).total())
        )
    (first, first_tally, asked), (second, second_tally, asked_again) = runs
    assert first.loc["c1", "source"] == second.loc["c1", "source"] == JATS
    assert second.loc["c1", "reason"] == REUSED and second.loc["c1", "path"] == first.loc["c1", "path"]
    assert Path(first.loc["c1", "path"]) == jats_path(tmp_path.resolve(), PMCID)
    assert first.loc["c2", "status"] == "saved" and first.loc["c2", "source"] == "127.0.0.1"
    assert first.loc["c3", "status"] == "no_oa_location"
    # The kept text asks nobody; the PMCID without one is asked again (it may come), the work without a PMCID never.
    assert (asked, asked_again) == (2, 3)
    assert first_tally == Counter({JATS_NOT_FOUND: 1}) and second_tally == Counter({JATS_NOT_FOUND: 1})
    assert JATS_FAILED not in first_tally
