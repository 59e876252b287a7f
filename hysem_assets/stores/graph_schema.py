"""The knowledge-graph schema: a fixed skeleton plus what the review protocols declare.

Query, Article, Chunk, Finding and Entity are the skeleton every load builds; entity labels, their
relationships from Article, and the Article properties that hold categories and numbers
come from the protocols (one store serves every partition, so its schema is the union of
all protocols; each partition maps only its own protocol's fields). A Finding joins the
entities of the fields its protocol fills with the tagger's interventions, comparators and
outcomes, so results are counted over the same terms as the works that study them. An Entity
is what the entity model tags in a work's texts (``entities`` asset), whatever the protocol.
Relationships may carry properties of their own beside ``query`` and ``load``; those listed in
``merge_on`` tell apart parallel relationships of one pair (one per article and label). Labels,
relationship types and property names end up inside Cypher text, because no database takes
them as parameters. So they come only from this schema, each one must be a plain identifier,
and values never do: values always travel as query parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hysem_assets.settings.protocols import Protocol

PropertyType = Literal["STRING", "INT64", "DOUBLE", "BOOLEAN", "STRING[]"]

_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
#: Properties every relationship carries: the partition that owns it and the load that wrote it.
RELATIONSHIP_PROPERTIES = ("query", "load")
#: The part of the graph the builder always writes.
SKELETON_NODES = ("Query", "Article", "Chunk", "Finding", "Entity")
SKELETON_RELATIONSHIPS = {
    "FOUND": ("Query", "Article"),
    "INCLUDES": ("Query", "Article"),
    "HAS_CHUNK": ("Article", "Chunk"),
    "REPORTS_FINDING": ("Article", "Finding"),
    "HAS_ENTITY": ("Article", "Entity"),
    "MENTIONS_ENTITY": ("Chunk", "Entity"),
    "RELATED": ("Entity", "Entity"),
    "CO_OCCURS": ("Entity", "Entity"),
}
#: Properties of the skeleton's relationships beside ``query`` and ``load``, and those a MERGE matches on.
SKELETON_RELATIONSHIP_PROPERTIES: dict[str, dict[str, Any]] = {
    "HAS_ENTITY": {"properties": {"mentions": "INT64"}},
    "RELATED": {
        "properties": {"label": "STRING", "sentence": "STRING", "probability": "DOUBLE", "article": "STRING"},
        "merge_on": ["article", "label"],
    },
    "CO_OCCURS": {"properties": {"weight": "INT64"}},
}
MENTIONS = "MENTIONS"
#: Relationship from a Finding to the term of each arm, by the tagger role whose field holds those terms.
#: (ladybug's names are case-insensitive, so none may spell a label: "OUTCOME" would be the label Outcome.)
FINDING_TERMS = {"interventions": "INTERVENTION_TERM", "comparators": "COMPARATOR_TERM", "outcomes": "OUTCOME_TERM"}
#: Relationship types a protocol may not declare.
_RESERVED_RELATIONSHIPS = {*SKELETON_RELATIONSHIPS, MENTIONS, *FINDING_TERMS.values()}


class SchemaError(ValueError):
    """The schema file is missing, malformed, or refers to something it does not declare."""


def _identifier(name: str) -> str:
    if not _IDENTIFIER.match(name):
        raise ValueError(f"{name!r} is not a plain identifier (letters, digits, '_'; a letter first)")
    return name


class NodeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    properties: dict[str, PropertyType] = Field(default_factory=dict)

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        return _identifier(value)

    @field_validator("properties")
    @classmethod
    def _properties(cls, value: dict[str, PropertyType]) -> dict[str, PropertyType]:
        for name in value:
            _identifier(name)
        return value


class RelationshipSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: str = Field(alias="from")
    targets: list[str] = Field(alias="to")
    properties: dict[str, PropertyType] = Field(default_factory=dict)
    #: Properties that, with ``query``, identify one relationship of a pair (the rest are updated in place).
    merge_on: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _own_properties(self) -> RelationshipSpec:
        for name in self.properties:
            _identifier(name)
            if name in RELATIONSHIP_PROPERTIES:
                raise ValueError(f"{name} is a property every relationship carries")
        for name in self.merge_on:
            if name not in self.properties:
                raise ValueError(f"merge_on names {name}, which is not among the properties")
        return self

    @field_validator("targets", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class FieldSpec(BaseModel):
    """An extracted field becomes entity nodes linked from Article, or one Article property."""

    model_config = ConfigDict(extra="forbid")

    entity: str | None = None
    relationship: str | None = None
    property: str | None = None
    #: Words a question uses for the entities ("which outcomes", "how many exposures").
    words: list[str] = Field(default_factory=list)
    #: The tagger role that fills an entity field (``method: tagger:<role>``): findings join its entities.
    role: str | None = None
    #: A number property: what it measures (count, duration, quantity...) and its unit, so questions
    #: with comparisons ("more than 10,000 participants", "at least 18 months") find it and convert units.
    kind: str | None = None
    unit: str | None = None
    #: A property of categories (a category field, or a text field a dictionary normalises): its allowed
    #: values, where the protocol lists them. Such a property has ``words``, so its distribution can be asked for.
    values: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_form(self) -> FieldSpec:
        if (self.entity is None) != (self.relationship is None) or (self.entity is None) == (self.property is None):
            raise ValueError("give either entity and relationship, or property")
        if (self.kind or self.unit) and self.property is None:
            raise ValueError("kind and unit describe a number property, not entities")
        if self.role and self.entity is None:
            raise ValueError("a role joins findings to entities; a property has none")
        return self

    def is_number(self) -> bool:
        return self.property is not None and self.kind is not None

    def is_categories(self) -> bool:
        return self.property is not None and self.kind is None and bool(self.words)


class GraphSchema(BaseModel):
    """Labels with their key and typed properties, relationship types, and field mappings."""

    model_config = ConfigDict(extra="forbid")

    nodes: dict[str, NodeSpec]
    relationships: dict[str, RelationshipSpec]
    #: Article property -> corpus column.
    article: dict[str, str] = Field(default_factory=dict)
    fields: dict[str, FieldSpec] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> GraphSchema:
        for name in (*self.nodes, *self.relationships):
            _identifier(name)
        for label, spec in self.nodes.items():
            if spec.key in spec.properties:
                raise ValueError(f"{label}: the key {spec.key} must not be listed again under properties")
        for label in SKELETON_NODES:
            if label not in self.nodes:
                raise ValueError(f"node label {label} is required")
        for rel_type, (source, target) in SKELETON_RELATIONSHIPS.items():
            spec = self.relationships.get(rel_type)
            if spec is None or spec.source != source or spec.targets != [target]:
                raise ValueError(f"relationship {rel_type} from {source} to {target} is required")
        for rel_type, spec in self.relationships.items():
            for label in (spec.source, *spec.targets):
                if label not in self.nodes:
                    raise ValueError(f"relationship {rel_type} refers to undeclared label {label}")
        article = self.nodes["Article"].properties
        for prop in self.article:
            if prop not in article:
                raise ValueError(f"article property {prop} is not declared on Article")
        mentionable = set(self.relationships[MENTIONS].targets) if MENTIONS in self.relationships else set()
        for field, spec in self.fields.items():
            if spec.property is not None:
                if spec.property not in article:
                    raise ValueError(f"field {field}: Article has no property {spec.property}")
                continue
            rel = self.relationships.get(spec.relationship or "")
            if rel is None or rel.source != "Article" or spec.entity not in rel.targets:
                raise ValueError(
                    f"field {field}: relationship {spec.relationship} must go from Article to {spec.entity}"
                )
            if spec.entity not in mentionable:
                raise ValueError(f"field {field}: {MENTIONS} must list {spec.entity} among its targets")
        for rel_type, label in self.finding_links().items():
            rel = self.relationships.get(rel_type)
            if rel is None or rel.source != "Finding" or label not in rel.targets:
                raise ValueError(f"relationship {rel_type} must go from Finding to {label}")
        return self

    def key(self, label: str) -> str:
        return self.nodes[label].key

    def entity_fields(self) -> dict[str, tuple[str, str]]:
        """Extracted field -> (entity label, relationship type from Article)."""
        return {
            name: (spec.entity, spec.relationship)
            for name, spec in self.fields.items()
            if spec.entity is not None and spec.relationship is not None
        }

    def finding_links(self) -> dict[str, str]:
        """Relationship type from Finding -> the entity label its arm's term joins, for this partition's protocol."""
        return finding_links(self.fields)

    def loaded_properties(self, label: str) -> dict[str, PropertyType]:
        """Properties one partition writes: for Article, its corpus columns and its protocol's own fields.

        Properties of other protocols are left as they are, so a work two reviews share keeps both.
        """
        declared = self.nodes[label].properties
        if label != "Article":
            return declared
        own = set(self.article) | {spec.property for spec in self.fields.values() if spec.property}
        return {name: kind for name, kind in declared.items() if name in own}

    def relationship_pairs(self) -> list[tuple[str, str, str]]:
        """(type, from label, to label) for every declared pair."""
        return [(t, spec.source, target) for t, spec in self.relationships.items() for target in spec.targets]


#: The skeleton: what every partition loads whatever its protocol.
SKELETON: dict[str, Any] = {
    "nodes": {
        "Query": {"key": "key", "properties": {"title": "STRING"}},
        "Article": {
            "key": "key",  # the DOI, or the cluster id when the record has none
            "properties": {
                "doi": "STRING",
                "cluster_id": "STRING",
                "title": "STRING",
                "year": "INT64",
                "journal": "STRING",
                "authors": "STRING[]",
                "in_text_citation": "STRING",
                "full_citation": "STRING",
                "zotero_key": "STRING",
                "dominant_topic": "INT64",
            },
        },
        "Chunk": {
            "key": "chunk_id",
            "properties": {"cluster_id": "STRING", "chunk_index": "INT64", "section": "STRING", "text": "STRING"},
        },
        "Entity": {"key": "entity_id", "properties": {"name": "STRING", "type": "STRING"}},  # id: "type:name"
        "Finding": {
            "key": "key",  # the Article's key and the finding's id
            # named as the findings table's columns (hysem_assets/findings/schema.py)
            "properties": {
                "finding_id": "STRING",
                "direction": "STRING",
                "confidence": "DOUBLE",
                "intervention": "STRING",
                "comparator": "STRING",
                "outcome": "STRING",
                "intervention_term": "STRING",
                "comparator_term": "STRING",
                "outcome_term": "STRING",
                "evidence": "STRING",
                "source": "STRING",
                "section": "STRING",
                "preferred": "BOOLEAN",
                "measure": "STRING",
                "estimate": "DOUBLE",
                "ci_low": "DOUBLE",
                "ci_high": "DOUBLE",
                "p_value": "DOUBLE",
                "study_kind": "STRING",
            },
        },
    },
    "relationships": {
        name: {"from": source, "to": target, **SKELETON_RELATIONSHIP_PROPERTIES.get(name, {})}
        for name, (source, target) in SKELETON_RELATIONSHIPS.items()
    },
}


def finding_links(fields: Mapping[str, FieldSpec]) -> dict[str, str]:
    """Relationship type from Finding -> entity label, from the roles of entity fields. Comparators join the
    interventions' label when no field of their own is a graph entity: a comparator is another arm (placebo,
    usual care, a second drug), so it is named as interventions are."""
    by_role = {spec.role: spec.entity for spec in fields.values() if spec.role and spec.entity}
    if "interventions" in by_role:
        by_role.setdefault("comparators", by_role["interventions"])
    return {rel_type: by_role[role] for role, rel_type in FINDING_TERMS.items() if role in by_role}


def default_words(field_name: str, label: str) -> list[str]:
    """Question words for a field that names none: its name's last word and the label, singular and plural."""
    words = {field_name.split("_")[-1].casefold(), re.sub(r"(?<=[a-z])(?=[A-Z])", " ", label).casefold()}
    return sorted({form for word in words for form in (word.removesuffix("s"), word.removesuffix("s") + "s")})


