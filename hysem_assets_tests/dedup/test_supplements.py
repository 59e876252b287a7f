"""Conference abstracts and supplement items as different databases export them.

Embase, Web of Science and the publishers place one abstract differently: the
supplement as volume, issue or not at all, the page as printed page, abstract number
or "S" page, the venue as "Journal. Conference: <meeting>". Each rule that reads
these variants as one record has a case it merges and a look-alike it keeps apart.
"""

from __future__ import annotations

import pytest

from hysem_assets.dedup.distinctions import abstract_sized, looks_like_supplement, normalize_issue
from hysem_assets.dedup.features import record_features
from hysem_assets.dedup.match import compare, same_page
from hysem_assets.dedup.normalize import journals_agree, normalize_journal, normalize_volume

from .builders import cluster_pair, table

TITLE = "Ibrutinib combined with venetoclax in relapsed mantle cell lymphoma: interim results of a multicentre study"
ABSTRACT = {
    "title": TITLE,
    "authors": ["Tam, C.", "Anderson, M. A.", "Roberts, A. W."],
    "year": 2016,
    "journal": "Blood",
    "volume": "128",
    "issue": "22",
    "pages": "1234",
}


def variant(**changes) -> dict:
    return {**ABSTRACT, **changes}


# -- Embase's "Journal. Conference: <meeting>" venue ---------------------------------------

EMBASE_VENUE = "Blood. Conference: 58th Annual Meeting of the American Society of Hematology, ASH 2016. United States"


def test_embase_conference_venue_names_its_journal():
    assert "blood" in normalize_journal(EMBASE_VENUE)
    assert journals_agree(normalize_journal(EMBASE_VENUE), normalize_journal("Blood"))
    assert not journals_agree(normalize_journal(EMBASE_VENUE), normalize_journal("Haematologica"))


def test_embase_conference_abstract_matches_the_journal_record():
    embase = variant(journal=EMBASE_VENUE, item_type="Conference Abstract")
    assert cluster_pair(ABSTRACT, embase)


def test_embase_conference_abstract_stays_apart_from_an_encore_in_another_journal():
    embase = variant(journal=EMBASE_VENUE, item_type="Conference Abstract")
    encore = variant(journal="Haematologica", volume="101", issue="Supplement 1", pages="S45")
    assert not cluster_pair(embase, encore)


# -- supplement labels in the volume and issue fields ---------------------------------------


@pytest.mark.parametrize(("value", "volume"), [("Supplement 1", None), ("Suppl. 2", None), ("S1", None)])
def test_a_supplement_label_alone_names_no_volume(value, volume):
    assert normalize_volume(value) == volume


@pytest.mark.parametrize(("value", "volume"), [("128 Suppl 1", "128"), ("Spring", "spring"), ("12", "12")])
def test_volumes_beside_or_without_a_supplement_label_are_kept(value, volume):
    assert normalize_volume(value) == volume


@pytest.mark.parametrize(("value", "issue"), [("S1", None), ("S 2", None), ("18S", "18"), ("3", "3")])
def test_a_supplement_number_is_no_issue(value, issue):
    assert normalize_issue(value) == issue


def test_supplement_as_volume_or_issue_matches_the_numbered_record():
    assert cluster_pair(ABSTRACT, variant(volume="Supplement 1", issue=None))
    assert cluster_pair(ABSTRACT, variant(issue="S1"))


def test_a_supplement_volume_does_not_hide_another_year():
    assert not cluster_pair(ABSTRACT, variant(volume="Supplement 1", issue=None, year=2014))


# -- supplement and abstract pages ------------------------------------------------------------


def test_supplement_pages_agree_with_their_bare_number():
    assert same_page("s1234", "1234") and same_page("12", "12")
    assert not same_page("s1234", "1235") and not same_page("e1234", "1234") and not same_page("s12", "s13")
    assert not same_page("a1754", "1754")  # an "A" page may be an article number (BMJ)


def test_an_abstract_spans_at_most_two_pages():
    assert abstract_sized("1234") and abstract_sized("452-453") and abstract_sized("s12") and abstract_sized(None)
    assert not abstract_sized("452-460") and not abstract_sized("s33-38")


# -- what reads as an abstract or supplement item ---------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"item_type": "Conference Abstract"},
        {"item_type": "Meeting Abstract"},
        {"issue": "Supplement_1"},
        {"volume": "30 (15 SUPPL. 1)"},
        {"pages": "S233"},
        {"pages": "Abstract 4487"},
        {"title": TITLE + " [Abstract]"},
        {"journal": EMBASE_VENUE},
    ],
)
def test_looks_like_supplement(fields):
    record = {"title": TITLE, "volume": "128", "issue": "22", "pages": "1234", "journal": "Blood", "item_type": None}
    assert looks_like_supplement(**{**record, **fields})


def test_a_regular_journal_record_is_no_supplement():
    assert not looks_like_supplement(TITLE, "128", "22", "1234-1245", "Blood", "Journal Article")
    assert not looks_like_supplement(TITLE, "12", "3", "45-52", "Journal of Supportive Care", "article")
    assert not looks_like_supplement(TITLE, "337", None, "a1754", "BMJ", "article")  # an article number


