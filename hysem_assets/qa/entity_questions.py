"""Questions over the entity graph that the ``entities`` asset loads: which methods, tasks, metrics, materials
or diseases the works mention, how many, and how often.

The kind a question asks for is read off its wording with the words ``config/entity_questions.yaml`` gives each
tagger type, so no subject is written here and any protocol's partition answers alike. The question's own
entities are found by the names the graph holds for the partition (read once per engine), so a topic
("methods used for heart failure prediction") limits the works counted to those mentioning it (a term the
review's protocol knows filters as the other graph routes filter, broader terms included), and an
exclusion ("excluding X", "other than X") drops the names that contain X and the works that mention an entity X
of another type. Names written right before the kind's word ("machine learning methods") qualify the kind and
limit nothing (the tagger's types have no finer kinds to map them to), unless they name a disease or material
the works are about ("stroke models"). Counts are distinct works per entity name,
read with one parameterised Cypher query through the graph store, so both backends give the same numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from hysem_assets.core.matcher import TermMatcher, matchable
from hysem_assets.entities.mentions import entity_id
from hysem_assets.entities.tagger import TYPES
from hysem_assets.qa.cypher import CypherPlan
from hysem_assets.qa.symbolic import term_conditions
from hysem_assets.qa.terms import Filters, QuestionMatcher, Terms, split_negated
from hysem_assets.settings.environment import config_dir
from hysem_assets.settings.yamlfile import read_yaml_mapping
from hysem_assets.stores.graph import GraphStore, GraphStoreError
from hysem_assets.stores.graph_schema import GraphSchema

#: Types of a name that, written right before a kind's word, still names what the works are about ("stroke models",
#: "imaging data sources"); any other name there narrows the kind ("machine learning methods").
SUBJECT_TYPES = ("Disease", "Material")
#: Words that join the content of an excluded clause ("excluding studies of X and Y"): never part of a name.
_JOINING = {
    "a", "an", "the", "of", "on", "in", "for", "to", "with", "by", "and", "or", "as", "at", "from", "that", "which",
    "those", "these", "this", "any", "all", "other", "than", "except", "excluding", "exclude", "without", "not",
    "no", "none", "apart", "but", "use", "uses", "used", "using", "study", "studies", "studied", "work", "works",
    "article", "articles", "paper", "papers", "report", "reports", "reported", "reporting", "mention", "mentions",
    "mentioned", "mentioning", "is", "are", "was", "were", "be", "been",
}  # fmt: skip
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class EntityQuestionsError(ValueError):
    """``config/entity_questions.yaml`` is malformed or names a type the tagger does not have."""


@dataclass(frozen=True)
class Mention:
    """A phrase found in a question (in its :func:`matchable` form): what it names and where."""

    name: str
    start: int
    end: int

    def overlaps(self, other: Mention) -> bool:
        return self.start < other.end and other.start < self.end


def _mentions(matcher: TermMatcher, text: str) -> list[Mention]:
    return [Mention(name, start, end) for name, start, end in matcher.matches(text)]


@dataclass(frozen=True)
class EntityKinds:
    """The words a question uses for each entity type ("algorithms" -> Method)."""

    words: Mapping[str, str]

    @cached_property
    def _matcher(self) -> TermMatcher:
        return TermMatcher(self.words)

    def first(self, text: str) -> Mention | None:
        """The earliest kind word in ``text`` (matchable form), its type as the name."""
        found = self.all(text)
        return found[0] if found else None

    def all(self, text: str) -> list[Mention]:
        return _mentions(self._matcher, text)


def load_entity_kinds(path: Path | None = None) -> EntityKinds | None:
    """``config/entity_questions.yaml`` (default: in the config directory); None without one, so a configuration
    that predates the entity graph routes as before."""
    path = path or config_dir() / "entity_questions.yaml"
    if not path.is_file():
        return None
    data = read_yaml_mapping(path, "'types: {tagger type: [question words]}'")
    if unknown := sorted(set(data.data) - {"types"}):
        raise EntityQuestionsError(f"{data.where(unknown[0])}: unknown key {unknown[0]!r}; the file holds 'types'")
    types = data.data.get("types")
    if not isinstance(types, dict):
        raise EntityQuestionsError(f"{data.where('types')}: 'types' must map tagger types to lists of question words")
    words: dict[str, str] = {}
    for kind, phrases in types.items():
        if kind not in TYPES:
            raise EntityQuestionsError(f"{data.where('types', kind)}: {kind!r} is no tagger type; known: {TYPES}")
        if not isinstance(phrases, list) or not all(isinstance(p, str) and p.strip() for p in phrases):
            raise EntityQuestionsError(f"{data.where('types', kind)}: {kind} must list question words as text")
        for phrase in (p.strip() for p in phrases):
            if words.setdefault(phrase, kind) != kind:
                raise EntityQuestionsError(f"{data.where('types', kind)}: {phrase!r} is also a word of {words[phrase]}")
    return EntityKinds(words)


NAMES_CYPHER = (
    "MATCH (:Query {key: $query})-[:FOUND]->(:Article)-[h:HAS_ENTITY]->(e:Entity) WHERE h.query = $query "
    "RETURN DISTINCT e.entity_id AS entity_id, e.name AS name"
)


@dataclass(frozen=True)
class EntityNames:
    """The partition's entity names and their ids (generic ones are never loaded), to find a question's entities
    without a model: a question is short, and only names the graph holds can lead anywhere."""

    ids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of_partition(cls, graph: GraphStore, query: str) -> EntityNames:
        """The names partition ``query`` holds; none where the graph has no entity load (an older graph)."""
        try:
            rows = graph.query(NAMES_CYPHER, {"query": query})
        except GraphStoreError:
            return cls()
        return cls.of_rows(zip(rows.get("entity_id", []), rows.get("name", []), strict=True))

    @classmethod
    def of_rows(cls, rows: Iterable[tuple[str, str]]) -> EntityNames:
        """From ``(entity id, name)`` rows."""
        ids: dict[str, list[str]] = {}
        for key, name in rows:
            if name:
                ids.setdefault(str(name), []).append(str(key))
        return cls({name: tuple(sorted(found)) for name, found in ids.items()})

    @cached_property
    def _matcher(self) -> TermMatcher:
        return TermMatcher({name: name for name in self.ids})

    def __bool__(self) -> bool:
        return bool(self.ids)

    def found(self, text: str) -> list[Mention]:
        """The names mentioned in ``text`` (matchable form), longest first where two start at one place."""
        return _mentions(self._matcher, text) if self.ids else []


@dataclass(frozen=True)
class EntityQuestion:
    """What an entity question asks: the type, the question's words for it, the named entities the works must
    mention (each: any of its ids) or must not, the phrases whose names leave the answer, and the protocol's
    terms the works must be linked to."""

    type: str
    kind: str
    topics: tuple[tuple[str, ...], ...] = ()
    topic_names: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    excluded_names: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    #: The protocol's terms the question names besides its kind (label -> canonical terms): filters on the works.
    terms: Terms = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "kind": self.kind,
            "topics": list(self.topic_names),
            "excluded_topics": list(self.excluded_names),
            "dropped_phrases": list(self.dropped),
        }


def _qualifies(mention: Mention, kind: Mention, types: Iterable[str], text: str) -> bool:
    """Whether ``mention``, written right before the kind's word, narrows the kind ("machine learning methods")
    rather than naming a subject of the works ("stroke models")."""
    adjacent = mention.end <= kind.start and not text[mention.end : kind.start].strip(" -")
    return adjacent and not any(t in SUBJECT_TYPES and t != kind.name for t in types)


def excluded_phrases(negated: str, kind_words: Iterable[str] = ()) -> list[str]:
    """The runs of content words in negated clauses ("excluding studies of mortality" -> "mortality"), which a
    name containing them leaves the answer for."""
    joining = _JOINING | {word.casefold() for phrase in kind_words for word in _WORD.findall(phrase)}
    runs, current = [], []
    for word in [*_WORD.findall(negated.casefold()), ""]:
        if word and word not in joining:
            current.append(word)
        elif current:
            runs.append(" ".join(current))
            current = []
    return list(dict.fromkeys(runs))


def contains_phrase(name: str, phrase: str) -> bool:
    """Whether ``phrase``'s words occur in ``name`` in a row ("mortality" in "all-cause mortality")."""
    words, wanted = _WORD.findall(name.casefold()), phrase.split()
    return any(words[i : i + len(wanted)] == wanted for i in range(len(words) - len(wanted) + 1))


