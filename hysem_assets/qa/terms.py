"""Canonical terms a question names, by graph label, with the term matcher the graph and extraction use.

A question may also use a broader term (a protocol's ``broader_terms``): a broader term
stands for the canonical terms it covers, so a filter on it matches any of them, as a
reviewer means it. Terms combine as a reviewer's search does: a work must be linked to a
term of every label named (and), to any of the terms named of one label (or), and to none
of the terms named after a negation ("but not <term>", "without <term>", "excluding <term> and
<term>"), up to the end of that clause. A negation that qualifies something else ("no more
than", "no association", "not only") excludes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from hysem_assets.core.matcher import TermMatcher
from hysem_assets.knowledge.mentions import merge_vocabularies
from hysem_assets.stores.graph_schema import GraphSchema

#: graph label -> canonical terms the question names, in order of first mention
Terms = dict[str, list[str]]
#: field -> broader term -> the canonical terms it covers
BroaderTerms = dict[str, dict[str, list[str]]]


class BroaderTermsError(ValueError):
    """Broader terms that are malformed or name a term their field's dictionary lacks."""


def checked_broader_terms(data: object, canonical: Mapping[str, set[str]], where: str) -> BroaderTerms:
    """Broader terms per field (a protocol's ``broader_terms``), each covering canonical terms of its field.

    ``canonical`` holds each dictionary field's canonical terms; errors name ``where``.
    """
    shape_ok = isinstance(data, dict) and all(
        isinstance(terms, dict)
        and all(isinstance(c, list) and c and all(isinstance(t, str) for t in c) for c in terms.values())
        for terms in data.values()
    )
    if not shape_ok:
        raise BroaderTermsError(
            f"{where}: broader_terms must map each field to {{broader term: [canonical term, ...]}}."
        )
    assert isinstance(data, dict)
    for field_name, terms in data.items():
        known = canonical.get(field_name)
        if known is None:
            raise BroaderTermsError(
                f"{where}: broader_terms names {field_name!r}, not a field with a dictionary; known: {sorted(canonical)}"
            )
        for broader, covered in terms.items():
            if broader in known:
                raise BroaderTermsError(f"{where}: {broader!r} is already a canonical term of {field_name}; rename it")
            if unknown := [t for t in covered if t not in known]:
                raise BroaderTermsError(
                    f"{where}: {broader!r} covers {unknown}, not canonical terms of {field_name}'s dictionary"
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


def without_kind_words(terms: Terms, words: set[str]) -> Terms:
    """``terms`` less those that are only a word for a kind of entity: an extracted term "Outcome" is no filter
    in "which outcomes are most often measured"."""
    kept = {label: [term for term in found if term.casefold() not in words] for label, found in terms.items()}
    return {label: found for label, found in kept.items() if found}


#: Words after which the terms named are excluded, unless what follows says the negation qualifies something
#: else ("no more than 500", "not only", "no association between ..."); and where that clause ends: punctuation,
#: a new clause, or "and"/"or" before a verb or a relative ("... but not X and reporting Y").
_NEGATION = re.compile(
    r"\b(?:not|without|excluding|exclude|except(?:\s+for)?|other\s+than|apart\s+from|no|none\s+of)\b"
    r"(?!\s+(?:more|less|fewer|greater|larger|higher|lower|smaller|longer|shorter|later|earlier|only|just|merely"
    r"|significant\w*|associat\w*|differen\w*|effects?|evidence|change\w*|relation\w*|link\w*|matter|longer"
    r"|clear\w*|consistent\w*|increase\w*|decrease\w*|impact\w*|benefit\w*)\b)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(
    r"[,;:?!.](?:\s|$)|\b(?:but|while|whereas|which|that|who|where)\b"
    r"|\b(?:and|or)\s+(?=(?:\w+ing|with|in|from|published|report\w*|us(?:e|es|ed)|stud(?:y|ies|ied)|measur\w*"
    r"|examin\w*|assess\w*|evaluat\w*|investigat\w*|compar\w*|had|have|has|were|was|are|is)\b)",
    re.IGNORECASE,
)


#: A question asking across every record the query found ("across all records found", "among all the works
#: retrieved"), not only the included studies answers count over by default.
_EVERYTHING_FOUND = re.compile(
    r"\b(?:across|among|amongst|of|over|in|for)\s+(?:all|every)(?:thing)?\s+(?:of\s+)?(?:the\s+)?"
    r"(?:(?:records?|works?|papers?|articles?|studies|publications?|results?)\s+)?"
    r"(?:(?:we|the\s+search(?:es)?|the\s+query)\s+)?(?:found|retrieved|identified|searched)\b",
    re.IGNORECASE,
)
#: The graph relationships from a query to the works it included, and to every work it found.
INCLUDES, FOUND = "INCLUDES", "FOUND"


@dataclass(frozen=True)
class Filters:
    """The terms a question requires (label -> any of these names; every label) and those it excludes, and
    whether it counts across every record found instead of the included studies."""

    required: Terms
    excluded: Terms = field(default_factory=dict)
    everything_found: bool = False

    @property
    def articles(self) -> str:
        """The Cypher pattern that binds ``a`` to each work counted: an included study, or any work found."""
        return f"MATCH (:Query {{key: $query}})-[:{FOUND if self.everything_found else INCLUDES}]->(a:Article)"

    @property
    def counted_over(self) -> str:
        """What the works counted are, in an answer's words ("of 34 included studies")."""
        return "records found" if self.everything_found else "included studies"


def asks_everything_found(question: str) -> bool:
    """Whether ``question`` counts across every record the query found rather than the included studies."""
    return _EVERYTHING_FOUND.search(question) is not None


def negated_clauses(question: str) -> list[tuple[int, int]]:
    """Spans of ``question`` from each negation word to the end of its clause."""
    spans = []
    for match in _NEGATION.finditer(question):
        end = _CLAUSE_END.search(question, match.end())
        spans.append((match.start(), end.start() if end else len(question)))
    return spans


def split_negated(question: str) -> tuple[str, str]:
    """``question`` with its negated clauses blanked out, and those clauses (";"-joined)."""
    kept, negated = question, []
    for start, end in negated_clauses(question):
        negated.append(question[start:end])
        kept = kept[:start] + " " * (end - start) + kept[end:]
    return kept, " ; ".join(negated)


def question_filters(question: str, matchers: Mapping[str, QuestionMatcher], kind_words: set[str]) -> Filters:
    """The terms ``question`` requires and excludes; words for a kind of entity are no terms."""
    kept, negated = split_negated(question)
    required = without_kind_words(recognise_terms(kept, matchers), kind_words)
    excluded = without_kind_words(recognise_terms(negated, matchers), kind_words) if negated else {}
    return Filters(required, excluded, asks_everything_found(question))


def all_terms(terms: Terms) -> list[str]:
    return [term for found in terms.values() for term in found]
