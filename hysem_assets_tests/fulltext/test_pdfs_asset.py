"""The `pdfs` asset on the sample: every planted status, only valid PDFs stored, checks pass."""

from __future__ import annotations

import json

import pandas as pd
from dagster import AssetSelection, DagsterInstance, materialize

from hysem_assets.core.pdfcheck import structural_problem
from hysem_assets.defs.acquisition import deduped_corpus, raw_metadata_assets
from hysem_assets.defs.fulltext import downloads_dir, pdfs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import build_resources
from hysem_assets.defs.screening import screening
from hysem_assets.fulltext.outcome import STATUSES
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.screening.decisions import Decision, DecisionLog, decisions_path
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.profile import load_settings
from hysem_assets_tests.acquisition.helpers import SAMPLE

TRUTH = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))


def test_sample_pdfs_end_with_their_planted_status():
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        result = materialize(
            [*raw_metadata_assets, deduped_corpus, screening, pdfs],
            instance=instance,
            resources=build_resources(),
            partition_key=SAMPLE,
        )
    assert result.success
    table = pd.read_parquet(asset_file("pdfs", SAMPLE))
    by_doi = table.dropna(subset=["doi"]).set_index("doi")["status"].to_dict()
    assert {doi: by_doi[doi] for doi in TRUTH["pdf_status"]} == TRUTH["pdf_status"]
    assert set(table["status"]) == set(STATUSES)
    stored = list(downloads_dir().rglob("*.pdf"))
    assert sorted(map(str, stored)) == sorted(table.loc[table["status"] == "saved", "path"])
    assert all(path.read_bytes().startswith(b"%PDF-") and structural_problem(path) is None for path in stored)
    assert not [p for p in downloads_dir().rglob("*") if p.is_file() and p.suffix not in (".pdf", ".json")]
    assert {e.check_name: e.passed for e in result.get_asset_check_evaluations()}["every_pdf_is_valid"]


def test_pdfs_fetch_only_the_works_screening_lets_through():
    """With decisions made and no undecided work let through (share 0), only the included works are fetched."""
    profile = load_settings().profile
    profile.assets.screening.undecided_top_share = 0.0
    assets = [*raw_metadata_assets, deduped_corpus, screening, pdfs]
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        run = {"instance": instance, "resources": build_resources(profile), "partition_key": SAMPLE}
        assert materialize(assets, selection=AssetSelection.assets("deduped_corpus").upstream(), **run).success
        works = pd.read_parquet(asset_file("deduped_corpus", SAMPLE)).dropna(subset=["doi"])["cluster_id"].tolist()
        included, excluded = works[:2], works[2]
        DecisionLog(decisions_path(SAMPLE)).append(
            [*(Decision(work, "included") for work in included), Decision(excluded, "excluded", "wrong outcome")]
        )
        assert materialize(assets, selection=AssetSelection.assets("screening", "pdfs"), **run).success
    table = pd.read_parquet(asset_file("pdfs", SAMPLE))
    assert sorted(table["cluster_id"]) == sorted(included)
    decided = pd.read_parquet(asset_file("screening", SAMPLE)).set_index("cluster_id")
    assert decided.loc[excluded, "reason"] == "wrong outcome" and not decided.loc[excluded, "proceeds"]
    assert decided["proceeds"].sum() == 2 and (decided["decision"] == "undecided").sum() == len(decided) - 3