def dropped_names(names: Iterable[str], phrases: Sequence[str]) -> set[str]:
    """The names an exclusion removes: those containing an excluded phrase."""
    return {name for name in names if any(contains_phrase(name, phrase) for phrase in phrases)}


def _review_terms(text: str, matchers: Mapping[str, QuestionMatcher]) -> list[tuple[str, list[str], Mention]]:
    """The protocol's terms in ``text``: (label, the canonical terms it stands for, where)."""
    return [
        (label, list(matcher.broader.get(term, [term])), Mention(term, start, end))
        for label, matcher in matchers.items()
        for term, start, end in matcher.terms.matches(text)
    ]


def entity_question(
    question: str, kinds: EntityKinds, names: EntityNames, matchers: Mapping[str, QuestionMatcher] | None = None
) -> EntityQuestion | None:
    """The type ``question`` asks for and its topics and exclusions (see the module doc); None: it names no kind.

    A phrase the protocol's ``matchers`` know is a filter on the protocol's term rather than an entity topic: the
    review's dictionaries and broader terms ("heart disease" for every cardiac outcome) say what the reviewer
    means by it, where the entity graph only has the name as written.
    """
    text = matchable(question)
    kind = kinds.first(text)
    if kind is None:
        return None
    kept, negated = split_negated(text)
    said = kinds.all(text)

    def types(mention: Mention) -> list[str]:
        return [i.partition(":")[0] for i in names.ids[mention.name]]

    narrowing = [m for m in names.found(kept) for k in said if _qualifies(m, k, types(m), text)]
    asked = [*said, *narrowing]
    reviewed = [(label, terms, m) for label, terms, m in _review_terms(kept, matchers or {})
                if not any(m.overlaps(a) or _qualifies(m, a, (), text) for a in asked)]  # fmt: skip
    topics = [
        m
        for m in names.found(kept)
        if not any(m.overlaps(a) for a in asked)
        and not any(m.overlaps(r) for _, _, r in reviewed)
        and m.name not in kinds.words
    ]
    terms: dict[str, list[str]] = {}
    for label, found, _ in reviewed:
        terms[label] = list(dict.fromkeys([*terms.get(label, []), *found]))
    others = [m for m in names.found(negated) if kind.name not in types(m)]
    return EntityQuestion(
        type=kind.name,
        kind=text[kind.start : kind.end],
        topics=tuple(names.ids[m.name] for m in topics),
        topic_names=tuple(dict.fromkeys(m.name for m in topics)),
        excluded=tuple(i for m in others for i in names.ids[m.name]),
        excluded_names=tuple(dict.fromkeys(m.name for m in others)),
        dropped=tuple(excluded_phrases(negated, kinds.words)) if negated else (),
        terms=terms,
    )


