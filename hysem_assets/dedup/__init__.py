"""Deduplication of bibliographic records: pure functions on pandas DataFrames.

``cluster_records`` links duplicates (identifiers first, then guarded bibliographic
matching), ``merge_clusters`` folds each cluster into one record with per-field
provenance, and ``read_bibliography``/``dedupe_table`` do both for export files;
``explain_pair``/``explain_table`` say why two records were or were not merged.
"""
