"""Reading corpus rows into works: types, names, pages, languages and missing values."""

from __future__ import annotations

import pandas as pd
import pytest

from hysem_assets.library.work import Person, Work, expand_page_range, kind_of, language_tag, text
from hysem_assets_tests.library.corpus import sample_corpus


@pytest.mark.parametrize(
    ("item_type", "container", "kind"),
    [
        ("journal article", None, "article"),
        ("journal-article", None, "article"),
        ("Review", None, "article"),
        ("retraction of publication", None, "article"),
        ("book chapter", None, "chapter"),
        ("book-chapter", None, "chapter"),
        ("proceedings-article", None, "conference"),
        ("conference paper", None, "conference"),
        ("posted-content", None, "preprint"),
        ("dissertation", None, "thesis"),
        ("Multicenter Study", "Heart", "article"),
        ("Multicenter Study", None, "other"),
        (None, None, "other"),
    ],
)
def test_kind_of_maps_every_source_vocabulary(item_type, container, kind):
    assert kind_of(item_type, container) == kind


@pytest.mark.parametrize(
    ("name", "person"),
    [
        ("Romano, Chiara", Person(family="Romano", given="Chiara")),
        ("Carter, Emily R.", Person(family="Carter", given="Emily R.")),
        ("King, Martin Luther, Jr.", Person(family="King", given="Martin Luther", suffix="Jr.")),
        ("Plato,", Person(family="Plato")),
        (
            "European Environmental Cardiology Working Group",
            Person(literal="European Environmental Cardiology Working Group"),
        ),
    ],
)
def test_person_parse_reads_surname_given_and_collectives(name, person):
    assert Person.parse(name) == person


@pytest.mark.parametrize(
    ("pages", "expanded"),
    [
        ("455-63", "455-463"),
        ("188-97", "188-197"),
        ("22-35", "22-35"),
        ("1001–9", "1001-1009"),
        ("145--172", "145-172"),
        ("e214", "e214"),
        ("S12-S19", "S12-S19"),
        (None, None),
    ],
)
def test_expand_page_range_writes_whole_ranges(pages, expanded):
    assert expand_page_range(pages) == expanded


@pytest.mark.parametrize(
    ("code", "tag"),
    [("eng", "en"), ("chi", "zh"), ("spa", "es"), ("en", "en"), ("und", None), (None, None), ("haw", "haw")],
)
def test_language_tag_turns_pubmed_codes_into_bcp47(code, tag):
    assert language_tag(code) == tag


@pytest.mark.parametrize("missing", [None, float("nan"), pd.NA, "", "   "])
def test_text_treats_every_missing_marker_as_none(missing):
    assert text(missing) is None


def test_work_from_a_corpus_row():
    row = sample_corpus().to_dict("records")[5]
    work = Work.from_row(row)
    assert work.kind == "article"
    assert work.title.endswith("older adults, a random forest approach")  # PubMed's final period dropped
    assert work.authors[1] == Person(family="Nguyễn", given="Thị Lan")
    assert (work.year, work.pages, work.page_bounds) == (2018, "455-463", ("455", "463"))
    assert (work.language, work.pmid, work.doi, work.url) == ("en", "29872101", "10.5555/ijesc.2018.0091", None)


def test_work_keeps_a_title_ending_in_an_ellipsis():
    row = {"cluster_id": "c-1", "title": "And then..."}
    assert Work.from_row(row).title == "And then..."
