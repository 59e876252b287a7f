"""Acquisition: the corpus contracts and column types of raw metadata and the merged corpus, and DOI enrichment."""
