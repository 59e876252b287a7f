"""Per-work results kept by content, so re-materializing a partition redoes only what changed.

A step (``parsed_docs``, ``extracted_fields``) keeps each work's result as one JSON file
under ``$HYSEM_HOME/work_cache/<step>/<ab>/<key>.json``. The key is the SHA-256 of
everything that decides the result: the work's input content (a PDF's hash, a text),
the settings that change the output, the step's code marker and hysem's version. A work
whose key is found is not computed again, whichever partition or run stored it; a change of
input or of a setting gives a new key, so a stale result is never read, only left behind
(deleting the folder reclaims the space and costs one recomputation).

Beside the results, each step keeps the keys of a partition's last materialization
(``<step>/partitions/<partition>.json``), from which a run counts works new, changed,
unchanged and dropped; steps that keep their results elsewhere (``pdfs`` its files, the graph
store its rows) keep only these keys, to report the same counts. Files rather than a database: every write is a temporary file renamed
into place, so concurrent runs share the cache without locks and no reader sees half a file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from hysem_assets.core.atomic import write_json
from hysem_assets.settings.environment import hysem_home

Row = dict[str, Any]


def work_cache_dir() -> Path:
    return hysem_home() / "work_cache"


#: Part of every key, so an upgrade of hysem never reads results of older code.
HYSEM_VERSION = version("hysem")


def work_id(doi: Any, cluster_id: Any) -> str:
    """Who a work is from run to run: its DOI, lower-cased, else its cluster id (which changes as records join it)."""
    text = doi.strip() if isinstance(doi, str) else ""
    return text.lower() if text else str(cluster_id)


def content_key(*parts: Any) -> str:
    """SHA-256 of the canonical JSON of ``parts`` (paths and other values as text) and hysem's version."""
    canonical = json.dumps(
        [HYSEM_VERSION, *parts], sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _read_json(path: Path) -> Any:
    """The file's value, or None when it is missing or damaged (a damaged entry is recomputed)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class WorkChanges:
    """How a partition's works compare with its last materialization, and how many were recomputed.

    ``new + changed + unchanged`` and ``reused + processed`` both count every work of the run;
    ``dropped`` counts works of the last run that are gone. A work is ``reused`` when its
    result came from the cache, which may hold it from another partition even when it is new here.
    """

    new: int = 0
    changed: int = 0
    unchanged: int = 0
    dropped: int = 0
    reused: int = 0
    processed: int = 0

    def as_metadata(self) -> dict[str, int]:
        return {f"works_{name}": getattr(self, name) for name in self.__dataclass_fields__}


def compare(previous: Mapping[str, str], current: Mapping[str, str], reused: int) -> WorkChanges:
    """Counts of work ids in ``current`` (id -> content key) against ``previous``."""
    new = sum(work not in previous for work in current)
    changed = sum(work in previous and previous[work] != key for work, key in current.items())
    return WorkChanges(
        new=new,
        changed=changed,
        unchanged=len(current) - new - changed,
        dropped=sum(work not in current for work in previous),
        reused=reused,
        processed=len(current) - reused,
    )


class WorkCache:
    """One step's results by content key, and the keys of each partition's last run."""

    def __init__(self, step: str, root: Path | None = None):
        self.directory = (root or work_cache_dir()) / step

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Row | None:
        return _read_json(self._path(key))

    def put(self, key: str, row: Row) -> None:
        write_json(self._path(key), row)

    def _partition_path(self, partition: str) -> Path:
        return self.directory / "partitions" / f"{partition}.json"

    def record_run(self, partition: str, keys: Mapping[str, str], reused: int) -> WorkChanges:
        """Compare ``keys`` (work id -> content key) with the partition's last run, then remember them."""
        changes = compare(_read_json(self._partition_path(partition)) or {}, keys, reused)
        write_json(self._partition_path(partition), dict(keys))
        return changes

    def reuse_or_compute(
        self,
        partition: str,
        works: Sequence[str],
        candidates: Sequence[Sequence[str]],
        compute: Callable[[list[int]], list[Row]],
        store_under: Callable[[int, Row], str | None],
    ) -> CachedRun:
        """One row per work of ``works``, in order, each read from the cache or computed.

        ``candidates[i]`` are the keys under which work ``i``'s result may be stored, tried in
        order; the first is its content key, which the partition's run is compared by. The
        works found under none are computed in one call, ``compute(positions)`` returning
        their rows in that order, and each row is stored under ``store_under(i, row)`` (None:
        not kept, so the work is computed again next time).
        """
        found = [next((row for key in keys if (row := self.get(key)) is not None), None) for keys in candidates]
        missing = [position for position, row in enumerate(found) if row is None]
        rows = dict(zip(missing, compute(missing) if missing else [], strict=True))
        for position, row in rows.items():
            key = store_under(position, row)
            if key is not None:
                self.put(key, row)
        reused = [row is not None for row in found]
        changes = self.record_run(
            partition, {w: keys[0] for w, keys in zip(works, candidates, strict=True)}, sum(reused)
        )
        return CachedRun([row if row is not None else rows[i] for i, row in enumerate(found)], reused, changes)


@dataclass(frozen=True)
class CachedRun:
    """What :meth:`WorkCache.reuse_or_compute` gives: the rows, which were reused, and the counts."""

    rows: list[Row]
    reused: list[bool]
    changes: WorkChanges
