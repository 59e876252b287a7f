"""Crossref enrichment parsing, on real API bodies where they exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hysem_assets.sources.crossref_json import enrichment, jats_to_text, parse_work_response, retraction_targets
from hysem_assets.sources.errors import SourceFormatError


def crossref(realdata: Path, name: str) -> bytes:
    return (realdata / "crossref_habanero" / name).read_bytes()


def test_real_work_with_a_correction_is_not_a_retraction(realdata: Path):
    message = parse_work_response(crossref(realdata, "test_works_mixed_ids_warn__0.json"), where="work")
    values = enrichment(message)
    assert values["doi"] == "10.1371/journal.pone.0033693"
    assert values["item_type"] == "journal-article" and values["is_published"] is True
    assert values["cited_by_count"] == 72
    assert values["license"] == "http://creativecommons.org/licenses/by/4.0/"
    assert values["is_retracted"] is None  # its updated-by is a correction
    assert retraction_targets(message) == set()


def test_real_jats_abstract_becomes_plain_text(realdata: Path):
    items = json.loads(crossref(realdata, "test_cursor__0.json"))["message"]["items"]
    item = next(i for i in items if i["DOI"] == "10.59350/7mtwq-q3661")
    assert jats_to_text(item["abstract"]) == (
        "In addition to this Swing-based screenshot of JChemPaint , here's a SWT widget in action (lower right corner):"
    )


@pytest.mark.parametrize(
    "name", ["test_works_query_filters_not_allowed_with_dois__0.json", "test_cursor_fails_cursor_value__0.json"]
)
def test_real_error_bodies_raise_with_the_api_message(realdata: Path, name: str):
    with pytest.raises(SourceFormatError, match="Crossref response to work x"):
        parse_work_response(crossref(realdata, name), where="work x")


def test_structured_jats_sections_become_labelled_paragraphs():
    jats = (
        "<jats:title>Abstract</jats:title><jats:sec><jats:title>Background</jats:title>"
        "<jats:p>PM<jats:sub>2.5</jats:sub> &amp; ozone.</jats:p></jats:sec>"
        "<jats:sec><jats:title>Methods</jats:title><jats:p>DLNM.</jats:p></jats:sec>"
    )
    assert jats_to_text(jats) == "Background: PM2.5 & ozone.\n\nMethods: DLNM."
    assert jats_to_text("") is None


def test_retraction_notice_and_retracted_work():
    notice = {
        "DOI": "10.5555/N.1",
        "type": "journal-article",
        "update-to": [{"DOI": "10.5555/T.1", "type": "retraction"}, {"DOI": "10.5555/c", "type": "correction"}],
    }
    assert retraction_targets(notice) == {"10.5555/t.1"}
    target = {
        "DOI": "10.5555/T.1",
        "type": "journal-article",
        "updated-by": [{"DOI": "10.5555/N.1", "type": "retraction"}],
    }
    assert enrichment(target)["is_retracted"] is True
    assert (
        enrichment(notice)["notice_of"] == "erratum:doi:10.5555/c; retraction:doi:10.5555/t.1"
    )  # what it corrects and retracts
    assert enrichment(target)["notice_of"] is None
    assert enrichment({"DOI": "10.1101/x", "type": "posted-content"})["is_published"] is False
