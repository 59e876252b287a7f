"""Files written whole or not at all: a temporary file beside the target, then a rename.

Caches and tables are read by other processes (a second run, `hysem ask`) while they are
written; a reader must find the old file or the new one, never half of either.
"""

from __future__ import annotations

import json
import os
import pickle
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def _replacing(path: Path, mode: str, **options: Any) -> Iterator[IO]:
    """A file to write that takes the place of ``path`` only once the block ends without error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, mode, **options) as file:
            yield file
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json(path: Path, value: Any) -> None:
    """``value`` as UTF-8 JSON at ``path``, replacing it atomically; values JSON lacks are written as text."""
    with _replacing(path, "w", encoding="utf-8") as file:
        json.dump(value, file, ensure_ascii=False, default=str)


def write_pickle(path: Path, value: Any) -> None:
    """``value`` pickled at ``path``, replacing it atomically: fitted models kept for the next run."""
    with _replacing(path, "wb") as file:
        pickle.dump(value, file, protocol=pickle.HIGHEST_PROTOCOL)


def write_bytes(path: Path, data: bytes) -> None:
    """``data`` at ``path``, replacing it atomically (a chart another process may be showing)."""
    with _replacing(path, "wb") as file:
        file.write(data)