# -- one abstract placed differently (match._supplement_shift) ---------------------------------


def assess(a: dict, b: dict):
    first, second = record_features(table(a, b))
    return compare(first, second)


def test_an_abstract_in_another_volume_issue_and_page_is_one_record():
    wos = variant(volume="127", issue="Suppl 1", pages="452-453")
    verdict = assess(ABSTRACT, wos)
    assert verdict.duplicate and verdict.rule.endswith("+supplement"), verdict.reason
    assert cluster_pair(ABSTRACT, variant(issue="21", pages="S45"))


def test_a_place_shift_needs_a_supplement_marker():
    assert not cluster_pair(ABSTRACT, variant(volume="127", issue="21", pages="1240"))


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("full article of the same title", {"pages": "1234-1245", "issue": "5"}),
        ("another first author", {"authors": ["Roberts, A. W.", "Tam, C."]}),
        ("another journal", {"journal": "Haematologica"}),
        ("another year", {"year": 2017}),
        ("another follow-up", {"title": TITLE.replace("interim", "final")}),
        ("another number", {"title": TITLE + " 2"}),
        ("an erratum", {"title": "Erratum: " + TITLE}),
    ],
)
def test_look_alikes_of_a_shifted_abstract_stay_apart(name, changes):
    abstract = variant(volume="127", issue="Suppl 1", pages="452")
    assert not cluster_pair(ABSTRACT, {**abstract, **changes}), name


def test_short_titles_never_shift():
    short = {"title": "Mantle cell lymphoma update", "authors": ["Tam, C."], "year": 2016, "journal": "Blood"}
    assert not cluster_pair(
        {**short, "volume": "128", "issue": "Suppl 1", "pages": "12"},
        {**short, "volume": "127", "issue": "4", "pages": "12"},
    )


# -- a specific title printed in two places of one year is no series ---------------------------


def test_a_long_title_in_two_issues_of_one_year_is_not_recurring():
    first, second = record_features(table(ABSTRACT, variant(issue="21")))
    assert not first.recurring and not second.recurring
    assert cluster_pair(ABSTRACT, variant(issue="21"))


def test_a_title_in_several_volumes_over_the_years_stays_a_series():
    title = "Highlights of the annual meeting of the american society of hematology in review"
    a = {"title": title, "authors": ["Tam, C."], "journal": "Blood", "year": 2016, "volume": "128", "pages": "12"}
    b = {**a, "year": 2017, "volume": "130", "pages": "14"}
    assert all(record.recurring for record in record_features(table(a, b)))
    assert not cluster_pair(a, b)


def test_a_short_title_in_two_issues_of_one_year_stays_a_series():
    a = {"title": "Editor's choice", "authors": ["Lowe, G."], "journal": "Blood", "year": 2016, "volume": "128"}
    first, second = record_features(table({**a, "issue": "3"}, {**a, "issue": "4"}))
    assert first.recurring and second.recurring
    assert not cluster_pair({**a, "issue": "3"}, {**a, "issue": "4"})


# -- an abstract against the full article of its journal (match._abstract_veto) --------------

ARTICLE = variant(issue="5", pages="2460-2469", item_type="Journal Article")


def test_an_abstract_stays_apart_from_the_full_article_in_its_journal():
    embase = variant(journal=EMBASE_VENUE, issue=None, pages=None, item_type="Conference Abstract")
    wos = variant(issue="Suppl 1", pages="S452", item_type="Meeting Abstract")
    verdict = assess(embase, ARTICLE)
    assert not verdict.duplicate and "abstract against an article" in verdict.reason
    assert not cluster_pair(wos, ARTICLE)


def test_a_paper_in_a_supplement_issue_matches_its_other_listing():
    supplement_paper = variant(volume="128 Suppl 2", issue=None, pages="S33-38")
    assert cluster_pair(supplement_paper, variant(issue="5", pages="33-38"))
    assert not assess(supplement_paper, ARTICLE).reason.startswith("a conference abstract")


# -- a subtitle's study words on a record of another year --------------------------------------


def test_updated_results_a_year_later_stay_apart():
    later = variant(title=TITLE + ": updated results", year=2017, volume=None, issue=None, pages=None)
    verdict = assess(variant(volume=None, issue=None, pages=None), later)
    assert not verdict.duplicate and "title words differ" in verdict.reason


def test_a_dropped_subtitle_in_the_same_year_still_matches():
    assert cluster_pair(ABSTRACT, variant(title=TITLE + ": updated results", pages=None))


def test_a_conference_paper_matches_its_proceedings_listing_with_pages():
    paper = {"title": TITLE, "authors": ["Tam, C.", "Roberts, A. W."], "year": 2019, "item_type": "inproceedings"}
    listed = {**paper, "item_type": "article", "pages": "55-67"}
    assert cluster_pair({**paper, "journal": "ICIS 2019 Proceedings"}, {**listed, "journal": "ICIS 2019 Proceedings"})
