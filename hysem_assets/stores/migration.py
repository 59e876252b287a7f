"""Move a chunk store written by ``qdrant-client``'s local mode into Qdrant Edge, once.

Earlier versions kept the embedded chunk store in local mode: one unnamed dense vector per
point, keyword search elsewhere. On first use the folder's points are read back (vectors
and payloads, so nothing is embedded again), written to an Edge shard with their BM25
vectors, and the local-mode files are removed. A run killed half-way leaves the local-mode
files in place, and the next opener starts the move again.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hysem_assets.stores.chunks import VectorStoreError, searchable_text
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.locking import acquire_store_lock

if TYPE_CHECKING:  # imported where used: only a folder left by an earlier version needs the client
    from qdrant_client import QdrantClient

log = logging.getLogger(__name__)
PAGE = 1024
#: Where the local-mode files wait while their collections are moved, so that an Edge shard
#: may take any name (local mode's own ``collection/`` folder included) and an interrupted move
#: starts again from them.
STAGING = ".local-mode"


def local_mode_files(folder: Path) -> Path | None:
    """The folder holding a local-mode store's ``meta.json``: ``folder`` itself, or its staging
    folder after an interrupted move; None when there is nothing to move."""
    for candidate in (folder, folder / STAGING):
        if (candidate / "meta.json").is_file():
            return candidate
    return None


def migrate_local_mode(folder: Path, *, lock_timeout: float) -> int:
    """Rebuild every collection of the local-mode ``folder`` as an Edge shard in it; returns the points moved.

    The local-mode files are removed only after every collection is moved.
    """
    from qdrant_client import QdrantClient

    try:
        lock = acquire_store_lock(folder, timeout=lock_timeout, what="Qdrant local-mode folder")
    except TimeoutError as exc:
        raise VectorStoreError(str(exc)) from exc
    try:
        if local_mode_files(folder) is None:
            return 0  # another process moved it while this one waited
        staging = folder / STAGING
        staging.mkdir(exist_ok=True)
        for name in ("collection", "meta.json"):  # meta.json last: it marks where the files are
            if (folder / name).exists():
                (folder / name).rename(staging / name)
        log.warning("Found a chunk store in qdrant-client's local mode at %s: moving it into Qdrant Edge.", folder)
        client = QdrantClient(path=str(staging))
        try:
            names = [found.name for found in client.get_collections().collections]
            moved = {name: _copy(client, name, folder, lock_timeout) for name in names}
        finally:
            client.close()
        shutil.rmtree(staging)
        log.warning(
            "Rebuilt the chunk store %s as Qdrant Edge shards (%s), nothing embedded again; "
            "the local-mode files are removed.",
            folder,
            ", ".join(f"{name}: {count} points" for name, count in moved.items()) or "no collections",
        )
        return sum(moved.values())
    finally:
        lock.release()


def _copy(client: QdrantClient, collection: str, folder: Path, lock_timeout: float) -> int:
    size = client.get_collection(collection).config.params.vectors.size
    store = EdgeChunkStore(folder, collection=collection, lock_timeout=lock_timeout)
    moved, offset = 0, None
    try:
        store.ensure_collection(size)
        while True:
            records, offset = client.scroll(collection, limit=PAGE, offset=offset, with_payload=True, with_vectors=True)
            if records:
                payloads = [dict(record.payload or {}) for record in records]
                store.upsert(
                    [record.id for record in records],
                    np.asarray([record.vector for record in records], dtype=np.float32),
                    [searchable_text(p.get("section") or "", p.get("text") or "") for p in payloads],
                    payloads,
                )
                moved += len(records)
            if offset is None:
                break
        store.optimize()
    finally:
        store.close()
    return moved
