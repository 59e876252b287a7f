"""Canonical terms a question names, by graph label, with the matcher the graph was built with."""

from __future__ import annotations

from collections.abc import Mapping

from hysem_assets.knowledge.mentions import TermMatcher, merge_vocabularies
from hysem_assets.knowledge.schema import GraphSchema

#: graph label -> canonical terms the question names, in order of first mention
Terms = dict[str, list[str]]


def entity_matchers(schema: GraphSchema, spellings: Mapping[str, Mapping[str, str]]) -> dict[str, TermMatcher]:
    """One matcher per entity label, over ``field -> spelling -> canonical`` (dictionaries, canonical_terms)."""
    vocabulary = merge_vocabularies(spellings)
    return {label: TermMatcher(vocabulary.get(field, {})) for field, (label, _) in schema.entity_fields().items()}


def recognise_terms(question: str, matchers: Mapping[str, TermMatcher]) -> Terms:
    return {label: found for label, matcher in matchers.items() if (found := matcher.find(question))}


def all_terms(terms: Terms) -> list[str]:
    return [term for found in terms.values() for term in found]
