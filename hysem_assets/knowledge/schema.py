"""The knowledge-graph schema (``config/kg_schema.yaml``), validated before any store sees it.

Labels, relationship types and property names end up inside Cypher text, because no
database takes them as parameters. So they come only from this file, each one must be a
plain identifier, and values never do: values always travel as query parameters.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hysem_assets.environment import config_dir

PropertyType = Literal["STRING", "INT64", "DOUBLE", "BOOLEAN", "STRING[]"]

_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
#: Properties every relationship carries: the partition that owns it and the load that wrote it.
RELATIONSHIP_PROPERTIES = ("query", "load")
#: The part of the graph the builder always writes.
SKELETON_NODES = ("Query", "Article", "Chunk")
SKELETON_RELATIONSHIPS = {"INCLUDES": ("Query", "Article"), "HAS_CHUNK": ("Article", "Chunk")}
MENTIONS = "MENTIONS"


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

    @model_validator(mode="after")
    def _one_form(self) -> FieldSpec:
        if (self.entity is None) != (self.relationship is None) or (self.entity is None) == (self.property is None):
            raise ValueError("give either entity and relationship, or property")
        return self


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

    def relationship_pairs(self) -> list[tuple[str, str, str]]:
        """(type, from label, to label) for every declared pair."""
        return [(t, spec.source, target) for t, spec in self.relationships.items() for target in spec.targets]


def load_schema(path: Path | None = None) -> GraphSchema:
    """Read and validate the schema; errors name the file and the problem."""
    path = path or config_dir() / "kg_schema.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return GraphSchema.model_validate(data)
    except FileNotFoundError as exc:
        raise SchemaError(f"Knowledge-graph schema {path} does not exist") from exc
    except (yaml.YAMLError, ValidationError) as exc:
        raise SchemaError(f"Knowledge-graph schema {path} is invalid: {exc}") from exc
