"""Merge rules, one field type at a time."""

from __future__ import annotations

from hysem_assets.extraction.merge import append_unique, merge_records, more_specific
from hysem_assets.settings.fields import empty_record
from hysem_assets.settings.protocols import load_protocol

FIELDS = load_protocol("pollution-cardio-ml").extraction_fields()


def test_lists_keep_first_seen_order_and_first_spelling_ignoring_case_and_spaces():
    assert append_unique(["Random forest", "PM2.5"], ["random  forest ", "NO2", "", "no2", " LASSO"]) == [
        "Random forest",
        "PM2.5",
        "NO2",
        "LASSO",
    ]


def test_text_keeps_the_value_with_more_distinct_words_and_the_first_on_ties():
    assert more_specific("cohort", "prospective cohort of adults") == "prospective cohort of adults"
    assert more_specific("prospective cohort of adults", "cohort study") == "prospective cohort of adults"
    assert more_specific("time-series", "case-crossover") == "time-series"
    assert more_specific(None, " panel study ") == "panel study" and more_specific("panel", None) == "panel"


def test_structured_values_keep_the_first_found_and_records_aggregate_uniquely():
    hr = {"name": "hazard ratio", "value": 1.09, "unit": None, "ci_low": 1.03, "ci_high": 1.16, "context": None}
    first = merge_records(FIELDS, empty_record(FIELDS), {"sample_size": None, "metrics": [hr]})
    second = merge_records(
        FIELDS, first, {"sample_size": 512, "metrics": [{**hr, "name": "Hazard Ratio"}, {**hr, "value": 1.2}]}
    )
    third = merge_records(FIELDS, second, {"sample_size": 48213, "metrics": []})
    assert (first["sample_size"], second["sample_size"], third["sample_size"]) == (None, 512, 512)
    assert third["metrics"] == [hr, {**hr, "value": 1.2}]
