"""Deduplication of bibliographic records: pure functions on pandas DataFrames.

``cluster_records`` links duplicates (identifiers first, then guarded bibliographic
matching), ``merge_clusters`` folds each cluster into one record with per-field
provenance, and ``read_bibliography``/``dedupe_table`` do both for export files.
"""

from hysem_assets.dedup.cluster import ClusterResult, cluster_id_for, cluster_records
from hysem_assets.dedup.merge import merge_clusters
from hysem_assets.dedup.tabular import dedupe_table, read_bibliography, standardize_columns

__all__ = [
    "ClusterResult",
    "cluster_id_for",
    "cluster_records",
    "dedupe_table",
    "merge_clusters",
    "read_bibliography",
    "standardize_columns",
]
