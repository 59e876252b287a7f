"""Database exports a reviewer imports into a query: kept by content, listed with their provenance.

A reviewer who searched Embase, Web of Science or CINAHL through their own interfaces imports
each export under a source name (``hysem query import``). The file is copied into the query's
state folder under its sha256 and listed in a manifest beside it, so the records can be read
again on every materialization and importing the same file twice changes nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from hysem_assets.core.records import records_frame
from hysem_assets.settings.environment import hysem_home
from hysem_assets.sources.exports import ExportError, ExportRead, read_export
from hysem_assets.sources.registry import BY_NAME

MANIFEST = "manifest.json"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class ImportRefused(ValueError):
    """An import refused whole; the message is one line naming the file and what to do."""


@dataclass(frozen=True)
class ImportedFile:
    """One imported export: where its copy lives and where it came from."""

    source: str
    name: str
    sha256: str
    stored: str
    format: str
    encoding: str
    records: int
    warnings: int
    imported: str


@dataclass(frozen=True)
class ImportOutcome:
    entry: ImportedFile
    #: False when the same file was already imported under the same source name.
    new: bool
    read: ExportRead | None


def imports_dir(slug: str) -> Path:
    return hysem_home() / "imports" / slug


def source_name(given: str | None, path: Path) -> str:
    """The source name an export is imported as: ``given``, else the file's name, lower case."""
    name = re.sub(r"[^a-z0-9_-]+", "-", (given or path.stem).strip().lower()).strip("-")
    if not _NAME.match(name):
        raise ImportRefused(f"{path.name}: {given or path.stem!r} is no usable source name; give one with --source")
    if name in BY_NAME:
        raise ImportRefused(
            f"{path.name}: {name!r} is the name of a source hysem searches itself; import the export under a name "
            f"of its own (e.g. --source {name}-export)"
        )
    return name


def manifest(slug: str) -> list[ImportedFile]:
    """The exports imported into ``slug``, oldest first."""
    path = imports_dir(slug) / MANIFEST
    if not path.is_file():
        return []
    return [ImportedFile(**entry) for entry in json.loads(path.read_text(encoding="utf-8"))]


def import_export(slug: str, path: Path, source: str | None = None, today: dt.date | None = None) -> ImportOutcome:
    """Read ``path`` (refused whole when it cannot be read), keep a copy and list it; a file already
    imported under the same name is left as it is."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise ImportRefused(f"{path}: cannot be read ({exc.strerror or exc}); check the path") from None
    name = source_name(source, path)
    digest = hashlib.sha256(content).hexdigest()
    held = manifest(slug)
    for entry in held:
        if entry.sha256 == digest and entry.source == name:
            return ImportOutcome(entry, new=False, read=None)
    try:
        read = read_export(path, name)
    except ExportError as exc:
        raise ImportRefused(str(exc)) from None
    if not read.records:
        raise ImportRefused(f"{path.name}: no record could be read ({len(read.warnings)} warnings); nothing imported")
    folder = imports_dir(slug)
    folder.mkdir(parents=True, exist_ok=True)
    stored = f"{digest[:16]}{path.suffix.lower()}"
    shutil.copyfile(path, folder / stored)
    entry = ImportedFile(
        source=name,
        name=path.name,
        sha256=digest,
        stored=stored,
        format=read.format,
        encoding=read.encoding,
        records=len(read.records),
        warnings=len(read.warnings),
        imported=(today or dt.date.today()).isoformat(),
    )
    _write_manifest(folder, [*held, entry])
    return ImportOutcome(entry, new=True, read=read)


def imported_records(slug: str) -> tuple[pd.DataFrame, list[ImportedFile], list[str]]:
    """Every imported record of ``slug`` (a record repeated in a later export of the same source is kept
    once, from the latest file), the files they came from and what could not be read."""
    files, frames, warnings = manifest(slug), [], []
    for entry in files:
        read = read_export(imports_dir(slug) / entry.stored, entry.source)
        warnings += [f"{entry.name}: {warning}" for warning in read.warnings]
        frames.append(records_frame(read.records))
    if not frames:
        return records_frame([]), files, warnings
    frame = pd.concat(frames, ignore_index=True).drop_duplicates(["source", "source_id"], keep="last")
    return frame.reset_index(drop=True), files, warnings


def provenance_table(files: list[ImportedFile]) -> pd.DataFrame:
    return pd.DataFrame([asdict(entry) for entry in files], columns=list(ImportedFile.__dataclass_fields__))


def _write_manifest(folder: Path, entries: list[ImportedFile]) -> None:
    """Replace the manifest whole, so a crash never leaves half a list."""
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".manifest.", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump([asdict(entry) for entry in entries], stream, indent=1, ensure_ascii=False)
    os.replace(temporary, folder / MANIFEST)
