"""One process at a time on an embedded store, the others wait their turn.

ladybug and Qdrant Edge lock their files and refuse a second process outright,
so two runs of a backfill, or ``hysem ask`` during a run, would fail on whichever came
second. Every opener first takes an exclusive lock on a file beside the store and waits
for it; servers (Neo4j, Qdrant) need no lock and take none. The one opener of both stores
(the QA engine) takes the chunk store first, so no two waiters can hold what the other needs.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from filelock import FileLock, Timeout

from hysem_assets.core.owner import ProcessOwner

log = logging.getLogger(__name__)


def lock_path(store: Path) -> Path:
    """``kg.lbug`` -> ``kg.lbug.lock``; a folder store gets its lock file beside it."""
    return store.with_name(store.name + ".lock")


def owner_path(store: Path) -> Path:
    """Who took the lock last (the lock file itself is emptied by every process that waits on it)."""
    return store.with_name(store.name + ".lock.owner")


def lock_holder(store: Path) -> ProcessOwner | None:
    """The process holding ``store`` now, or None when it is free (a dead holder releases it with its end)."""
    lock = FileLock(lock_path(store), thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return ProcessOwner.read(owner_path(store)) or ProcessOwner(pid=0, host="", process="", command="unknown")
    lock.release()
    return None


#: What to do about a store whose lock file was deleted under its holder.
ORPHANED = "whose lock file was deleted while it held it; wait for that process to end (or stop it), then run again"


def orphaned_holder(store: Path) -> ProcessOwner | None:
    """The live process on this machine that took ``store``'s lock last and still holds the lock file after
    it was deleted: the store is then open there while its lock looks free to everyone else."""
    owner = ProcessOwner.read(owner_path(store))
    if owner is None or owner.pid == os.getpid() or owner.state() != "alive":
        return None
    deleted = f"{os.path.realpath(lock_path(store))} (deleted)"  # /proc names files by their real path
    try:
        descriptors = list(Path(f"/proc/{owner.pid}/fd").iterdir())
    except OSError:  # no /proc here, or not allowed to look: nothing to tell
        return None
    for descriptor in descriptors:
        try:
            if os.readlink(descriptor) == deleted:
                return owner
        except OSError:
            continue
    return None


def _record_owner(store: Path) -> None:
    try:
        ProcessOwner.current().write(owner_path(store))
    except OSError:
        pass  # a courtesy for `hysem doctor`; never a reason to fail


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
    except Timeout:
        holder = ProcessOwner.read(owner_path(store))
        log.warning(
            "%s %s is open in another process; waiting up to %.0f s for it%s.",
            what,
            store,
            timeout,
            f" (held by {holder.describe()})" if holder else "",
        )
        try:
            lock.acquire(timeout=timeout)
        except Timeout as exc:
            raise TimeoutError(
                f"{what} {store} was still open in another process after {timeout:.0f} s. "
                f"Raise lock_timeout_s in the profile, or use a server for concurrent access."
            ) from exc
    return _held(lock, store, what)


def _held(lock: FileLock, store: Path, what: str) -> FileLock:
    """``lock``, taken, once no process still holds the store under a deleted lock file; this process is
    recorded as its owner."""
    if (holder := orphaned_holder(store)) is not None:
        lock.release()
        raise TimeoutError(f"{what} {store} is open in {holder.describe()}, {ORPHANED}")
    _record_owner(store)
    return lock
