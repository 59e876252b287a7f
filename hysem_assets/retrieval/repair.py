"""Rebuilding a damaged embedded chunk store from every query's chunk table.

The Qdrant Edge collection is shared by all queries, so a damaged segment breaks them all,
and deleting the folder by hand would lose every query's chunks. Every query's
``vector_index`` table holds its chunks, and the vector cache holds their vectors by
content, so the collection can be rebuilt whole: the damaged folder is set aside, each
query's chunks are written again (their vectors read from the cache, none computed unless
the cache lost it), and the old folder is removed once the new one is complete.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

import pandas as pd

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.retrieval.indexing import index_chunks
from hysem_assets.settings.environment import asset_file, vector_server
from hysem_assets.settings.profile import VectorIndexSettings
from hysem_assets.stores.chunks import VectorStoreError
from hysem_assets.stores.connect import chunk_store_folder, open_chunk_store
from hysem_assets.stores.locking import lock_holder
from hysem_assets.stores.tables import file_problem, read_table


@dataclass(frozen=True)
class Rebuilt:
    """What a rebuild wrote: queries, chunks, and how many vectors had to be computed (not in the cache)."""

    queries: int
    chunks: int
    computed: int

    def describe(self) -> str:
        return (
            f"rebuilt the chunk store from {self.queries} queries' chunk tables: {self.chunks:,} chunks, "
            f"{self.computed:,} vectors computed (the others read from the vector cache)"
        )


def chunk_tables(queries: list[str]) -> dict[str, pd.DataFrame]:
    """The intact ``vector_index`` tables of ``queries`` (a damaged one is materialized again instead)."""
    return {
        query: read_table(asset_file("vector_index", query))
        for query in queries
        if file_problem(asset_file("vector_index", query)) is None
    }


def rebuild_chunk_store(settings: VectorIndexSettings, embedder: Encoder, tables: dict[str, pd.DataFrame]) -> Rebuilt:
    """Set the embedded collection aside and write every table of ``tables`` (query -> chunks) into a new one.

    Refused while another process has the store open: that process's writes would be lost.
    """
    server, _ = vector_server(settings.url)
    if server:
        raise VectorStoreError(f"the chunk store is the server {server}: repair it there")
    path = chunk_store_folder(settings) / settings.collection
    holder = lock_holder(path)
    if holder is not None:
        raise VectorStoreError(f"{path} is open in {holder.describe()}; rebuild it once that process ends")
    aside = path.with_name(f"{path.name}.damaged")
    shutil.rmtree(aside, ignore_errors=True)
    if path.exists():
        path.rename(aside)
    chunks, computed_before = 0, embedder.encoded
    store = open_chunk_store(settings)
    try:
        for query, table in tables.items():
            chunks += index_chunks(table, query=query, store=store, embedder=embedder).chunks
    finally:
        store.close()
    shutil.rmtree(aside, ignore_errors=True)
    return Rebuilt(len(tables), chunks, embedder.encoded - computed_before)
