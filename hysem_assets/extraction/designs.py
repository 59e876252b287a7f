"""Design columns: fields whose value is one of a fixed set of categories, never a sentence.

A protocol declares categories in two ways: a ``category`` field lists its values (each with
the cue phrases that name it), and a ``text`` field with a dictionary takes the dictionary's
canonical terms (``config/dictionaries/<name>.yaml``: canonical term -> how texts say it), the
way the knowledge graph already stores it. Whatever a backend answers, such a column holds one
of its categories: an answer naming one is mapped onto it (the first named), and an answer
naming none is left empty with the reason beside the evidence, so a study's design is never a
sentence of its text.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from hysem_assets.extraction.categories import values_matcher
from hysem_assets.settings.dictionaries import load_dictionary
from hysem_assets.settings.protocols import Protocol, ProtocolField


def is_design(field: ProtocolField) -> bool:
    """Whether ``field`` holds one of a fixed set of categories: a category field, or a text field with a dictionary."""
    return field.type == "category" or (field.type == "text" and field.dictionary is not None)


@lru_cache(maxsize=32)
def _dictionary(path: Path, modified: float) -> dict[str, str]:
    """canonical term -> its spellings as comma-separated cue phrases (read again when the file changes)."""
    return {canonical: ", ".join(spellings) for canonical, spellings in load_dictionary(path).entries.items()}


def categories(protocol: Protocol, field: ProtocolField) -> dict[str, str]:
    """The categories of a design field, each with the cue phrases that name it; {} for any other field."""
    if field.type == "category":
        return dict(field.values or {})
    if not is_design(field):
        return {}
    path = protocol.dictionary_files()[field.name]
    return _dictionary(path, path.stat().st_mtime)


def category_of(value: Any, choices: Mapping[str, str]) -> str | None:
    """The category ``value`` names: itself when it is one, else the first category a phrase of it names."""
    if not isinstance(value, str) or not value.strip():
        return None
    if value in choices:
        return value
    return next(iter(values_matcher(choices).find(value)), None)


def design_values(protocol: Protocol, values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``values`` with each design column mapped onto its categories, and field -> why it stays empty."""
    mapped, reasons = dict(values), {}
    for field in protocol.fields:
        if not is_design(field):
            continue
        choices = categories(protocol, field)
        value = values.get(field.name)
        mapped[field.name] = category_of(value, choices)
        if mapped[field.name] is None:
            named = f"{' '.join(str(value).split())[:120]!r} names none of" if value else "the text names none of"
            reasons[field.name] = f"{named} the {len(choices)} categories of {field.name}"
    return mapped, reasons
