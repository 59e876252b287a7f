"""The fields to extract, read from ``config/fields.yaml``, and the models and schema built from them.

One definition feeds three consumers: the JSON schema sent to servers for constrained
decoding, the pydantic model that validates what comes back, and the prompt's field
explanations. Changing a field is a YAML edit, never a code change.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model, model_validator

from hysem_assets.environment import config_dir

FieldKind = Literal["list", "text", "structured"]
ValueType = Literal["integer", "number", "string"]
ExtractiveMethod = Literal["dictionary", "sentence", "count", "metric_values"]

#: Column names of an extraction row that fields must not take.
RESERVED_NAMES = frozenset({"doc_id", "status", "error", "chunks", "prompt_tokens", "completion_tokens"})
SCHEMA_TITLE = "ExtractedFields"
_PYTHON_TYPES: dict[ValueType, type] = {"integer": int, "number": float, "string": str}


class FieldsError(ValueError):
    """A fields file that is missing or does not describe fields correctly."""


class PropertySpec(BaseModel):
    """One property of a structured record (e.g. a metric's ``value``)."""

    model_config = ConfigDict(extra="forbid")

    value: ValueType
    description: str = ""
    #: A record without it is invalid output (and is retried), rather than kept half empty.
    required: bool = False


class FieldSpec(BaseModel):
    """One field: its name, type, the explanation a model reads, and how the extractive backend fills it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: FieldKind
    description: str
    value: ValueType | None = None
    properties: dict[str, PropertySpec] | None = None
    many: bool = False
    extractive: ExtractiveMethod | None = None

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
        return self

    @property
    def is_records(self) -> bool:
        return self.properties is not None and self.many


def load_fields(path: Path | None = None) -> list[FieldSpec]:
    """Fields in file order from ``path`` (default ``<config dir>/fields.yaml``)."""
    path = path or config_dir() / "fields.yaml"
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return [
            FieldSpec.model_validate({"name": name, **spec}) for name, spec in (document.get("fields") or {}).items()
        ]
    except FileNotFoundError as exc:
        raise FieldsError(f"Fields file {path} does not exist; set HYSEM_CONFIG_DIR or create it.") from exc
    except (yaml.YAMLError, ValidationError, TypeError, AttributeError) as exc:
        raise FieldsError(f"Fields file {path} is invalid: {exc}") from exc


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
        return str | None, None
    if spec.value is not None:
        return _PYTHON_TYPES[spec.value] | None, None
    record = _record_type(spec)
    if spec.many:
        return Annotated[list[record], BeforeValidator(_none_as_empty)], []  # type: ignore[valid-type]
    return record | None, None


def record_model(fields: Sequence[FieldSpec]) -> type[BaseModel]:
    """The pydantic model one model answer (and the merged record) must satisfy.

    Unknown keys are ignored and missing ones default to empty, so only a value of the
    wrong type (or a record missing a required property) makes an answer invalid.
    """
    definitions = {spec.name: _python_type(spec) for spec in fields}
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
        return _value_schema("string", spec.description, nullable=True)
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
