"""One process at a time on an embedded store, the others wait their turn.

ladybug and Qdrant's local mode lock their files and refuse a second process outright,
so two runs of a backfill, or ``hysem ask`` during a run, would fail on whichever came
second. Every opener first takes an exclusive lock on a file beside the store and waits
for it; servers (Neo4j, Qdrant) need no lock and take none. The one opener of both stores
(the QA engine) takes the chunk store first, so no two waiters can hold what the other needs.
"""

from __future__ import annotations

import logging
from pathlib import Path

from filelock import FileLock, Timeout

log = logging.getLogger(__name__)


def lock_path(store: Path) -> Path:
    """``kg.lbug`` -> ``kg.lbug.lock``; a folder store gets its lock file beside it."""
    return store.with_name(store.name + ".lock")


def acquire_store_lock(store: Path, *, timeout: float, what: str) -> FileLock:
    """Hold ``store`` for this process; release with ``lock.release()`` after closing it.

    Waits up to ``timeout`` seconds for another process to close the store, saying so
    once, and raises TimeoutError after that.
    """
    path = lock_path(store)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, thread_local=False)
    try:
        lock.acquire(timeout=0)
        return lock
    except Timeout:
        log.warning("%s %s is open in another process; waiting up to %.0f s for it.", what, store, timeout)
    try:
        lock.acquire(timeout=timeout)
    except Timeout as exc:
        raise TimeoutError(
            f"{what} {store} was still open in another process after {timeout:.0f} s. "
            f"Raise lock_timeout_s in the profile, or use a server for concurrent access."
        ) from exc
    return lock
