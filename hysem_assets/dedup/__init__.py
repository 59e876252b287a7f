"""Deduplication of bibliographic records: pure functions on pandas DataFrames.

``cluster_records`` links duplicates (identifiers first, then guarded bibliographic
matching), ``merge_clusters`` folds each cluster into one record with per-field
provenance, and ``read_bibliography``/``dedupe_table`` do both for export files;
``explain_pair``/``explain_table`` say why two records were or were not merged.
"""

from hysem_assets.dedup.cluster import ClusterResult, cluster_id_for, cluster_records
from hysem_assets.dedup.explain import PairExplanation, explain_pair
from hysem_assets.dedup.merge import merge_clusters
from hysem_assets.dedup.tabular import dedupe_table, explain_table, read_bibliography, standardize_columns

__all__ = [
    "ClusterResult",
    "PairExplanation",
    "cluster_id_for",
    "cluster_records",
    "dedupe_table",
    "explain_pair",
    "explain_table",
    "merge_clusters",
    "read_bibliography",
    "standardize_columns",
]
