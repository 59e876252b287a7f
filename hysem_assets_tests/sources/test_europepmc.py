"""Europe PMC search pages parsed into records: real responses (lite, core, idlist, no results) and broken ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hysem_assets.core.records import CORE_COLUMNS
from hysem_assets.settings.queries import EntryWindow, QuerySpec
from hysem_assets.sources.base import Endpoint
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.europepmc import search_params, search_query
from hysem_assets.sources.europepmc_json import parse_result, parse_search_page, plain_text, pmcid_of
from hysem_assets_tests.paths import REALDATA, needs_realdata

SEARCH = REALDATA / "europepmc" / "search"
SEARCH_FILES = sorted(SEARCH.glob("*.json")) if SEARCH.is_dir() else []


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@needs_realdata
def test_the_real_responses_are_all_there() -> None:
    names = {path.name for path in SEARCH_FILES}
    assert {"search_cancer.json", "search_cancer_core.json", "search_no_results.json"} <= names


@needs_realdata
@pytest.mark.parametrize("path", SEARCH_FILES, ids=lambda path: path.name)
def test_every_real_page_parses_into_one_record_per_result(path: Path) -> None:
    data = read(path)
    results = data["resultList"]["result"]
    page = parse_search_page(path.read_bytes(), where="page 1")
    assert page.hit_count == data["hitCount"]
    assert page.next_cursor == data.get("nextCursorMark")
    assert page.failures == []
    assert page.size == len(page.records) == len(results)
    for record, result in zip(page.records, results, strict=True):
        assert set(record) == set(CORE_COLUMNS)
        assert record["source"] == "europepmc"
        assert record["source_id"] == f"{result['source']}:{result['id']}"
        assert record["pmid"] == result.get("pmid")
        assert record["doi"] == (result["doi"].lower() if result.get("doi") else None)
        assert pmcid_of(record) == record["pmcid"] == result.get("pmcid")
        assert json.loads(record["raw"]) == result
    if results and "title" in results[0]:
        assert page.records[0]["title"] == results[0]["title"]


@needs_realdata
def test_no_results_is_an_empty_page() -> None:
    page = parse_search_page((SEARCH / "search_no_results.json").read_bytes(), where="page 1")
    assert (page.records, page.size, page.hit_count, page.next_cursor) == ([], 0, 0, None)


@needs_realdata
def test_a_core_result_fills_every_column_it_can() -> None:
    data = read(SEARCH / "search_cancer_core.json")
    first = data["resultList"]["result"][0]
    record = parse_search_page((SEARCH / "search_cancer_core.json").read_bytes(), "page 1").records[0]
    info = first["journalInfo"]
    people = first["authorList"]["author"]
    assert record["source_id"] == f"MED:{first['id']}" and record["pmid"] == first["pmid"]
    assert record["doi"] == first["doi"].lower()
    assert record["authors"] == [f"{a['lastName']}, {a['firstName']}" for a in people]
    assert record["first_author"] == people[0]["lastName"]
    assert record["year"] == int(first["pubYear"])
    assert record["journal"] == info["journal"]["title"]
    assert (record["volume"], record["issue"], record["pages"]) == (info["volume"], info["issue"], first["pageInfo"])
    assert record["language"] == first["language"]
    assert record["publication_types"] == "; ".join(first["pubTypeList"]["pubType"])
    assert record["item_type"] == "journal article"
    assert record["oa_url"] is None  # only a subscription DOI link


@needs_realdata
def test_core_abstracts_lose_their_markup_and_keep_their_sections() -> None:
    results = read(SEARCH / "search_cancer_core.json")["resultList"]["result"]
    result = next(r for r in results if "<h4>" in (r.get("abstractText") or ""))
    abstract = parse_result(result)["abstract"]
    assert "<" not in abstract.replace("p < ", "")  # "p < .001" is text, not a tag
    first_heading = result["abstractText"].split("<h4>")[1].split("</h4>")[0]
    assert abstract.startswith(f"{first_heading}: ")
    assert abstract.count("\n\n") == result["abstractText"].count("<h4>") - 1


@needs_realdata
def test_open_access_results_link_their_pdf_and_keep_their_pmcid() -> None:
    results = read(SEARCH / "search_cancer_core.json")["resultList"]["result"]
    result = next(r for r in results if r.get("isOpenAccess") == "Y")
    record = parse_result(result)
    pdfs = [
        link["url"]
        for link in result["fullTextUrlList"]["fullTextUrl"]
        if link["documentStyle"] == "pdf" and link["availabilityCode"] == "OA"
    ]
    assert record["oa_url"] == pdfs[0]
    assert pmcid_of(record) == pmcid_of(record["raw"]) == pmcid_of(result) == result["pmcid"]


@needs_realdata
def test_lite_results_fall_back_to_author_string_journal_title_and_pub_type() -> None:
    result = read(SEARCH / "search_cancer.json")["resultList"]["result"][0]
    record = parse_result(result)
    names = result["authorString"].rstrip(".").split(", ")
    assert record["authors"] == [", ".join(name.rsplit(" ", 1)) for name in names]
    assert record["journal"] == result["journalTitle"]
    assert record["volume"] == result["journalVolume"] and record["issue"] == result["issue"]
    assert record["publication_types"] == result["pubType"]
    assert record["abstract"] is None


def test_a_broken_result_is_rejected_with_a_reason_and_the_page_survives() -> None:
    page = {
        "hitCount": 3,
        "nextCursorMark": "AoE",
        "resultList": {
            "result": [
                {"id": "1", "source": "MED", "pmid": "1", "title": "Good", "pubYear": "2020"},
                {"source": "MED", "title": "No id"},
                {"id": "PPR9", "source": "PPR", "title": "Bad year", "pubYear": "99999"},
            ]
        },
    }
    parsed = parse_search_page(json.dumps(page).encode(), "page 1")
    assert [r["source_id"] for r in parsed.records] == ["MED:1"]
    assert parsed.size == 3 and len(parsed.failures) == 2
    assert parsed.failures[0].startswith("result #2") and parsed.failures[1].startswith("PPR9:")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html><body>Bad gateway</body></html>", "HTML page"),
        (b'{"hitCount": 1}', "no 'resultList.result'"),
        (b'{"hitCount": -1, "resultList": {"result": []}}', "not a record count"),
        (b'{"errCode": 400, "errMsg": "Syntax error"}', "Syntax error"),
        (b'{"resultList": {"result": []}, "nextCursorMark": 5}', "not text"),
        (b"", "empty"),
    ],
)
def test_a_malformed_page_is_a_source_format_error(body: bytes, problem: str) -> None:
    with pytest.raises(SourceFormatError, match=problem) as caught:
        parse_search_page(body, "search page 2")
    assert "Europe PMC response to search page 2" in str(caught.value)


def test_preprints_and_pmc_records_keep_their_own_ids() -> None:
    preprint = parse_result({"id": "PPR123", "source": "PPR", "title": "A preprint", "pubYear": "2024"})
    assert (preprint["source_id"], preprint["item_type"], preprint["pmid"]) == ("PPR:PPR123", "preprint", None)
    pmc = parse_result({"id": "PMC42", "source": "PMC", "title": "Only in PMC"})
    assert pmc["source_id"] == "PMC:PMC42" and pmcid_of(pmc) == pmc["pmcid"] == "PMC42"
    assert preprint["pmcid"] is None
    assert pmcid_of({"fullTextIdList": {"fullTextId": ["PMC7"]}}) == "PMC7"
    assert pmcid_of(None) is None and pmcid_of("not json") is None and pmcid_of({"id": "1"}) is None


def test_plain_text_strips_tags_but_not_comparisons() -> None:
    text = "<h4>Background</h4>H<sub>2</sub>O &amp; p\u2009<\u2009.05<h4>Results</h4><p>None.</p>"
    assert plain_text(text) == "Background: H2O & p < .05\n\nResults: None."


def test_dates_become_first_pdate_and_the_window_first_idate() -> None:
    spec = QuerySpec(slug="q", query="ozone AND TITLE:heart", date_from="2015-01-01", max_records=50)
    window = EntryWindow(since=spec.date_from.replace(year=2024), until=spec.date_from.replace(year=2024, month=3))
    assert search_query(spec) == "(ozone AND TITLE:heart) AND FIRST_PDATE:[2015-01-01 TO 3000-12-31]"
    assert search_query(spec, window) == (
        "(ozone AND TITLE:heart) AND FIRST_PDATE:[2015-01-01 TO 3000-12-31] AND FIRST_IDATE:[2024-01-01 TO 2024-03-01]"
    )
    assert search_query(QuerySpec(slug="q", query="ozone")) == "ozone"
    endpoint = Endpoint("europepmc", "http://x", 10, 2, 1000, mailto="me@example.org")
    params = search_params(spec, endpoint)
    assert params["pageSize"] == "50" and params["resultType"] == "core" and params["format"] == "json"
    assert params["email"] == "me@example.org"
