"""Extracted fields in canonical form, ready for :func:`build_partition_graph`.

``extracted_fields`` keeps each work's raw values (list fields as JSON text), and
``canonical_terms`` maps every distinct (field, raw term) to a canonical term or to none.
Graph entities are the canonical terms only: a raw term the mapping leaves unmatched does
not become a node (it shows up in canonical_terms' unmatched table instead). A field that
becomes an Article property keeps its value (a category, a number), except free text with
a dictionary, which takes the first canonical term its text mentions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

from hysem_assets.core.matcher import TermMatcher
from hysem_assets.knowledge.build import is_missing, terms
from hysem_assets.knowledge.mentions import Vocabulary, find_mentions, merge_vocabularies
from hysem_assets.settings.protocols import Protocol, ProtocolField
from hysem_assets.stores.graph_schema import GraphSchema


def raw_values(value: Any) -> list[str]:
    """Terms of a list field stored as JSON text, as a list, or as one plain string."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            pass
    return terms(value)


def mapping_vocabulary(mapping: pd.DataFrame) -> Vocabulary:
    """field -> raw term -> canonical term, from the canonical_terms table."""
    matched = mapping[mapping["canonical"].notna()]
    vocabulary: Vocabulary = {}
    for field, raw, canonical in zip(matched["field"], matched["raw_term"], matched["canonical"], strict=True):
        vocabulary.setdefault(field, {})[str(raw).strip()] = str(canonical)
    return vocabulary


def property_value(field: ProtocolField, value: Any, matcher: TermMatcher | None) -> Any:
    """One Article property from a field's extracted value.

    A text field with a dictionary takes the first canonical term its text mentions (free
    text would make every value distinct); other values are stored as extracted.
    """
    if is_missing(value) or value == "":
        return None
    if matcher is not None:
        return next(iter(matcher.find(str(value))), None)
    return value


def canonical_fields(
    schema: GraphSchema,
    protocol: Protocol,
    extracted: pd.DataFrame,
    mapping: pd.DataFrame,
    dictionaries: Mapping[str, Mapping[str, str]] | None = None,
) -> pd.DataFrame:
    """``cluster_id`` and one column per schema field: canonical terms (entity fields) or one value
    (property fields). ``dictionaries``: field -> spelling -> canonical, for text properties."""
    by_raw = mapping_vocabulary(mapping)
    spellings = merge_vocabularies(dictionaries or {}, by_raw)
    properties = {name: protocol.field(name) for name, spec in schema.fields.items() if spec.property}
    matchers = {
        name: TermMatcher(spellings.get(name, {})) if field.type == "text" and field.dictionary else None
        for name, field in properties.items()
    }
    rows = []
    for record in extracted.to_dict("records"):
        row: dict[str, Any] = {"cluster_id": record["cluster_id"]}
        for field in schema.entity_fields():
            lookup = by_raw.get(field, {})
            row[field] = list(dict.fromkeys(lookup[t] for t in raw_values(record.get(field)) if t in lookup))
        for name, field in properties.items():
            row[name] = property_value(field, record.get(name), matchers[name])
        rows.append(row)
    return pd.DataFrame(rows, columns=["cluster_id", *schema.entity_fields(), *properties])


def chunk_mentions(
    schema: GraphSchema,
    chunks: pd.DataFrame,
    mapping: pd.DataFrame,
    dictionaries: Mapping[str, Mapping[str, str]] | None = None,
) -> pd.Series:
    """The ``mentions`` column of ``chunks``: per entity field, the canonical terms in the text."""
    vocabulary = merge_vocabularies(dictionaries or {}, mapping_vocabulary(mapping))
    return find_mentions(chunks["text"], {field: vocabulary.get(field, {}) for field in schema.entity_fields()})
