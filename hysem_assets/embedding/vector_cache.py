"""Vectors already computed, by content: the same text embedded by the same model and backend
is read back instead of computed again, across runs, partitions and processes.

One SQLite file (``vectors.sqlite`` in the cache folder, by default ``$HYSEM_HOME/vector_cache``)
maps (space, sha256 of the exact text) to the float32 vector. The space names the model and
the backend (see :attr:`hysem_assets.embedding.encoder.Encoder.cache_space`): backends of one model
agree only to rounding or, quantized, to a cosine of about 0.99, so a stored vector is always
the one that backend would compute. WAL mode and one short transaction per write let several
Dagster steps read and write at once. The cache only saves time: when the file cannot be read
or written, a warning is logged and the texts are embedded as if it were empty.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import numpy as np

from hysem_assets.settings.environment import hysem_home

log = logging.getLogger(__name__)
FILENAME = "vectors.sqlite"
_PARAMETERS = 500  # keys per SELECT, under SQLite's limit on bound parameters
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors ("
    " space TEXT NOT NULL, key BLOB NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (space, key)"
    ") WITHOUT ROWID"
)


def text_key(text: str) -> bytes:
    """sha256 of the text's UTF-8 bytes: the exact text, nothing normalised."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class VectorCache:
    """The cache in ``folder`` (default ``$HYSEM_HOME/vector_cache``); a connection per call, so it is
    safe to share between threads and to pickle into another process."""

    def __init__(self, folder: Path | str | None = None) -> None:
        self.path = Path(folder if folder is not None else hysem_home() / "vector_cache") / FILENAME

    def __repr__(self) -> str:
        return f"VectorCache({str(self.path.parent)!r})"

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute(_SCHEMA)
        return connection

    def get(self, space: str, texts: Sequence[str], dimension: int) -> list[np.ndarray | None]:
        """The stored vector of each text (``None`` where there is none), in order."""
        keys = [text_key(text) for text in texts]
        found: dict[bytes, np.ndarray] = {}
        try:
            with closing(self._connect()) as connection:
                unique = list(dict.fromkeys(keys))
                for start in range(0, len(unique), _PARAMETERS):
                    part = unique[start : start + _PARAMETERS]
                    rows = connection.execute(
                        f"SELECT key, vector FROM vectors WHERE space = ? AND key IN ({','.join('?' * len(part))})",
                        [space, *part],
                    )
                    found.update((key, np.frombuffer(blob, dtype="<f4")) for key, blob in rows)
        except sqlite3.Error as exc:
            log.warning("vector cache %s not read (%s); embedding every text", self.path, exc)
            return [None] * len(texts)
        return [vector if (vector := found.get(key)) is not None and vector.size == dimension else None for key in keys]

    def put(self, space: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text, in one transaction."""
        rows = [
            (space, text_key(text), np.ascontiguousarray(vector, dtype="<f4").tobytes())
            for text, vector in zip(texts, vectors, strict=True)
        ]
        try:
            with closing(self._connect()) as connection:
                connection.execute("BEGIN IMMEDIATE")
                connection.executemany("INSERT OR REPLACE INTO vectors (space, key, vector) VALUES (?, ?, ?)", rows)
                connection.execute("COMMIT")
        except sqlite3.Error as exc:
            log.warning("vector cache %s not written (%s); these vectors will be computed again", self.path, exc)

    def count(self, space: str | None = None) -> int:
        """Vectors stored (in one space, or in all)."""
        if not self.path.is_file():
            return 0
        with closing(self._connect()) as connection:
            query, args = (
                ("SELECT count(*) FROM vectors", [])
                if space is None
                else (
                    "SELECT count(*) FROM vectors WHERE space = ?",
                    [space],
                )
            )
            return int(connection.execute(query, args).fetchone()[0])
