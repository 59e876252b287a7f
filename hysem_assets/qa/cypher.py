"""Checking Cypher before it touches the graph: read-only, schema-grounded, parameterized.

Cypher written by a model (or a template) runs only if it passes every check here: one
statement, no clause or procedure that writes, no comments or string literals (values
from the question must travel as parameters), only labels, relationship types and
properties that the schema declares, every ``$parameter`` supplied, and the partition key
``$query`` used. The
store's read-only transaction is a second guard, not the only one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hysem_assets.stores.graph_schema import RELATIONSHIP_PROPERTIES, GraphSchema

_WRITES = re.compile(
    r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|DROP|FOREACH|CALL|LOAD|COPY|INSTALL|ATTACH|ALTER|IMPORT|EXPORT|USE)\b",
    re.IGNORECASE,
)
_STRING = re.compile(r"'|\"")
_COMMENT = re.compile(r"//|/\*")
_MAP_KEY = re.compile(r"([{,])\s*`?\w+`?\s*:")
_LABEL = re.compile(r":\s*`?([A-Za-z_]\w*)`?")
_ALTERNATIVE = re.compile(r"\|\s*:?\s*`?([A-Za-z_]\w*)`?")
_PARAMETER = re.compile(r"\$([A-Za-z_]\w*)")
_PROPERTY = re.compile(r"\b[A-Za-z_]\w*\s*\.\s*`?([A-Za-z_]\w*)`?")


class CypherRejected(ValueError):
    """Cypher that failed validation; the message says which rule it broke."""


@dataclass(frozen=True)
class CypherPlan:
    """A read query with its parameters; ``author`` is "template" or the model that wrote it."""

    cypher: str
    parameters: dict[str, Any] = field(default_factory=dict)
    author: str = "template"


def validate_cypher(plan: CypherPlan, schema: GraphSchema) -> None:
    """Raise :class:`CypherRejected` unless ``plan`` is safe to run (see the module doc)."""
    text = plan.cypher.strip().removesuffix(";")
    if not text:
        raise CypherRejected("empty query")
    if ";" in text:
        raise CypherRejected("more than one statement")
    if _COMMENT.search(text):
        raise CypherRejected("comments are not allowed")
    if _STRING.search(text):
        raise CypherRejected("string literals are not allowed: pass values from the question as $parameters")
    if write := _WRITES.search(text):
        raise CypherRejected(f"not read-only: {write.group(0).upper()} is not allowed")
    unmapped = _MAP_KEY.sub(r"\1", text)
    known = set(schema.nodes) | set(schema.relationships)
    names = set(_LABEL.findall(unmapped)) | set(_ALTERNATIVE.findall(unmapped))
    if unknown := sorted(names - known):
        raise CypherRejected(f"unknown labels or relationship types: {', '.join(unknown)}")
    declared = {name for spec in schema.nodes.values() for name in (spec.key, *spec.properties)}
    declared |= {name for spec in schema.relationships.values() for name in spec.properties}
    if unknown := sorted(set(_PROPERTY.findall(text)) - declared - set(RELATIONSHIP_PROPERTIES)):
        raise CypherRejected(f"unknown properties: {', '.join(unknown)}")
    used = set(_PARAMETER.findall(text))
    if "query" not in used:
        raise CypherRejected("the query must be scoped to the partition with $query")
    if missing := sorted(used - set(plan.parameters)):
        raise CypherRejected(f"parameters without values: {', '.join(missing)}")
