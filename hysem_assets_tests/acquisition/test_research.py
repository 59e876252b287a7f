"""A living review's re-search: which days each source is asked about, and how its records are merged."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from hysem_assets.acquisition.research import LastSearch, entry_window, merge_found, parse_as_of
from hysem_assets.settings.queries import EntryWindow, QuerySpec
from hysem_assets.sources import openalex, pubmed, scopus
from hysem_assets.sources.base import Endpoint

SPEC = QuerySpec(slug="q", query="statin dementia", schedule="weekly", date_from=dt.date(2015, 1, 1))
MONDAY = dt.date(2026, 1, 12)


def last(**changes: object) -> LastSearch:
    values = {"searched_through": dt.date(2026, 1, 5), "search_key": SPEC.search_key("pubmed"), "complete": True}
    return LastSearch(**{**values, **changes})


def test_a_scheduled_query_asks_for_what_was_added_since_its_last_complete_search() -> None:
    assert entry_window(SPEC, "pubmed", last(), "auto", MONDAY) == EntryWindow(dt.date(2026, 1, 5), MONDAY)
    assert entry_window(SPEC, "pubmed", last(), "full", MONDAY) is None
    unscheduled = SPEC.model_copy(update={"schedule": None})
    assert entry_window(unscheduled, "pubmed", last(), "auto", MONDAY) is None
    assert entry_window(unscheduled, "pubmed", last(), "new", MONDAY) is not None


@pytest.mark.parametrize(
    "previous",
    [None, last(complete=False), last(searched_through=None), last(search_key="another query")],
    ids=["first search", "partial", "no day recorded", "query changed"],
)
def test_everything_is_searched_again_when_the_last_search_cannot_be_built_on(previous: LastSearch | None) -> None:
    assert entry_window(SPEC, "pubmed", previous, "new", MONDAY) is None


def test_a_changed_cap_or_date_range_is_another_search() -> None:
    assert SPEC.search_key("pubmed") != SPEC.model_copy(update={"max_records": 5}).search_key("pubmed")
    assert SPEC.search_key("pubmed") != SPEC.model_copy(update={"date_to": dt.date(2020, 1, 1)}).search_key("pubmed")


def test_found_records_replace_their_old_versions_and_new_ones_are_appended() -> None:
    held = pd.DataFrame({"source_id": ["1", "2"], "title": ["one", "two"]})
    found = pd.DataFrame({"source_id": ["2", "3"], "title": ["two, corrected", "three"]})
    merged = merge_found(held, found)
    assert merged.to_dict("list") == {"source_id": ["1", "2", "3"], "title": ["one", "two, corrected", "three"]}
    assert merge_found(held, found.iloc[:0]).equals(held)


def test_as_of_is_a_day_or_today() -> None:
    assert parse_as_of("2026-01-12") == MONDAY
    assert parse_as_of("") == dt.datetime.now(dt.UTC).date()
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        parse_as_of("next monday")


def test_each_source_is_asked_for_the_window_in_its_own_syntax() -> None:
    endpoint = Endpoint("x", "http://x", 1.0, 1, 100)
    window = EntryWindow(dt.date(2026, 1, 5), MONDAY)
    params = pubmed.search_params(SPEC, endpoint, window)
    assert (params["datetype"], params["mindate"], params["maxdate"]) == ("edat", "2026/01/05", "2026/01/12")
    assert params["term"] == '(statin dementia) AND ("2015/01/01"[dp] : "3000/12/31"[dp])'
    assert pubmed.search_params(SPEC, endpoint)["datetype"] == "pdat"
    filters = openalex.search_params(SPEC, endpoint, window)["filter"].split(",")
    assert filters == ["from_publication_date:2015-01-01", "from_created_date:2026-01-05", "to_created_date:2026-01-12"]
    assert scopus.search_query(SPEC, window) == (
        "(statin dementia) AND ORIG-LOAD-DATE AFT 20260104 AND ORIG-LOAD-DATE BEF 20260113 AND PUBYEAR > 2014"
    )
