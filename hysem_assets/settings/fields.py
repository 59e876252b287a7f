"""The shapes the extraction engine works with, and the models and schema built from them.

A review protocol (:mod:`hysem_assets.settings.protocols`) compiles each of its fields to one of
three shapes, and one definition feeds three consumers: the JSON schema sent to servers
for constrained decoding, the pydantic model that validates what comes back, and the
prompt's field explanations. Changing a field is a protocol edit, never a code change.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator

FieldKind = Literal["list", "text", "structured"]
ValueType = Literal["integer", "number", "string"]
#: The span tagger's roles a field can take (``method: tagger:<role>``), named here so a
#: protocol is checked without loading the tagger.
Role = Literal["participants", "interventions", "comparators", "outcomes"]
ROLES: tuple[Role, ...] = ("participants", "interventions", "comparators", "outcomes")

#: Column names of an extraction row that fields must not take.
RESERVED_NAMES = frozenset({"doc_id", "status", "error", "chunks", "prompt_tokens", "completion_tokens"})
SCHEMA_TITLE = "ExtractedFields"
_PYTHON_TYPES: dict[ValueType, type] = {"integer": int, "number": float, "string": str}


class PropertySpec(BaseModel):
    """One property of a structured record (e.g. a metric's ``value``)."""

    model_config = ConfigDict(extra="forbid")

    value: ValueType
    description: str = ""
    #: A record without it is invalid output (and is retried), rather than kept half empty.
    required: bool = False


class FieldSpec(BaseModel):
    """One field: its name, shape and the explanation a model reads; ``enum`` closes a text field's values."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: FieldKind
    description: str
    value: ValueType | None = None
    properties: dict[str, PropertySpec] | None = None
    many: bool = False
    enum: list[str] | None = None

    @model_validator(mode="after")
    def _shape_matches_type(self) -> FieldSpec:
        if self.name in RESERVED_NAMES:
            raise ValueError(f"field name {self.name!r} is reserved for extraction rows")
        if self.type == "structured":
            if (self.value is None) == (self.properties is None):
                raise ValueError("a structured field needs exactly one of `value` or `properties`")
            if self.many and self.properties is None:
                raise ValueError("`many` applies to records (`properties`), not to a single value")
        elif self.value is not None or self.properties is not None or self.many:
            raise ValueError(f"`value`, `properties` and `many` apply to structured fields, not {self.type}")
        if self.enum is not None and self.type != "text":
            raise ValueError("`enum` applies to text fields")
        return self

    @property
    def is_records(self) -> bool:
        return self.properties is not None and self.many


def _none_as_empty(value: Any) -> Any:
    return [] if value is None else value


def _record_type(spec: FieldSpec) -> type[BaseModel]:
    assert spec.properties is not None
    definitions: dict[str, Any] = {
        name: (_PYTHON_TYPES[prop.value], ...) if prop.required else (_PYTHON_TYPES[prop.value] | None, None)
        for name, prop in spec.properties.items()
    }
    model_name = "".join(part.capitalize() for part in spec.name.split("_")) + "Record"
    return create_model(model_name, __config__=ConfigDict(extra="ignore"), **definitions)


def _python_type(spec: FieldSpec) -> tuple[Any, Any]:
    """(annotation, default) of a field in the validating model: absent values are empty, not errors."""
    if spec.type == "list":
        return Annotated[list[str], BeforeValidator(_none_as_empty)], []
    if spec.type == "text":
        return (Literal[tuple(spec.enum)] if spec.enum else str) | None, None  # type: ignore[valid-type]
    if spec.value is not None:
        return _PYTHON_TYPES[spec.value] | None, None
    record = _record_type(spec)
    if spec.many:
        return Annotated[list[record], BeforeValidator(_none_as_empty)], []  # type: ignore[valid-type]
    return record | None, None


def record_model(fields: Sequence[FieldSpec]) -> type[BaseModel]:
    """The pydantic model one model answer (and the merged record) must satisfy.

    Unknown keys are ignored and missing ones default to empty, so only a value of the
    wrong type (or a record missing a required property) makes an answer invalid. Built
    once per set of fields: building a pydantic model costs more than reading an abstract.
    """
    return _record_model(tuple(spec.model_dump_json() for spec in fields))


@lru_cache(maxsize=64)
def _record_model(specs: tuple[str, ...]) -> type[BaseModel]:
    definitions = {spec.name: _python_type(spec) for spec in map(FieldSpec.model_validate_json, specs)}
    return create_model(SCHEMA_TITLE, __config__=ConfigDict(extra="ignore"), **definitions)


def _value_schema(value: ValueType, description: str, nullable: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": [value, "null"] if nullable else value}
    return schema | ({"description": description} if description else {})


def _object_schema(properties: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A closed object with every property required: what OpenAI-style ``strict`` mode demands."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _field_schema(spec: FieldSpec) -> dict[str, Any]:
    if spec.type == "list":
        return {"type": "array", "items": {"type": "string"}, "description": spec.description}
    if spec.type == "text":
        schema = _value_schema("string", spec.description, nullable=True)
        return schema | ({"enum": [*spec.enum, None]} if spec.enum else {})
    if spec.value is not None:
        return _value_schema(spec.value, spec.description, nullable=True)
    assert spec.properties is not None
    record = _object_schema(
        {
            name: _value_schema(prop.value, prop.description, nullable=not prop.required)
            for name, prop in spec.properties.items()
        }
    )
    if spec.many:
        return {"type": "array", "items": record, "description": spec.description}
    return {"anyOf": [record, {"type": "null"}], "description": spec.description}


def response_schema(fields: Sequence[FieldSpec]) -> dict[str, Any]:
    """The JSON schema of one answer, strict-mode compatible (closed objects, all keys required, no $refs)."""
    return {"title": SCHEMA_TITLE, **_object_schema({spec.name: _field_schema(spec) for spec in fields})}


def empty_record(fields: Sequence[FieldSpec]) -> dict[str, Any]:
    """The record before any chunk was read: empty lists and nulls."""
    return record_model(fields)().model_dump()
