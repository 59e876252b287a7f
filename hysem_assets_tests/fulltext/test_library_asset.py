"""The `library` asset on the sample: citations, exports, and Zotero when configured."""

from __future__ import annotations

import json

import bibtexparser
import pandas as pd
import pytest
import rispy
from dagster import DagsterInstance, materialize

from hysem_assets.defs.acquisition import deduped_corpus, raw_metadata_assets
from hysem_assets.defs.fulltext import library, pdfs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import build_resources
from hysem_assets.defs.screening import screening
from hysem_assets.settings.environment import asset_file, hysem_home
from hysem_assets_tests.acquisition.helpers import SAMPLE
from hysem_assets_tests.library.zotero_server import ZoteroServer


def run_library(run_config: dict | None = None):
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        result = materialize(
            [*raw_metadata_assets, deduped_corpus, screening, pdfs, library],
            instance=instance,
            resources=build_resources(),
            partition_key=SAMPLE,
            run_config=run_config,
        )
    assert result.success
    return pd.read_parquet(asset_file("library", SAMPLE))


def test_every_work_gets_apa_citations_and_exports():
    table = run_library()
    corpus = pd.read_parquet(asset_file("deduped_corpus", SAMPLE))
    assert len(table) == len(corpus) and table["citation_error"].isna().all()
    row = table.set_index("doi").loc["10.5555/ehr.2023.0001"]
    assert row["in_text_citation"].startswith("(") and row["in_text_citation"].endswith(", 2023)")
    assert row["full_citation"].endswith("https://doi.org/10.5555/ehr.2023.0001")
    folder = hysem_home() / "library" / SAMPLE
    assert len(json.loads((folder / f"{SAMPLE}.json").read_text())) == len(corpus)
    assert len(bibtexparser.loads((folder / f"{SAMPLE}.bib").read_text()).entries) == len(corpus)
    assert len(rispy.loads((folder / f"{SAMPLE}.ris").read_text())) == len(corpus)
    assert table["bibtex_key"].is_unique and table["zotero_key"].isna().all()


def test_style_is_selectable_per_run():
    table = run_library({"ops": {"library": {"config": {"style": "ieee"}}}})
    assert table["in_text_citation"].str.match(r"^\[\d+\]$").all()


def test_zotero_library_is_filled_once(monkeypatch: pytest.MonkeyPatch):
    with ZoteroServer(api_key="zotero-secret") as server:
        monkeypatch.setenv("ZOTERO_LIBRARY_ID", str(server.library_id))
        monkeypatch.setenv("ZOTERO_LIBRARY_TYPE", "user")
        monkeypatch.setenv("ZOTERO_API_KEY", "zotero-secret")
        monkeypatch.setenv("HYSEM_ZOTERO_URL", server.url)
        first = run_library()
        created = dict(server.items)
        second = run_library()
    works = [key for key, item in created.items() if not item["data"].get("parentItem")]
    attachments = [key for key, item in created.items() if item["data"].get("parentItem")]
    assert first["zotero_key"].notna().all() and sorted(works) == sorted(first["zotero_key"])
    assert server.items.keys() == created.keys()  # nothing created twice
    assert list(second["zotero_key"]) == list(first["zotero_key"])
    assert all(len(post.body) <= 50 for post in server.posts_to_items())
    saved = pd.read_parquet(asset_file("pdfs", SAMPLE)).query("status == 'saved'")
    assert len(attachments) == len(server.files) == len(saved) > 0  # each saved PDF attached once
