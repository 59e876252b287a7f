"""The ``library`` stage: citations (CSL), bibliography exports and the Zotero library.

Pure logic only: the Dagster asset calls these functions with the deduplicated corpus.
"""
