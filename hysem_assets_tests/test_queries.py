from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from hysem_assets.settings.queries import QueryError, QuerySpec, append_query, get_query, load_queries, slugify
from hysem_assets.sources.registry import query_sources
from hysem_assets_tests.paths import PROJECT_ROOT


def test_bundled_queries_file_declares_the_sample_query():
    spec = get_query("air-pollution-cardio-ml", PROJECT_ROOT / "config" / "queries.yaml")
    assert spec.sources == ["pubmed", "openalex", "scopus"]
    assert spec.date_from == dt.date(2015, 1, 1)
    assert "[MeSH Terms]" in spec.text_for("pubmed") and "TITLE-ABS-KEY" in spec.text_for("scopus")


@pytest.mark.parametrize("slug", ["a,b", "a/b", "a...b", "Upper", "", "-lead"])
def test_slugs_that_cannot_be_partition_keys_are_rejected(slug):
    with pytest.raises(ValueError, match="slug"):
        QuerySpec(slug=slug, query="ozone")


def test_slugify_folds_accents_and_punctuation():
    assert slugify("Ozone & Heart Disease: Müller's review") == "ozone-heart-disease-muller-s-review"


def test_per_source_query_must_cover_every_source():
    with pytest.raises(ValueError, match="no query text for sources \\['scopus'\\]"):
        QuerySpec(slug="x", query={"pubmed": "a", "openalex": "b"}, sources=["pubmed", "openalex", "scopus"])


def test_append_keeps_comments_and_indentation(tmp_path: Path):
    path = tmp_path / "queries.yaml"
    path.write_text("# my searches\nqueries:\n    - slug: first\n      query: ozone\n", encoding="utf-8")
    append_query(
        QuerySpec(slug="second", query="no2 stroke", sources=["openalex"], date_from=dt.date(2020, 1, 1)), path
    )
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# my searches\nqueries:\n    - slug: first\n")
    specs = load_queries(path)
    assert list(specs) == ["first", "second"]
    assert specs["second"].sources == ["openalex"] and specs["second"].date_from == dt.date(2020, 1, 1)


def test_append_to_empty_or_missing_file(tmp_path: Path):
    path = tmp_path / "queries.yaml"
    append_query(QuerySpec(slug="one", query="pm2.5"), path)
    assert list(load_queries(path)) == ["one"]
    empty = tmp_path / "empty.yaml"
    empty.write_text("queries: []\n")
    append_query(QuerySpec(slug="two", query="pm2.5"), empty)
    assert list(load_queries(empty)) == ["two"]


def test_duplicate_slug_is_refused_and_file_untouched(tmp_path: Path):
    path = tmp_path / "queries.yaml"
    append_query(QuerySpec(slug="one", query="a"), path)
    before = path.read_text()
    with pytest.raises(QueryError, match="already exists"):
        append_query(QuerySpec(slug="one", query="b"), path)
    assert path.read_text() == before


def test_invalid_entry_names_file_and_query(tmp_path: Path):
    path = tmp_path / "queries.yaml"
    path.write_text(
        "queries:\n  - slug: ok-one\n    query: a\n  - slug: bad\n    query: a\n    sources: [pubmed, ArXiv]\n"
    )
    with pytest.raises(QueryError, match=r"queries.yaml:4: query 'bad' is invalid: sources: source names \['ArXiv'\]"):
        load_queries(path)
    path.write_text("queries:\n  - slug: bad\n    query: a\n    sources: [pubmed, arxiv]\n")
    with pytest.raises(QueryError, match=r"query 'bad' \(.*queries.yaml\): unknown sources \['arxiv'\]; choose from"):
        query_sources(load_queries(path)["bad"])


def test_unknown_slug_lists_declared_ones(tmp_path: Path):
    path = tmp_path / "queries.yaml"
    append_query(QuerySpec(slug="one", query="a"), path)
    with pytest.raises(QueryError, match=r"No query with slug 'two'.*\['one'\].*hysem query add"):
        get_query("two", path)


@pytest.mark.parametrize(
    ("declared", "cron"),
    [("weekly", "0 6 * * 1"), ("Monthly", "0 6 1 * *"), ("daily", "0 6 * * *"), ("30  2 * * 5", "30 2 * * 5")],
)
def test_a_schedule_is_a_word_or_a_cron_string(declared: str, cron: str) -> None:
    assert QuerySpec(slug="q", query="x", schedule=declared).cron == cron
    assert QuerySpec(slug="q", query="x").cron is None


@pytest.mark.parametrize("declared", ["fortnightly", "0 6 * *", "61 * * * *"])
def test_a_schedule_that_is_neither_is_refused_with_the_forms_it_takes(declared: str) -> None:
    with pytest.raises(ValueError, match="neither daily, weekly, monthly nor a cron string"):
        QuerySpec(slug="q", query="x", schedule=declared)


def test_every_scheduled_query_gets_its_own_schedule_even_when_slugs_spell_alike() -> None:
    from hysem_assets.defs.schedules import living_review_schedules

    specs = {s: QuerySpec(slug=s, query="x", schedule="weekly") for s in ("a-b", "a_b", "c")}
    specs["once"] = QuerySpec(slug="once", query="x")
    names = [schedule.name for schedule in living_review_schedules(specs)]
    assert len(set(names)) == 3 and names[2] == "living_review__c"
    assert all(name.startswith("living_review__a_b_") for name in names[:2])
