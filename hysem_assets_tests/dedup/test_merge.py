from __future__ import annotations

import json

import pandas as pd
import pytest

from hysem_assets.core.records import CORE_COLUMNS, empty_record, records_frame
from hysem_assets.dedup.cluster import cluster_records
from hysem_assets.dedup.merge import merge_clusters
from hysem_assets.sources.registry import record_sources

#: Most trusted first, as the pipeline merges.
AUTHORITY = record_sources()

TITLE = "Fine particulate air pollution and hospital admission for cardiovascular disease"


def record(record_id: str, source: str, **fields) -> dict:
    row = empty_record(source, record_id.upper())
    row.update({"first_author": "Dominici", "year": 2006, "title": TITLE, **fields})
    return {"record_id": record_id, **row}


@pytest.fixture
def frame() -> pd.DataFrame:
    rows = [
        record(
            "o1",
            "openalex",
            authors=["Dominici, Francesca"],
            abstract="Short.",
            openalex_id="W1",
            doi="10.1001/jama.295.10.1127",
        ),
        record(
            "p1",
            "pubmed",
            authors=["Dominici, F", "Peng, RD", "Bell, ML"],
            abstract=None,
            pmid="16522832",
            journal="JAMA",
            raw="<PubmedArticle/>",
            doi="10.1001/jama.295.10.1127",
        ),
        record(
            "s1",
            "scopus",
            authors=["Dominici F.", "Peng R.D."],
            pages="1127-1134",
            abstract="A much longer abstract that says what the study found.",
            journal="JAMA",
            volume="295",
            doi="10.1001/jama.295.10.1127",
        ),
        record(
            "x1",
            "scopus",
            title="Ozone and mortality in 95 US urban communities",
            year=2004,
            first_author="Bell",
            authors=["Bell, ML"],
        ),
    ]
    table = records_frame([{k: v for k, v in row.items() if k != "record_id"} for row in rows])
    table.insert(0, "record_id", [row["record_id"] for row in rows])
    return table


def test_nothing_is_lost_and_every_record_lands_in_one_row(frame):
    merged = merge_clusters(frame, cluster_records(frame), authority=AUTHORITY)
    ids = [record_id for row in merged["record_ids"] for record_id in row]
    assert sorted(ids) == sorted(frame["record_id"])
    assert len(merged) == 2 and merged["cluster_id"].is_unique
    assert list(merged.columns) == [
        "cluster_id",
        "record_ids",
        "sources",
        *CORE_COLUMNS,
        "provenance",
        "merge_evidence",
    ]


def test_fields_take_the_most_complete_value_and_never_an_empty_one(frame):
    merged = merge_clusters(frame, cluster_records(frame), authority=AUTHORITY).set_index("cluster_id")
    row = merged.loc[merged["record_ids"].map(len) == 3].iloc[0]
    assert row["abstract"] == "A much longer abstract that says what the study found."
    assert list(row["authors"]) == ["Dominici, F", "Peng, RD", "Bell, ML"]
    assert row["pages"] == "1127-1134" and row["volume"] == "295"
    assert row["pmid"] == "16522832" and row["openalex_id"] == "W1"
    assert row["raw"] == "<PubmedArticle/>"  # the only member with raw text
    assert row["sources"] == ["openalex", "pubmed", "scopus"]


def test_provenance_names_the_record_behind_each_field(frame):
    merged = merge_clusters(frame, cluster_records(frame), authority=AUTHORITY)
    provenance = merged.loc[merged["record_ids"].map(len) == 3, "provenance"].iloc[0]
    assert json.loads(json.dumps(provenance)) == provenance
    assert provenance["abstract"] == "s1" and provenance["authors"] == provenance["first_author"] == "p1"
    assert provenance["pmid"] == "p1" and provenance["openalex_id"] == "o1"
    assert "issue" not in provenance  # nobody had one


def test_ties_go_to_the_more_authoritative_source(frame):
    frame.loc[frame["record_id"] == "s1", "title"] = TITLE.upper()
    merged = merge_clusters(frame, cluster_records(frame), authority=AUTHORITY)
    row = merged.loc[merged["record_ids"].map(len) == 3].iloc[0]
    assert row["title"] == TITLE and row["provenance"]["title"] == "p1"
    scopus_first = merge_clusters(frame, cluster_records(frame), authority=("scopus", "pubmed", "openalex"))
    assert scopus_first.loc[scopus_first["record_ids"].map(len) == 3, "title"].iloc[0] == TITLE.upper()


def test_source_fields_come_from_the_canonical_record(frame):
    merged = merge_clusters(frame, cluster_records(frame), authority=AUTHORITY)
    row = merged.loc[merged["record_ids"].map(len) == 3].iloc[0]
    assert (row["source"], row["source_id"]) == ("scopus", "S1")  # most fields filled
    assert row["provenance"]["source"] == "s1" and row["provenance"]["raw"] == "p1"


def test_clusters_must_come_from_the_same_frame(frame):
    clusters = cluster_records(frame)
    with pytest.raises(ValueError, match="cover every row"):
        merge_clusters(frame.set_index(pd.Index([7, 8, 9, 10])), clusters)


def test_each_cluster_keeps_the_links_that_merged_it(frame):
    frame.loc[frame["record_id"] == "o1", "doi"] = None  # o1 now joins by its title alone
    merged = merge_clusters(frame, cluster_records(frame), authority=AUTHORITY).set_index("cluster_id")
    links = merged.loc[merged["record_ids"].map(len) == 3, "merge_evidence"].iloc[0]
    assert "doi" in {link["rule"] for link in links}
    o1_links = [link for link in links if "o1" in (link["record_id_a"], link["record_id_b"])]
    assert o1_links and all(link["evidence"].startswith("title +8") for link in o1_links)
    assert merged.loc[merged["record_ids"].map(len) == 1, "merge_evidence"].iloc[0] == []
