"""Scopus Search API parsing, from entries in the API's own JSON shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hysem_assets.core.records import CORE_COLUMNS
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.scopus_json import SearchPage, parse_entry, parse_search_page

COMPLETE_ENTRY: dict[str, Any] = {
    "@_fa": "true",
    "link": [
        {"@_fa": "true", "@ref": "self", "@href": "https://api.elsevier.com/content/abstract/scopus_id/85081234567"},
        {
            "@_fa": "true",
            "@ref": "scopus",
            "@href": "https://www.scopus.com/inward/record.uri?partnerID=HzOxMe3b&scp=85081234567",
        },
    ],
    "prism:url": "https://api.elsevier.com/content/abstract/scopus_id/85081234567",
    "dc:identifier": "SCOPUS_ID:85081234567",
    "eid": "2-s2.0-85081234567",
    "dc:title": "Soil  carbon under agroforestry:\na meta-analysis",
    "dc:creator": "Müller J.",
    "prism:publicationName": "Agriculture, Ecosystems and Environment",
    "prism:issn": "01678809",
    "prism:volume": "295",
    "prism:issueIdentifier": "3",
    "prism:pageRange": "106-118",
    "prism:coverDate": "2020-06-01",
    "prism:coverDisplayDate": "1 June 2020",
    "prism:doi": "10.1016/J.AGEE.2020.106899",
    "pii": "S0167880920300840",
    "dc:description": "Agroforestry stores carbon. We pooled 120 studies. © 2020 Elsevier B.V. All rights reserved.",
    "citedby-count": "42",
    "affiliation": [
        {
            "@_fa": "true",
            "affilname": "Universität Göttingen",
            "affiliation-city": "Göttingen",
            "affiliation-country": "Germany",
        }
    ],
    "pubmed-id": "32145678",
    "prism:aggregationType": "Journal",
    "subtype": "re",
    "subtypeDescription": "Review",
    "author-count": {"@limit": "100", "@total": "3", "$": "3"},
    "author": [
        {
            "@_fa": "true",
            "@seq": "1",
            "authid": "57190000001",
            "authname": "Müller J.",
            "surname": "Müller",
            "given-name": "Jürgen",
            "initials": "J.",
        },
        {
            "@_fa": "true",
            "@seq": "2",
            "authid": "57190000002",
            "authname": "van der Berg A.",
            "surname": "van der Berg",
            "given-name": None,
            "initials": "A.",
        },
        {
            "@_fa": "true",
            "@seq": "3",
            "authid": "57190000003",
            "authname": "Okafor C.N.",
            "surname": None,
            "given-name": None,
            "initials": None,
        },
    ],
    "authkeywords": "Agroforestry | Soil organic carbon | Meta-analysis",
    "article-number": "106899",
    "source-id": "16411",
    "openaccess": "0",
    "openaccessFlag": False,
}

STANDARD_ENTRY: dict[str, Any] = {
    "@_fa": "true",
    "prism:url": "https://api.elsevier.com/content/abstract/scopus_id/85100000002",
    "dc:identifier": "SCOPUS_ID:85100000002",
    "eid": "2-s2.0-85100000002",
    "dc:title": "Erratum to: Soil carbon under agroforestry",
    "dc:creator": "Okafor C.N.",
    "prism:publicationName": "Nature Sustainability",
    "prism:eIssn": "23989629",
    "prism:volume": "4",
    "prism:pageRange": None,
    "prism:coverDate": "2021-01-15",
    "prism:doi": "10.1038/s41893-021-00001-x",
    "citedby-count": "0",
    "prism:aggregationType": "Journal",
    "subtype": "er",
    "subtypeDescription": "Erratum",
    "article-number": "e12",
    "source-id": "21100000000",
    "openaccess": "1",
    "openaccessFlag": True,
}


def search_body(entries: list[dict[str, Any]], total: int, start: int = 0) -> bytes:
    return json.dumps(
        {
            "search-results": {
                "opensearch:totalResults": str(total),
                "opensearch:startIndex": str(start),
                "opensearch:itemsPerPage": str(len(entries)),
                "opensearch:Query": {
                    "@role": "request",
                    "@searchTerms": "TITLE-ABS-KEY(agroforestry)",
                    "@startPage": str(start),
                },
                "link": [
                    {
                        "@_fa": "true",
                        "@ref": "self",
                        "@type": "application/json",
                        "@href": "https://api.elsevier.com/content/search/scopus?start=0&count=25",
                    }
                ],
                "entry": entries,
            }
        }
    ).encode()


def test_complete_view_entry() -> None:
    record = parse_entry(COMPLETE_ENTRY)

    assert tuple(record) == CORE_COLUMNS
    assert (record["source"], record["source_id"]) == ("scopus", "2-s2.0-85081234567")
    assert record["doi"] == "10.1016/j.agee.2020.106899"
    assert record["title"] == "Soil carbon under agroforestry: a meta-analysis"
    assert record["abstract"] == "Agroforestry stores carbon. We pooled 120 studies."
    assert record["authors"] == ["Müller, Jürgen", "van der Berg, A.", "Okafor, C.N."]
    assert record["first_author"] == "Müller"
    assert record["year"] == 2020
    assert record["journal"] == "Agriculture, Ecosystems and Environment"
    assert (record["volume"], record["issue"], record["pages"]) == ("295", "3", "106-118")
    assert (record["item_type"], record["pmid"]) == ("review", "32145678")
    assert (record["language"], record["oa_url"], record["openalex_id"]) == (None, None, None)
    assert json.loads(record["raw"]) == COMPLETE_ENTRY


def test_standard_view_entry_falls_back_to_creator_and_article_number() -> None:
    record = parse_entry(STANDARD_ENTRY)

    assert record["authors"] == ["Okafor, C.N."] and record["first_author"] == "Okafor"
    assert record["abstract"] is None
    assert record["pages"] == "e12"
    assert (record["item_type"], record["year"], record["issue"]) == ("erratum", 2021, None)


def test_identifier_fallback_and_language() -> None:
    entry = {**STANDARD_ENTRY, "language": {"@xml:lang": "ger"}}
    del entry["eid"]

    record = parse_entry(entry)

    assert record["source_id"] == "SCOPUS_ID:85100000002"
    assert record["language"] == "ger"


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("Results hold. © 2019 The Authors", "Results hold."),
        ("Results hold. Copyright © 2019 John Wiley & Sons, Ltd.", "Results hold."),
        ("Results hold.© 2021, The Author(s), under exclusive licence to Springer.", "Results hold."),
        ("Conditions (a), (b) and (c) were compared.", "Conditions (a), (b) and (c) were compared."),
        ("© 2020 Elsevier Ltd. All rights reserved.", None),
    ],
)
def test_trailing_copyright_notice_is_dropped(description: str, expected: str | None) -> None:
    assert parse_entry({**STANDARD_ENTRY, "dc:description": description})["abstract"] == expected


def test_search_page() -> None:
    page = parse_search_page(
        search_body([COMPLETE_ENTRY, STANDARD_ENTRY], total=1234, start=25), where="search start=25"
    )

    assert isinstance(page, SearchPage)
    assert (page.total, page.start, page.items_per_page, page.failures) == (1234, 25, 2, [])
    assert [record["source_id"] for record in page.records] == [
        "2-s2.0-85081234567",
        "2-s2.0-85100000002",
    ]


def test_empty_result_set() -> None:
    body = search_body([{"@_fa": "true", "error": "Result set was empty"}], total=0)

    page = parse_search_page(body, where="search start=0")

    assert (page.records, page.total, page.failures) == ([], 0, [])


def test_one_broken_entry_costs_only_itself() -> None:
    broken = {**STANDARD_ENTRY, "eid": None, "dc:identifier": None}
    bad_authors = {**COMPLETE_ENTRY, "eid": "2-s2.0-1", "author": "not a list of objects"}

    page = parse_search_page(search_body([broken, COMPLETE_ENTRY, bad_authors], total=3), where="search start=0")

    assert [record["source_id"] for record in page.records] == ["2-s2.0-85081234567"]
    assert page.failures[0] == "entry #1: the entry has neither eid nor dc:identifier"
    assert page.failures[1].startswith("2-s2.0-1: ")


def test_service_error_body_carries_the_api_message() -> None:
    body = json.dumps(
        {"service-error": {"status": {"statusCode": "INVALID_INPUT", "statusText": "Error translating query"}}}
    ).encode()

    with pytest.raises(SourceFormatError) as caught:
        parse_search_page(body, where="search start=0")

    message = str(caught.value)
    assert message.startswith("Scopus response to search start=0: the API returned an error:")
    assert "INVALID_INPUT; Error translating query" in message
    assert "API key" in message


def test_error_response_body_carries_the_api_message() -> None:
    body = json.dumps(
        {"error-response": {"error-code": "TOO_MANY_REQUESTS", "error-message": "Quota Exceeded"}}
    ).encode()

    with pytest.raises(SourceFormatError, match="TOO_MANY_REQUESTS; Quota Exceeded"):
        parse_search_page(body, where="search start=50")


def test_invalid_json() -> None:
    with pytest.raises(SourceFormatError, match="search start=75: the body is not valid JSON"):
        parse_search_page(search_body([COMPLETE_ENTRY], total=1)[:-40], where="search start=75")


def test_html_instead_of_json() -> None:
    html = b"<!DOCTYPE html><html><body><h1>Access denied</h1></body></html>"
    with pytest.raises(SourceFormatError, match="HTML page instead of JSON; check the base URL"):
        parse_search_page(html, where="search start=0")


def test_body_without_search_results() -> None:
    with pytest.raises(SourceFormatError, match="no 'search-results' object"):
        parse_search_page(b'{"abstracts-retrieval-response": {}}', where="search start=0")


def test_non_numeric_total() -> None:
    body = json.loads(search_body([], total=0))
    body["search-results"]["opensearch:totalResults"] = "many"

    with pytest.raises(SourceFormatError, match="opensearch:totalResults is 'many', not a number"):
        parse_search_page(json.dumps(body).encode(), where="search start=0")
