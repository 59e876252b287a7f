"""Deduplication and enrichment of zero records: an empty corpus shaped like a filled one."""

from __future__ import annotations

import json

import pandas as pd

from hysem_assets.acquisition.contracts import clusters_with_several_dois, lost_and_repeated, repeated_cluster_ids
from hysem_assets.acquisition.enrich import apply_enrichment, retracted_clusters
from hysem_assets.core.records import empty_record, records_frame
from hysem_assets.dedup.cluster import cluster_records
from hysem_assets.dedup.merge import merge_clusters
from hysem_assets.defs.acquisition import combine_raw
from hysem_assets.sources.registry import record_sources


def corpus_of(frames: dict[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """What ``deduped_corpus`` does with the raw tables, without the lookups."""
    raw = combine_raw(frames)
    clusters = cluster_records(raw)
    corpus = apply_enrichment(
        merge_clusters(raw, clusters, authority=record_sources()), [], retracted_clusters(raw, clusters.cluster_id)
    )
    for column in ("provenance", "merge_evidence"):
        corpus[column] = corpus[column].map(json.dumps)
    return raw, corpus, clusters.cluster_id


def one_record() -> pd.DataFrame:
    record = empty_record("pubmed", "1")
    record.update(title="Ozone and heart failure", authors=["Doe, J"], first_author="Doe", year=2020, doi="10.1/x")
    return records_frame([record])


def test_zero_records_give_an_empty_corpus_with_the_columns_and_types_of_a_filled_one(tmp_path):
    empty = {source: records_frame([]) for source in record_sources()}
    raw, corpus, cluster_ids = corpus_of(empty)
    _, filled, _ = corpus_of({**empty, "pubmed": one_record()})
    assert len(raw) == len(corpus) == 0 and len(filled) == 1
    assert corpus.dtypes.to_dict() == filled.dtypes.to_dict()
    for name, frame in (("empty", corpus), ("filled", filled)):  # and so does the Parquet file
        frame.to_parquet(tmp_path / f"{name}.parquet")
    read = {name: pd.read_parquet(tmp_path / f"{name}.parquet").dtypes.to_dict() for name in ("empty", "filled")}
    assert read["empty"] == read["filled"]
    # The contracts hold, with nothing to hold them on.
    assert lost_and_repeated(raw["record_id"].tolist(), corpus) == ([], [])
    assert repeated_cluster_ids(corpus) == [] and clusters_with_several_dois(raw, cluster_ids) == {}
