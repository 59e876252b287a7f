"""The graph schema: the skeleton plus the labels, relationships and properties the protocols declare."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hysem_assets.settings.protocols import load_protocol, load_protocols
from hysem_assets.stores.graph_schema import SchemaError, default_words, graph_schema


def test_the_shipped_protocols_make_one_valid_schema() -> None:
    schema = graph_schema(load_protocols(), load_protocol("pollution-cardio-ml"))
    assert schema.entity_fields()["ml_methods_used"] == ("MLMethod", "USES_ML_METHOD")
    assert ("MENTIONS", "Chunk", "Region") in schema.relationship_pairs()
    assert ("MENTIONS", "Chunk", "Outcome") in schema.relationship_pairs()  # the generic protocol's label
    assert schema.key("Article") == "key"
    assert schema.nodes["Article"].properties["sample_size"] == "INT64"


def test_a_partition_maps_only_its_own_protocols_fields() -> None:
    protocols = load_protocols()
    generic = graph_schema(protocols, protocols["generic"])
    assert set(generic.entity_fields()) == {"intervention_or_exposure", "outcomes"}
    assert generic.nodes["Article"].properties["follow_up_years"] == "DOUBLE"
    assert "study_type" in generic.nodes["Article"].properties  # declared by the other protocol for the store...
    assert "study_type" not in generic.loaded_properties("Article")  # ...but left alone by this partition
    assert "study_design" in generic.loaded_properties("Article")


def _protocol(folder: Path, name: str, fields: dict) -> None:
    (folder / "protocols" / f"{name}.yaml").write_text(yaml.safe_dump({"fields": fields}), encoding="utf-8")


def test_findings_join_the_entities_of_the_fields_their_arms_are_tagged_into() -> None:
    protocols = load_protocols()
    generic = graph_schema(protocols, protocols["generic"])
    # generic's comparator field is no graph entity: comparators are named as interventions are
    assert generic.finding_links() == {
        "INTERVENTION_TERM": "Exposure",
        "COMPARATOR_TERM": "Exposure",
        "OUTCOME_TERM": "Outcome",
    }
    assert graph_schema(protocols, protocols["pollution-cardio-ml"]).finding_links() == {}
    assert ("REPORTS_FINDING", "Article", "Finding") in generic.relationship_pairs()
    assert ("OUTCOME_TERM", "Finding", "Outcome") in generic.relationship_pairs()
    assert generic.nodes["Finding"].properties["direction"] == "STRING"


def test_a_protocol_may_not_take_a_findings_relationship(config: Path) -> None:
    _protocol(
        config,
        "other",
        {"o": {"type": "terms", "description": "O.", "graph": {"node": "O", "relationship": "OUTCOME_TERM"}}},
    )
    with pytest.raises(SchemaError, match="O/OUTCOME_TERM is part of the built-in skeleton"):
        graph_schema(load_protocols())


def test_two_protocols_that_give_one_name_two_meanings_are_refused(config: Path) -> None:
    _protocol(
        config,
        "other",
        {"drugs": {"type": "terms", "description": "Drugs.", "graph": {"node": "Drug", "relationship": "MEASURES"}}},
    )
    with pytest.raises(
        SchemaError, match="relationship MEASURES is declared differently by .*generic.yaml.*other.yaml"
    ):
        graph_schema(load_protocols())


def test_a_property_with_two_types_is_refused(config: Path) -> None:
    _protocol(config, "other", {"n": {"type": "text", "description": "Size.", "graph": {"property": "sample_size"}}})
    with pytest.raises(SchemaError, match="Article.sample_size is declared differently"):
        graph_schema(load_protocols())


def test_a_protocol_may_not_redefine_the_skeleton(config: Path) -> None:
    _protocol(config, "other", {"t": {"type": "text", "description": "A title.", "graph": {"property": "title"}}})
    with pytest.raises(SchemaError, match="Article.title is a built-in property"):
        graph_schema(load_protocols())


def test_question_words_default_to_the_field_and_label_names() -> None:
    assert default_words("adverse_events", "AdverseEvent") == ["adverse event", "adverse events", "event", "events"]
