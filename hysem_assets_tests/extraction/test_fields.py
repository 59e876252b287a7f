"""Fields of the sample protocol: the schema servers get and the model that validates answers."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from hysem_assets.settings.fields import FieldSpec, record_model, response_schema
from hysem_assets.settings.protocols import load_protocol

FIELDS = load_protocol("pollution-cardio-ml").extraction_fields()


def objects(schema: Any) -> list[dict]:
    """Every object schema nested anywhere in ``schema``."""
    if isinstance(schema, dict):
        found = [schema] if schema.get("type") == "object" else []
        return found + [o for value in schema.values() for o in objects(value)]
    if isinstance(schema, list):
        return [o for item in schema for o in objects(item)]
    return []


def test_the_configured_fields_and_their_types():
    assert {spec.name: spec.type for spec in FIELDS} == {
        "study_type": "text",
        "ml_methods_used": "list",
        "pollutant_terms": "list",
        "health_outcome": "list",
        "geography": "list",
        "sample_size": "structured",
        "metrics": "structured",
    }


def test_schema_is_strict_mode_compatible():
    schema = response_schema(FIELDS)
    assert schema["title"] == "ExtractedFields" and "$ref" not in str(schema) and "$defs" not in schema
    for obj in objects(schema):
        assert obj["additionalProperties"] is False and obj["required"] == list(obj["properties"])
    assert schema["properties"]["sample_size"]["type"] == ["integer", "null"]
    assert schema["properties"]["metrics"]["items"]["properties"]["value"]["type"] == "number"


def test_model_accepts_empty_answers_and_rejects_wrong_types():
    model = record_model(FIELDS)
    assert model.model_validate({"ml_methods_used": None}).model_dump()["ml_methods_used"] == []
    with pytest.raises(ValidationError, match="sample_size"):
        model.model_validate({"sample_size": "about a thousand"})
    with pytest.raises(ValidationError, match="metrics.0.value"):
        model.model_validate({"metrics": [{"name": "AUC"}]})


def test_a_field_of_the_wrong_shape_is_named_in_the_error():
    with pytest.raises(ValidationError, match="apply to structured fields"):
        FieldSpec.model_validate({"name": "sample_size", "type": "list", "value": "integer", "description": "n"})
