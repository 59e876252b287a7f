"""Review protocols: the shipped ones, and a bad one failing with its file and field before any run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from hysem_assets.cli import SAMPLE_QUERY
from hysem_assets.review.evidence import STUDY_COLUMNS
from hysem_assets.settings.catalog import review_for
from hysem_assets.settings.fields import response_schema
from hysem_assets.settings.protocols import (
    DEFAULT_PROTOCOL,
    MAX_FIELDS,
    RESERVED_FIELD_NAMES,
    ProtocolError,
    StaleProtocolError,
    load_protocol,
    load_protocols,
)

GENERIC_FIELDS = [
    "study_design",
    "population",
    "sample_size",
    "intervention_or_exposure",
    "comparator",
    "outcomes",
    "effect_estimates",
    "setting",
    "follow_up",
]


def test_the_generic_protocol_has_exactly_the_generic_fields() -> None:
    protocol = load_protocol(DEFAULT_PROTOCOL)
    assert [field.name for field in protocol.fields] == GENERIC_FIELDS
    assert protocol.field("study_design").type == "category"
    assert protocol.field("sample_size").number_kind == "count"
    assert protocol.field("effect_estimates").records
    assert {f.name: f.method for f in protocol.fields if f.method} == {
        "population": "tagger:participants",
        "intervention_or_exposure": "tagger:interventions",
        "comparator": "tagger:comparators",
        "outcomes": "tagger:outcomes",
    }


def test_servers_get_the_protocol_as_a_json_schema() -> None:
    schema = response_schema(load_protocol("generic").extraction_fields())
    assert schema["required"] == GENERIC_FIELDS
    design = schema["properties"]["study_design"]
    assert "cohort study" in design["enum"] and None in design["enum"]
    estimate = schema["properties"]["effect_estimates"]["items"]
    assert estimate["required"] == ["measure", "value", "unit", "ci_lower", "ci_upper", "p_value", "context"]
    assert schema["properties"]["sample_size"]["type"] == ["integer", "null"]


def test_the_sample_query_names_its_protocol_and_a_query_without_one_gets_generic(config: Path) -> None:
    assert review_for("air-pollution-cardio-ml").protocol.name == "pollution-cardio-ml"
    text = (config / "queries.yaml").read_text(encoding="utf-8")
    (config / "queries.yaml").write_text(text + "  - slug: plain\n    query: anything\n", encoding="utf-8")
    assert review_for("plain").protocol.name == "generic"


def _write(config: Path, fields: dict, **extra: object) -> Path:
    path = config / "protocols" / "review.yaml"
    path.write_text(yaml.safe_dump({"fields": fields, **extra}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"design": {"type": "choice", "description": "d"}}, r"field 'design': type: Input should be 'category'"),
        (
            {"drugs": {"type": "terms", "description": "d", "graph": {"relationship": "USES"}}},
            r"field 'drugs':.*`node`",
        ),
        ({"drugs": {"type": "terms", "description": "d", "dictionary": "nope"}}, r"field 'drugs': dictionary 'nope'"),
        ({"design": {"type": "category", "description": "d"}}, r"field 'design':.*`values`"),
        ({"n": {"type": "number", "kind": "weight", "description": "d"}}, r"field 'n': kind"),
        ({"n": {"type": "text", "unit": "kg", "description": "d"}}, r"field 'n':.*number fields only"),
        ({"evidence": {"type": "text", "description": "d"}}, r"field 'evidence':.*reserved"),
        ({"year": {"type": "number", "description": "d"}}, r"field 'year':.*reserved.*rename"),
        ({"title": {"type": "text", "description": "d"}}, r"field 'title':.*reserved"),
        ({"outcomes_evidence": {"type": "text", "description": "d"}}, r"field 'outcomes_evidence':.*reserved"),
        ({"x": {"type": "text", "description": "d", "colour": "red"}}, r"field 'x': colour: Extra inputs"),
        ({"x": {"type": "text", "description": "d", "graph": {"property": "a b"}}}, r"field 'x':.*plain identifier"),
        ({"x": {"type": "terms", "description": "d", "method": "tagger:drugs"}}, r"field 'x':.*tagger:participants"),
        ({"x": {"type": "terms", "description": "d", "method": "crf:outcomes"}}, r"field 'x':.*`method` must be"),
        ({"n": {"type": "number", "description": "d", "method": "tagger:outcomes"}}, r"field 'n':.*terms and text"),
    ],
)
def test_a_bad_protocol_names_the_file_and_field(config: Path, fields: dict, message: str) -> None:
    path = _write(config, fields)
    with pytest.raises(ProtocolError, match=f"{path}.*{message}"):
        load_protocol("review")


def test_a_protocol_naming_a_missing_report_or_no_fields_is_refused(config: Path) -> None:
    _write(config, {"x": {"type": "text", "description": "d"}}, reports=["absent"])
    with pytest.raises(ProtocolError, match="report 'absent' does not exist"):
        load_protocol("review")
    (config / "protocols" / "review.yaml").write_text("- a list\n", encoding="utf-8")
    with pytest.raises(ProtocolError, match=r"review.yaml:1: the top level is a list; it must be a review protocol"):
        load_protocol("review")
    (config / "protocols" / "review.yaml").write_text("title: no fields\n", encoding="utf-8")
    with pytest.raises(ProtocolError, match="must be a mapping with `fields:`"):
        load_protocol("review")
    with pytest.raises(ProtocolError, match=r"No protocol 'absent'.*available: \['generic'"):
        load_protocol("absent")


def test_a_protocol_with_more_fields_than_the_limit_is_refused(config: Path) -> None:
    fields = {f"field_{i}": {"type": "text", "description": "d"} for i in range(MAX_FIELDS + 1)}
    path = _write(config, fields)
    with pytest.raises(ProtocolError, match=f"{path}.*{MAX_FIELDS + 1} fields; a protocol declares at most"):
        load_protocol("review")
    _write(config, dict(list(fields.items())[:MAX_FIELDS]))
    assert len(load_protocol("review").fields) == MAX_FIELDS


def test_the_evidence_tables_columns_are_reserved() -> None:
    assert set(STUDY_COLUMNS) <= RESERVED_FIELD_NAMES


def test_an_unreadable_protocol_blocks_only_the_queries_that_use_it(config: Path, caplog) -> None:
    (config / "protocols" / "latin1.yaml").write_bytes(b"title: Caf\xe9 review\nfields: {}\n")
    assert "generic" in load_protocols()  # the others still load, the bad one with a warning naming it
    assert "latin1" not in load_protocols() and "latin1.yaml" in caplog.text
    assert review_for(SAMPLE_QUERY).protocol.name == "pollution-cardio-ml"
    with pytest.raises(ProtocolError, match="latin1.yaml"):
        load_protocol("latin1")


def test_rows_of_another_protocol_are_stale() -> None:
    generic, sample = load_protocol("generic"), load_protocol("pollution-cardio-ml")
    rows = pd.DataFrame({"cluster_id": ["c1"], "protocol": [sample.fingerprint]})
    sample.check_extracted(rows, "q")
    with pytest.raises(StaleProtocolError, match=r"extracted with pollution-cardio-ml@.*now uses generic@.*--select"):
        generic.check_extracted(rows, "q")
    generic.check_extracted(rows.iloc[0:0], "q")  # nothing extracted: nothing stale
