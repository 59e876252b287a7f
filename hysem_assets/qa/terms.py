"""Canonical terms a question names, by graph label, with the term matcher the graph and extraction use.

A question may also use a broader term (``config/broader_terms.yaml``): "heart disease"
stands for the cardiac outcomes it covers, so a filter on it matches any of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from hysem_assets.environment import config_dir
from hysem_assets.knowledge.mentions import merge_vocabularies
from hysem_assets.knowledge.schema import GraphSchema
from hysem_assets.terms.matcher import TermMatcher

#: graph label -> canonical terms the question names, in order of first mention
Terms = dict[str, list[str]]
#: field -> broader term -> the canonical terms it covers
BroaderTerms = dict[str, dict[str, list[str]]]


class BroaderTermsError(ValueError):
    """The broader-terms file is malformed or names a term its field's dictionary lacks."""


def load_broader_terms(path: Path | None = None, canonical: Mapping[str, set[str]] | None = None) -> BroaderTerms:
    """The broader terms per field; each covered term must be canonical in ``canonical[field]`` when given."""
    path = path or config_dir() / "broader_terms.yaml"
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise BroaderTermsError(f"{path} is not valid YAML: {exc}") from exc
    shape_ok = isinstance(data, dict) and all(
        isinstance(terms, dict)
        and all(isinstance(c, list) and c and all(isinstance(t, str) for t in c) for c in terms.values())
        for terms in data.values()
    )
    if not shape_ok:
        raise BroaderTermsError(f"{path} must map each field to {{broader term: [canonical term, ...]}}.")
    for field_name, terms in data.items():
        known = canonical.get(field_name) if canonical is not None else None
        if canonical is not None and known is None:
            raise BroaderTermsError(
                f"{path}: {field_name!r} is not a field with a dictionary; known: {sorted(canonical)}"
            )
        for broader, covered in terms.items():
            if known is not None and broader in known:
                raise BroaderTermsError(f"{path}: {broader!r} is already a canonical term of {field_name}; rename it")
            if unknown := [t for t in covered if known is not None and t not in known]:
                raise BroaderTermsError(
                    f"{path}: {broader!r} covers {unknown}, not canonical terms of config/dictionaries/{field_name}.yaml"
                )
    return {str(f): {str(b): list(c) for b, c in terms.items()} for f, terms in data.items()}


@dataclass(frozen=True)
class QuestionMatcher:
    """One field's terms in a question; a broader term is replaced by the terms it covers."""

    terms: TermMatcher
    broader: Mapping[str, list[str]] = field(default_factory=dict)

    def find(self, text: str | None) -> list[str]:
        return list(dict.fromkeys(t for found in self.terms.find(text) for t in self.broader.get(found, [found])))


def entity_matchers(
    schema: GraphSchema, spellings: Mapping[str, Mapping[str, str]], broader: BroaderTerms | None = None
) -> dict[str, QuestionMatcher]:
    """One matcher per entity label, over ``field -> spelling -> canonical`` (dictionaries, canonical_terms)."""
    broader = broader or {}
    own_names = {f: {term: term for term in terms} for f, terms in broader.items()}
    vocabulary = merge_vocabularies(spellings, own_names)  # a dictionary spelling wins over a broader term
    return {
        label: QuestionMatcher(TermMatcher(vocabulary.get(f, {})), broader.get(f, {}))
        for f, (label, _) in schema.entity_fields().items()
    }


def recognise_terms(question: str, matchers: Mapping[str, QuestionMatcher]) -> Terms:
    return {label: found for label, matcher in matchers.items() if (found := matcher.find(question))}


def all_terms(terms: Terms) -> list[str]:
    return [term for found in terms.values() for term in found]