#: Last words of a field name too general to stand for the field in a question ("types of models").
_GENERAL_WORDS = {"type", "kind", "name", "value", "status", "category", "class", "group", "form"}


def category_words(field_name: str) -> list[str]:
    """Question words for a field of categories ("study_design"): its name ("study design", "study designs")
    and, unless too general, its last word ("designs")."""
    phrase = field_name.replace("_", " ").casefold()
    words = {phrase} if phrase.split()[-1] in _GENERAL_WORDS else {phrase, phrase.split()[-1]}
    return sorted({form for word in words for form in (word.removesuffix("s"), word.removesuffix("s") + "s")})


def _field_specs(protocol: Protocol) -> dict[str, dict[str, Any]]:
    specs: dict[str, dict[str, Any]] = {}
    for field in protocol.fields:
        link = field.graph
        if link is None:
            continue
        if link.property:
            specs[field.name] = {"property": link.property}
            if field.type == "number":
                specs[field.name] |= {"kind": field.number_kind, "unit": field.unit}
            elif field.type == "category" or (field.type == "text" and field.dictionary):
                specs[field.name] |= {"words": category_words(field.name), "values": list(field.values or {})}
        else:
            assert link.node is not None
            relationship = link.relationship or "HAS_" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", link.node).upper()
            words = link.words or default_words(field.name, link.node)
            specs[field.name] = {"entity": link.node, "relationship": relationship, "words": words}
            if field.method:
                specs[field.name]["role"] = field.method.partition(":")[2]
    return specs


