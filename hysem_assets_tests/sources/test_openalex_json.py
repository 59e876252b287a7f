"""OpenAlex works parsing, checked against real /works responses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hysem_assets.core.records import CORE_COLUMNS
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.openalex_json import WorksPage, parse_work, parse_works_page
from hysem_assets_tests.paths import REALDATA, needs_realdata

SINGLE_DIR = REALDATA / "openalex" / "openalex-python"
PAGES_DIR = REALDATA / "openalex" / "openalexPro"
PAGE_FILES = sorted(PAGES_DIR.glob("*.json"))


def load_work(name: str) -> dict:
    return json.loads((SINGLE_DIR / name).read_text(encoding="utf-8"))


def load_page(name: str) -> WorksPage:
    return parse_works_page((PAGES_DIR / name).read_bytes(), where=name)


# --- conformance: real single works ----------------------------------------------------


@needs_realdata
def test_current_schema_work() -> None:
    work = load_work("W2741809807.json")
    record = parse_work(work)

    assert tuple(record) == CORE_COLUMNS
    assert (record["source"], record["source_id"], record["openalex_id"]) == (
        "openalex",
        "W2741809807",
        "W2741809807",
    )
    assert record["doi"] == "10.7717/peerj.4375"
    assert record["title"] == (
        "The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles"
    )
    assert record["authors"][:3] == ["Piwowar, Heather", "Priem, Jason", "Larivière, Vincent"]
    assert record["authors"][-2:] == ["West, Jevin D.", "Haustein, Stefanie"]
    assert record["first_author"] == "Piwowar"
    assert (record["year"], record["journal"], record["volume"]) == (2018, "PeerJ", "6")
    assert (record["issue"], record["pages"]) == (None, "e4375")
    assert (record["item_type"], record["language"], record["pmid"]) == ("article", "en", "29456894")
    assert record["oa_url"] == "https://peerj.com/articles/4375.pdf"
    assert record["pmcid"] == "PMC5815332"  # ids.pmcid is a PMC article URL without the prefix
    assert json.loads(record["raw"]) == work


@needs_realdata
def test_inverted_index_abstract_is_rebuilt_in_word_order() -> None:
    abstract = parse_work(load_work("W2741809807.json"))["abstract"]

    # "OA" alone sits at ten positions, "articles" at seven; all must land in place
    assert abstract.startswith(
        "Despite growing interest in Open Access (OA) to scholarly literature, there is an "
        "unmet need for large-scale, up-to-date, and reproducible studies assessing the "
        "prevalence and characteristics of OA. We address this need using oaDOI"
    )
    assert "We estimate that at least 28% of the scholarly literature is OA (19M in total)" in abstract
    assert abstract.endswith("as a way to inform OA policy and practice.")
    assert len(abstract.split()) == 258


@needs_realdata
def test_older_schema_work_uses_host_venue() -> None:
    work = load_work("W-api-response.json")
    work_without_primary_location = {**work, "primary_location": None}
    record = parse_work(work_without_primary_location)

    assert record["source_id"] == "W2755950973"
    assert record["title"].startswith("GW170104: Observation of a 50-Solar-Mass Binary Black Hole")
    assert record["journal"] == "Physical Review Letters"
    assert record["authors"] == ["Abbott, B. P."] and record["first_author"] == "Abbott"
    assert (record["volume"], record["issue"], record["pages"]) == ("118", "22", "221101")
    assert record["doi"] == "10.1103/physrevlett.118.091101"
    assert record["abstract"].startswith("We present the observation of GW170104 a gravitational")
    assert record["pmid"] is None and record["language"] is None


# --- conformance: real /works pages ----------------------------------------------------


@needs_realdata
def test_the_real_pages_are_there() -> None:
    assert len(PAGE_FILES) >= 3


@needs_realdata
@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda path: path.name)
def test_every_real_page_parses_without_failures(path: Path) -> None:
    raw = json.loads(path.read_bytes())
    page = parse_works_page(path.read_bytes(), where=path.name)

    assert page.failures == []
    assert len(page.records) == len(raw["results"])
    assert page.count == raw["meta"]["count"]
    assert page.next_cursor == raw["meta"]["next_cursor"]
    for record, work in zip(page.records, raw["results"]):
        assert tuple(record) == CORE_COLUMNS
        assert "https://openalex.org/" + record["source_id"] == work["id"]
        assert record["item_type"] == work["type"]


@needs_realdata
def test_first_page_contents_and_cursor() -> None:
    page = load_page("json_chunk_1_results_page_1.json")

    assert (len(page.records), page.count) == (50, 50)
    assert page.next_cursor == "Ils4My4wLCAxMywgJ2h0dHBzOi8vb3BlbmFsZXgub3JnL1c0MjUwNjY3Njk4J10i"
    by_id = {record["source_id"]: record for record in page.records}

    editorial = by_id["W2149799184"]
    assert editorial["item_type"] == "editorial"
    assert editorial["abstract"].startswith("H uman impacts on the environment")
    assert (editorial["journal"], editorial["pages"], editorial["pmid"]) == ("Science", "2047", "11256386")
    assert editorial["oa_url"] is None

    particle = by_id["W2144516619"]
    assert particle["authors"] == ["von Schirnding, Yasmin"]
    assert particle["first_author"] == "von Schirnding"
    assert particle["oa_url"] == ("https://globalizationandhealth.biomedcentral.com/counter/pdf/10.1186/1744-8603-1-8")

    paratext = by_id["W1482164038"]
    assert paratext["item_type"] == "paratext"
    assert paratext["oa_url"] == "https://doi.org/10.1787/220188577008"  # landing page, no PDF

    no_abstract = by_id["W2041234663"]
    assert no_abstract["abstract"] is None
    assert no_abstract["pages"] == "133-144"
    assert no_abstract["doi"] == "10.1016/s0048-9697(99)00312-5"


@needs_realdata
def test_empty_final_page_ends_the_cursor_walk() -> None:
    page = load_page("json_chunk_1_results_page_2.json")

    assert (page.records, page.next_cursor, page.count, page.failures) == ([], None, 50, [])


@needs_realdata
def test_mixed_types_across_pages() -> None:
    types = {
        record["item_type"]
        for path in PAGE_FILES
        for record in parse_works_page(path.read_bytes(), where=path.name).records
    }

    assert {"article", "book", "editorial", "paratext", "preprint", "book-chapter"} <= types


@needs_realdata
def test_one_broken_work_costs_only_itself() -> None:
    raw = json.loads((PAGES_DIR / "json_chunk_2_results_page_1.json").read_bytes())
    broken_id = raw["results"][3]["id"]
    raw["results"][3]["abstract_inverted_index"] = {"word": ["not-a-position"]}
    raw["results"][7] = {"display_name": "a work without an id"}

    page = parse_works_page(json.dumps(raw).encode(), where="works page 2")

    assert len(page.records) == 48
    assert page.failures == [
        f"{broken_id}: abstract_inverted_index has a bad position 'not-a-position'",
        "result #8: the work has no id",
    ]


# --- hand-made works --------------------------------------------------------------------


def test_abstract_handles_null_empty_and_repeated_words() -> None:
    base = {"id": "https://openalex.org/W1"}

    assert parse_work({**base, "abstract_inverted_index": None})["abstract"] is None
    assert parse_work({**base, "abstract_inverted_index": {}})["abstract"] is None
    repeated = {"the": [0, 3], "cat": [1], "saw": [2], "dog.": [4]}
    assert parse_work({**base, "abstract_inverted_index": repeated})["abstract"] == ("the cat saw the dog.")


def test_minimal_work_falls_back_sensibly() -> None:
    record = parse_work(
        {
            "id": "https://openalex.org/W42",
            "display_name": "  A   title ",
            "ids": {"doi": "https://doi.org/10.5555/ABC", "pmid": "https://pubmed.ncbi.nlm.nih.gov/123"},
            "authorships": [
                {"author": {"display_name": None}, "raw_author_name": "Ludwig van der Berg"},
                {"author": {"display_name": "María José García"}, "raw_author_name": "M. J. García"},
            ],
            "publication_year": 2021,
            "primary_location": {"source": None},
            "open_access": {"oa_url": "https://repo.example/42.pdf"},
            "type": "preprint",
        }
    )

    assert record["title"] == "A title"
    assert (record["doi"], record["pmid"]) == ("10.5555/abc", "123")
    assert record["authors"] == ["van der Berg, Ludwig", "García, María José"]
    assert record["first_author"] == "van der Berg"
    assert (record["journal"], record["pages"], record["year"]) == (None, None, 2021)
    assert record["oa_url"] == "https://repo.example/42.pdf"
    assert record["item_type"] == "preprint"
    assert record["pmcid"] is None


@pytest.mark.parametrize(
    ("pmcid", "expected"),
    [
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/8398114", "PMC8398114"),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC8398114/", "PMC8398114"),
        ("pmc8398114", "PMC8398114"),
        ("8398114", "PMC8398114"),
        ("https://example.org/not-a-pmcid", None),
        ("", None),
        (None, None),
    ],
)
def test_pmcid_is_kept_as_the_pmc_id(pmcid, expected) -> None:
    record = parse_work({"id": "https://openalex.org/W42", "display_name": "A title", "ids": {"pmcid": pmcid}})

    assert record["pmcid"] == expected


# --- malformed bodies -------------------------------------------------------------------


def test_invalid_json_names_the_page() -> None:
    with pytest.raises(SourceFormatError) as caught:
        parse_works_page(b'{"meta": {"count": 3}, "results": [{"id": ', where="works page 4")

    message = str(caught.value)
    assert message.startswith("OpenAlex response to works page 4: the body is not valid JSON")
    assert "retry" in message


def test_html_instead_of_json() -> None:
    with pytest.raises(SourceFormatError, match="HTML page instead of JSON; check the base URL"):
        parse_works_page(b"<html><body>Service Unavailable</body></html>", where="works page 1")


def test_api_error_body_carries_the_api_message() -> None:
    body = json.dumps(
        {
            "error": "Invalid query parameters error.",
            "message": "cursor is not a valid parameter with page",
        }
    ).encode()

    with pytest.raises(SourceFormatError) as caught:
        parse_works_page(body, where="works page 1")

    assert "Invalid query parameters error.; cursor is not a valid parameter with page" in str(caught.value)


def test_body_without_results() -> None:
    with pytest.raises(SourceFormatError, match="works page 2: the body has no 'results' list"):
        parse_works_page(b'{"meta": {"count": 1}}', where="works page 2")


@pytest.mark.parametrize(
    ("year", "reason"),
    [
        (10**20, "publication_year 100000…(21 digits) is not a publication year (1500-2099)"),
        (1e20, "publication_year is 1e+20"),
        ("1e20", "invalid literal for int()"),
        (-44, "publication_year -44 is not a publication year"),
    ],
)
def test_an_absurd_year_rejects_that_work_alone(year, reason) -> None:
    body = {
        "meta": {"count": 2, "next_cursor": None},
        "results": [
            {"id": "https://openalex.org/W1", "publication_year": year},
            {"id": "W2", "publication_year": 2020},
        ],
    }

    page = parse_works_page(json.dumps(body).encode(), where="works page 1")

    assert [record["source_id"] for record in page.records] == ["W2"]
    assert len(page.failures) == 1 and page.failures[0].startswith("https://openalex.org/W1: ")
    assert reason in page.failures[0]


@pytest.mark.parametrize(
    ("meta", "problem"),
    [
        ([{"count": 1}], "'meta' is list, not an object"),
        ("x", "'meta' is str, not an object"),
        ({"count": "many"}, "meta.count is 'many', not a record count"),
        ({"count": 1.5}, "meta.count is 1.5, not a record count"),
        ({"count": True}, "meta.count is True, not a record count"),
        ({"count": 3, "next_cursor": 7}, "meta.next_cursor is 7, not text"),
    ],
)
def test_unreadable_paging_fields_reject_the_page_with_a_reason(meta, problem) -> None:
    body = {"meta": meta, "results": [{"id": "https://openalex.org/W1"}]}

    with pytest.raises(SourceFormatError, match=re.escape(problem)):
        parse_works_page(json.dumps(body).encode(), where="works page 3")
