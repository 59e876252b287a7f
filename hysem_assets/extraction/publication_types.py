"""Category values a record's source states: a PubMed publication type, an OpenAlex, Crossref or Scopus type.

A protocol's category field may list, per value, the publication types that state it
(``publication_types:``). The indexer or publisher who typed the record saw the whole
article, so a stated type wins over what any backend reads in the text, and the value's
evidence names the type (``source: publication_types``) instead of a sentence. Types
compare without case, hyphens or underscores ("Randomized Controlled Trial",
"journal-article"); when a record states types of several values, the value listed first
in the protocol wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from hysem_assets.settings.protocols import Protocol

#: ``source`` of an evidence entry taken from the record's types rather than its text.
SOURCE = "publication_types"


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name).strip().lower()


def record_types(*stated: Any) -> list[str]:
    """The distinct types of a record from its columns (``publication_types`` "; "-separated, ``item_type``)."""
    types: list[str] = []
    for value in stated:
        if isinstance(value, str):
            types.extend(part.strip() for part in value.split(";") if part.strip())
        elif isinstance(value, Iterable):
            types.extend(str(part).strip() for part in value if str(part).strip())
    return list(dict.fromkeys(types))


def stated_values(protocol: Protocol, types: Iterable[str]) -> dict[str, tuple[str, str]]:
    """field -> (value, the type as the source wrote it) for each category field a type of the record states."""
    written = {_key(name): name for name in types}
    found = {}
    for field in protocol.fields:
        for value, names in (field.publication_types or {}).items():
            match = next((written[_key(name)] for name in names if _key(name) in written), None)
            if match:
                found[field.name] = (value, match)
                break
    return found


def with_stated_values(
    protocol: Protocol,
    values: Mapping[str, Any],
    evidence: Mapping[str, list[dict[str, Any]]],
    types: Iterable[str],
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """``values`` and ``evidence`` with every value the record's types state in place of what the text gave."""
    values, evidence = dict(values), dict(evidence)
    for name, (value, written) in stated_values(protocol, types).items():
        values[name] = value
        evidence[name] = [{"value": value, "sentence": f"Publication type: {written}", "source": SOURCE}]
    return values, evidence
