"""cluster_records on bib-dedupe's labelled data (third-party files; see the ``realdata`` fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from hysem_assets.dedup.cluster import cluster_records
from hysem_assets.dedup.evaluation import groups_of, pairs_of, pairwise_scores, read_labelled_set
from hysem_assets.dedup.tabular import standardize_columns


@pytest.fixture
def dedup_data(realdata: Path) -> Path:
    folder = realdata / "dedup_bib_dedupe"
    assert folder.is_dir(), f"bib-dedupe labelled data not found at {folder}"
    return folder


def clusters_of(path: Path) -> dict[str, str]:
    records = pd.read_csv(path, dtype=str)
    standard = standardize_columns(records)
    return dict(zip(standard["record_id"], cluster_records(standard).cluster_id))


def test_special_cases(dedup_data):
    clusters = clusters_of(dedup_data / "special_cases" / "records_pre_merged.csv")
    groups: dict[str, set[str]] = {}
    for record_id, cluster in clusters.items():
        groups.setdefault(cluster, set()).add(record_id.removeprefix("id_00000"))
    assert sorted(map(sorted, groups.values())) == [
        ["01", "02"],  # AMCIS paper with two venue spellings
        ["03"],  # HICSS 2021 minitrack introduction ...
        ["04"],  # ... and the 2022 one: same title and authors, other year and DOI
        ["05", "06"],
        ["07", "11"],  # with and without DOI
        ["08"],
        ["09"],  # 2011 conference paper ...
        ["10"],  # ... and its 2014 journal version
        ["12"],  # 2003 AMCIS version of the 2004 journal article
    ]


def test_hand_labelled_pairs(dedup_data):
    cases = json.loads((dedup_data / "test_cases.json").read_text(encoding="utf-8"))["cases"]
    wrong = []
    for case in cases:
        pair = pd.DataFrame([case["record_a"], case["record_b"]]).assign(ID=["a", "b"])
        clusters = cluster_records(standardize_columns(pair)).cluster_id
        if (clusters.iloc[0] == clusters.iloc[1]) != case["expected_duplicate"]:
            wrong.append(case["id"])
    assert len(cases) == 25 and wrong == []


#: Measured recall (cytology 1.000, respiratory 0.986, special cases 1.000) less a small margin.
@pytest.mark.parametrize(
    ("dataset", "min_recall"), [("cytology_screening", 0.995), ("respiratory", 0.98), ("special_cases", 1.0)]
)
def test_labelled_dataset_pairwise_quality(dedup_data, dataset, min_recall):
    records, truth = read_labelled_set(dedup_data / dataset)
    standard = standardize_columns(records)
    found = pairs_of(groups_of(standard["record_id"], cluster_records(standard).cluster_id))
    precision, recall, _ = pairwise_scores(found, truth)
    assert precision == 1.0 and recall >= min_recall, {"recall": recall, "false": sorted(found - truth)}
