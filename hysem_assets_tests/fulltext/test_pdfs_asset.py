"""The `pdfs` asset on the sample: every planted status, only valid PDFs stored, checks pass."""

from __future__ import annotations

import json

import pandas as pd
from dagster import DagsterInstance, materialize

from hysem_assets.acquisition.assets import raw_metadata_assets
from hysem_assets.acquisition.corpus import deduped_corpus
from hysem_assets.fulltext.assets import downloads_dir, pdfs
from hysem_assets.fulltext.outcome import STATUSES
from hysem_assets.fulltext.pdfcheck import structural_problem
from hysem_assets.mirror import default_snapshot_dir
from hysem_assets.partitions import queries_partitions
from hysem_assets.resources import build_resources
from hysem_assets.storage import asset_file
from hysem_assets_tests.acquisition.helpers import SAMPLE

TRUTH = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))


def test_sample_pdfs_end_with_their_planted_status():
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        result = materialize(
            [*raw_metadata_assets, deduped_corpus, pdfs],
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
