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
from functools import cached_property
from pathlib import Path

import yaml

from hysem_assets.core.matcher import TermMatcher, term_keys
from hysem_assets.settings.environment import config_dir


class DictionaryError(ValueError):
    """A dictionary file that is not a mapping of canonical terms to lists of synonyms."""


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

    @cached_property
    def matcher(self) -> TermMatcher:
        """Finds these terms in text and in term lists."""
        return TermMatcher(dict(self.spellings))


def build_dictionary(field_name: str, mapping: Mapping[str, list[str] | None]) -> SynonymDictionary:
    """Entries from ``canonical -> synonyms``, the first claim on a spelling winning (see module doc)."""
    owner: dict[str, str] = {}
    entries: dict[str, tuple[str, ...]] = {}
    conflicts: list[Conflict] = []
    for canonical, synonyms in mapping.items():
        kept = []
        for spelling in dict.fromkeys(str(s).strip() for s in [canonical, *(synonyms or [])] if str(s).strip()):
            keys = term_keys(spelling)
            if not keys:
                raise DictionaryError(f"dictionary {field_name!r}: {spelling!r} has no letters or digits")
            key = keys[0]
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


def read_dictionary_file(path: Path) -> dict[str, list[str] | None]:
    """A dictionary file: a YAML mapping of canonical term to a list of synonyms (possibly empty)."""
    try:
        mapping = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise DictionaryError(f"Cannot read dictionary {path}: {exc}") from exc
    if not isinstance(mapping, dict) or not all(isinstance(v, list | None) for v in mapping.values()):
        raise DictionaryError(f"Dictionary {path} must map each canonical term to a list of synonyms.")
    # YAML reads a bare NO, ON or 1.5 as a boolean or a number: the spelling would be lost.
    if odd := [t for c, synonyms in mapping.items() for t in [c, *(synonyms or [])] if not isinstance(t, str)]:
        raise DictionaryError(f"Dictionary {path}: {odd[0]!r} is not text; quote the spelling (e.g. 'NO').")
    return mapping


def load_dictionary(path: Path) -> SynonymDictionary:
    """One dictionary file; its field is the file's stem."""
    return build_dictionary(path.stem, read_dictionary_file(path))


def load_dictionaries(directory: Path | None = None) -> dict[str, SynonymDictionary]:
    """Every ``<field>.yaml`` in ``directory`` (default: ``config/dictionaries``), keyed by field."""
    directory = directory or config_dir() / "dictionaries"
    dictionaries = {}
    for path in sorted(directory.glob("*.yaml")):
        dictionaries[path.stem] = load_dictionary(path)
    return dictionaries
