"""The adversarial set: look-alike records that must stay apart, and duplicates that
exports spell differently. Written by the team from the classes of false and missed
merges seen in real exports (``adversarial/``, in the labelled-set layout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hysem_assets.dedup.cluster import cluster_records
from hysem_assets.dedup.evaluation import groups_of, pairs_of, pairwise_scores, read_labelled_set
from hysem_assets.dedup.tabular import standardize_columns

ADVERSARIAL = Path(__file__).parent / "adversarial"


@pytest.fixture(scope="module")
def outcome():
    records, truth = read_labelled_set(ADVERSARIAL)
    standard = standardize_columns(records)
    clusters = cluster_records(standard).cluster_id
    found = pairs_of(groups_of(standard["record_id"], clusters))
    return records, truth, found


def test_precision_and_recall_are_perfect(outcome):
    _, truth, found = outcome
    assert pairwise_scores(found, truth)[:2] == (1.0, 1.0), {"false": found - truth, "missed": truth - found}


@pytest.mark.parametrize("case_class", ["recurring", "trial", "empty title"])
def test_every_look_alike_class_is_present_and_kept_apart(outcome, case_class):
    records, _, found = outcome
    members = set(records.loc[records["case"].str.startswith(case_class), "ID"])
    assert len(members) >= 3
    assert not any(a in members or b in members for a, b in found)


def test_every_duplicate_class_is_merged(outcome):
    records, truth, found = outcome
    duplicates = records.loc[records["case"].str.startswith("duplicate"), ["ID", "case"]]
    assert duplicates["case"].nunique() >= 4
    for case, ids in duplicates.groupby("case")["ID"]:
        assert pairs_of([ids.tolist()]) <= found, case
