from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hysem_assets.knowledge.schema import SchemaError, load_schema
from hysem_assets_tests.knowledge.partition import SCHEMA_PATH


def write_variant(tmp_path: Path, change: dict) -> Path:
    data = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    for dotted, value in change.items():
        *parents, last = dotted.split(".")
        target = data
        for name in parents:
            target = target[name]
        target[last] = value
    path = tmp_path / "kg_schema.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_the_project_schema_is_valid() -> None:
    schema = load_schema(SCHEMA_PATH)
    assert schema.entity_fields()["ml_methods_used"] == ("MLMethod", "USES_ML_METHOD")
    assert ("MENTIONS", "Chunk", "Region") in schema.relationship_pairs()
    assert schema.key("Article") == "key"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"nodes.MLMethod": {"key": "name}) DETACH DELETE (x"}}, "not a plain identifier"),
        ({"nodes.Article.properties.title": "TEXT"}, "STRING"),
        ({"relationships.USES_ML_METHOD": {"from": "Article", "to": "Method"}}, "undeclared label Method"),
        ({"fields.ml_methods_used": {"entity": "MLMethod"}}, "either entity and relationship, or property"),
        ({"fields.study_type": {"property": "design"}}, "Article has no property design"),
        ({"relationships.MENTIONS": {"from": "Chunk", "to": "Pollutant"}}, "MENTIONS must list [A-Za-z]+ among"),
        ({"relationships.INCLUDES": {"from": "Article", "to": "Query"}}, "INCLUDES from Query to Article"),
        ({"nodes.Chunk.properties.chunk_id": "STRING"}, "must not be listed again"),
    ],
)
def test_invalid_schemas_are_refused_with_the_reason(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        load_schema(write_variant(tmp_path, change))


def test_a_missing_schema_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="does not exist"):
        load_schema(tmp_path / "nope.yaml")