def entity_filters(filters: Filters, asked: EntityQuestion, names: EntityNames) -> Filters:
    """The protocol's terms that filter an entity question's works: those it names outside its kind and qualifiers,
    and those it excludes that are no entity of the asked type (an excluded method leaves the list of methods,
    not its works)."""
    excluded = {
        label: kept
        for label, terms in filters.excluded.items()
        if (kept := [t for t in terms if entity_id(asked.type, t) not in names.ids.get(t.casefold(), ())])
    }
    return Filters(asked.terms, excluded, filters.everything_found)


def entity_plan(schema: GraphSchema, query: str, asked: EntityQuestion, filters: Filters) -> CypherPlan:
    """Rows ``(name, article)``: each entity of the asked type in each counted work, the works limited to those
    mentioning every topic, none excluded, and meeting the protocol's terms (``entity_filters``)."""
    parameters: dict[str, Any] = {"query": query, "type": asked.type}
    where = ["h.query = $query", "e.type = $type"]
    for n, ids in enumerate(asked.topics):
        parameters[f"t{n}"] = list(ids)
        where.append(
            f"EXISTS {{ MATCH (a)-[r{n}:HAS_ENTITY]->(t{n}:Entity) WHERE r{n}.query = $query "
            f"AND t{n}.entity_id IN $t{n} }}"
        )
    if asked.excluded:
        parameters["excluded"] = list(asked.excluded)
        where.append(
            "NOT EXISTS { MATCH (a)-[x:HAS_ENTITY]->(u:Entity) WHERE x.query = $query AND u.entity_id IN $excluded }"
        )
    where += term_conditions(schema, filters.required, parameters, excluded=filters.excluded)
    return CypherPlan(
        f"{filters.articles}-[h:HAS_ENTITY]->(e:Entity) WHERE {' AND '.join(where)} "
        "RETURN e.name AS name, a.key AS article",
        parameters,
    )
