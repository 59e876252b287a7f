"""Synonym dictionaries as entries to match against, checked for synonyms claimed twice.

A file ``config/dictionaries/<field>.yaml`` maps each canonical term to a list of
synonyms. A spelling listed under two canonical terms (literally, or equal once
normalized) cannot map to both: it stays with the first canonical term in the file, the
other listing is dropped, and a ``DictionaryConflictWarning`` names both. A warning, not
an error, so that one slip in a growing dictionary does not stop a run; the conflicts are
reported with the mapping so they get fixed.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hysem_assets.extraction.terms import read_dictionary_file
from hysem_assets.settings import config_dir
from hysem_assets.terms.normalize import normalize_term


class DictionaryConflictWarning(UserWarning):
    """A synonym is listed under two canonical terms; the first keeps it."""


@dataclass(frozen=True)
class Conflict:
    field: str
    spelling: str
    kept_under: str
    dropped_from: str

    @property
    def message(self) -> str:
        return (
            f"dictionary {self.field!r}: {self.spelling!r} is listed under both {self.kept_under!r} and "
            f"{self.dropped_from!r}; it maps to {self.kept_under!r} (listed first). Remove it from one of them."
        )


@dataclass(frozen=True)
class SynonymDictionary:
    """One field's canonical terms, each with the spellings that map to it (itself first)."""

    field: str
    entries: Mapping[str, tuple[str, ...]]
    conflicts: tuple[Conflict, ...] = field(default=())

    @property
    def spellings(self) -> list[tuple[str, str]]:
        """(spelling, canonical) pairs, grouped by canonical term in file order."""
        return [(spelling, canonical) for canonical, spellings in self.entries.items() for spelling in spellings]

    @property
    def digest(self) -> str:
        """Changes whenever a spelling or its canonical term does: the embedding cache's key."""
        return hashlib.sha256(json.dumps(self.spellings, ensure_ascii=False).encode("utf-8")).hexdigest()


def build_dictionary(field_name: str, mapping: Mapping[str, list[str] | None]) -> SynonymDictionary:
    """Entries from ``canonical -> synonyms``, the first claim on a spelling winning (see module doc)."""
    owner: dict[str, str] = {}
    entries: dict[str, tuple[str, ...]] = {}
    conflicts: list[Conflict] = []
    for canonical, synonyms in mapping.items():
        kept = []
        for spelling in dict.fromkeys(str(s).strip() for s in [canonical, *(synonyms or [])] if str(s).strip()):
            key = normalize_term(spelling)
            claimed = owner.setdefault(key, str(canonical))
            if claimed == canonical:
                kept.append(spelling)
            else:
                conflicts.append(Conflict(field_name, spelling, claimed, str(canonical)))
        if kept:
            entries[str(canonical)] = tuple(kept)
    for conflict in conflicts:
        warnings.warn(conflict.message, DictionaryConflictWarning, stacklevel=2)
    return SynonymDictionary(field_name, entries, tuple(conflicts))


def load_dictionaries(directory: Path | None = None) -> dict[str, SynonymDictionary]:
    """Every ``<field>.yaml`` in ``directory`` (default: ``config/dictionaries``), keyed by field."""
    directory = directory or config_dir() / "dictionaries"
    dictionaries = {}
    for path in sorted(directory.glob("*.yaml")):
        dictionaries[path.stem] = build_dictionary(path.stem, read_dictionary_file(path))
    return dictionaries
