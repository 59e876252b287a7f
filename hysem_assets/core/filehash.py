"""sha256 of files, hashed once per process for each version of a file.

Model weights are checked against their cards at every load and name the caches of what they
compute; hashing tens of megabytes each time would cost more than the lookup saves. A file's
version is what :func:`stamp` sees (path, size, times, inode), so a file rewritten in place,
even to the same size, is hashed again.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

#: What :func:`stamp` gives: resolved path, size, modification and change time (ns), inode.
Stamp = tuple[str, int, int, int, int]


def stamp(path: Path) -> Stamp | None:
    """What tells this version of ``path`` from another without reading it (``None``: no such file)."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return (str(Path(path).resolve()), found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino)


def add_file(digest: Any, path: Path) -> None:
    """Feed ``path``'s bytes to ``digest`` (a hashlib object) a megabyte at a time."""
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)


def file_sha256(path: Path) -> str:
    """Hex sha256 of ``path``'s bytes, read once per version of the file in this process."""
    if (version := stamp(path)) is None:
        raise FileNotFoundError(2, "No such file or directory", str(path))
    return _sha256(str(path), version)


@lru_cache(maxsize=64)
def _sha256(path: str, version: Stamp) -> str:
    digest = hashlib.sha256()
    add_file(digest, Path(path))
    return digest.hexdigest()


class CardMismatch(RuntimeError):
    """A model file is not the one its card records; the message names the file and the fix."""


def card_sha256(path: Path, expected: str | None, model: str, fix: str) -> str:
    """The sha256 of ``path`` if it is ``expected`` (the card's record), else :class:`CardMismatch` naming both."""
    found = file_sha256(path)
    if found != expected:
        recorded = expected[:12] if expected else "none"
        raise CardMismatch(
            f"{model}'s {path} does not match its model card: sha256 {found[:12]}, the card records {recorded}; {fix}"
        )
    return found