def graph_schema(protocols: Mapping[str, Protocol], protocol: Protocol | None = None) -> GraphSchema:
    """The store's schema: the skeleton, every protocol's labels and properties, ``protocol``'s field mappings.

    Two protocols may share a label, relationship or property only with the same meaning
    (same endpoints, same type); anything else is an error naming both.
    """
    nodes = {label: {**spec, "properties": dict(spec["properties"])} for label, spec in SKELETON["nodes"].items()}
    relationships = {name: dict(spec) for name, spec in SKELETON["relationships"].items()}
    article = nodes["Article"]["properties"]
    owners: dict[str, str] = {}
    mentionable: list[str] = []
    arms: dict[str, set[str]] = {rel_type: set() for rel_type in FINDING_TERMS.values()}

    def claim(what: str, value: object, owner: str) -> None:
        key = f"{what}={value!r}"
        previous = owners.setdefault(what, f"{owner}:{key}")
        if previous.split(":", 1)[1] != key:
            raise SchemaError(
                f"{what} is declared differently by {previous.split(':', 1)[0]} and {owner}; "
                "give one of them another name"
            )

    for name, each in sorted(protocols.items()):
        specs = _field_specs(each)
        for rel_type, label in finding_links({n: FieldSpec.model_validate(s) for n, s in specs.items()}).items():
            arms[rel_type].add(label)
        for field_name, spec in specs.items():
            owner = f"config/protocols/{name}.yaml field {field_name!r}"
            if "property" in spec:
                kind = each.field(field_name).property_type()
                if spec["property"] in SKELETON["nodes"]["Article"]["properties"]:
                    raise SchemaError(f"{owner}: Article.{spec['property']} is a built-in property; rename it")
                claim(f"Article.{spec['property']}", kind, owner)
                article[spec["property"]] = kind
                continue
            label, relationship = spec["entity"], spec["relationship"]
            if label in SKELETON["nodes"] or relationship in _RESERVED_RELATIONSHIPS:
                raise SchemaError(f"{owner}: {label}/{relationship} is part of the built-in skeleton; rename it")
            claim(f"relationship {relationship}", label, owner)
            nodes.setdefault(label, {"key": "name"})
            relationships[relationship] = {"from": "Article", "to": label}
            mentionable.append(label)
    if mentionable:
        relationships[MENTIONS] = {"from": "Chunk", "to": sorted(set(mentionable))}
    relationships |= {
        rel_type: {"from": "Finding", "to": sorted(labels)} for rel_type, labels in arms.items() if labels
    }
    data = {
        **{"nodes": nodes, "relationships": relationships},
        "article": {prop: prop for prop in SKELETON["nodes"]["Article"]["properties"]},
        "fields": _field_specs(protocol) if protocol is not None else {},
    }
    try:
        return GraphSchema.model_validate(data)
    except ValidationError as exc:
        where = f"protocol {protocol.name}" if protocol is not None else "the protocols"
        raise SchemaError(f"The graph schema of {where} is invalid: {exc}") from exc
