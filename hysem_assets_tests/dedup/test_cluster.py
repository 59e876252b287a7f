from __future__ import annotations

import pandas as pd
import pytest

from hysem_assets.dedup.cluster import cluster_id_for, cluster_records

from .builders import cluster_pair, table, together

PAPER = {
    "title": "Reputation offsets trust judgments based on social biases among Airbnb users",
    "author": "Abrahao, Bruno and Parigi, Paolo and Gupta, Alok and Cook, Karen S.",
    "year": 2017,
    "journal": "Proceedings of the National Academy of Sciences",
    "volume": "114",
    "pages": "9848-9853",
    "item_type": "journal-article",
}


def variant(**changes) -> dict:
    return {**PAPER, **changes}


# -- identifiers --------------------------------------------------------------------------


def test_equal_identifiers_link_whatever_the_spelling():
    frame = table(
        {"doi": "https://doi.org/10.1073/PNAS.1604234114", "title": "A"},
        {"doi": "doi:10.1073/pnas.1604234114", "title": None},
        {"pmid": "https://pubmed.ncbi.nlm.nih.gov/28827350/", "openalex_id": "https://openalex.org/W1"},
        {"pmid": 28827350.0},
        {"openalex_id": "W1"},
    )
    result = cluster_records(frame)
    assert result.cluster_id.iloc[0] == result.cluster_id.iloc[1]
    assert result.cluster_id.iloc[2] == result.cluster_id.iloc[3] == result.cluster_id.iloc[4]
    assert result.cluster_id.iloc[0] != result.cluster_id.iloc[2]
    assert set(result.pairs["rule"]) == {"doi", "pmid", "openalex_id"}


def test_records_with_several_identifiers_are_cross_linked():
    frame = table(
        {"doi": "10.1000/xyz1"},
        {"doi": "10.1000/xyz1", "pmid": "123"},
        {"pmid": "123", "openalex_id": "W9"},
        {"openalex_id": "W9"},
    )
    assert cluster_records(frame).cluster_id.nunique() == 1


def test_different_dois_never_share_a_cluster():
    frame = table(
        variant(doi="10.1000/first"),
        variant(doi=None),  # matches both bibliographically
        variant(doi="10.1000/second"),
        {"pmid": "55", "doi": "10.1000/first"},
        {"pmid": "55", "doi": "10.1000/second"},  # a shared PMID does not override the DOIs
    )
    result = cluster_records(frame)
    assert not together(result, frame, "r1", "r3")
    assert not together(result, frame, "r4", "r5")
    assert together(result, frame, "r1", "r2") or together(result, frame, "r2", "r3")


def test_a_doi_shared_by_two_clearly_different_papers_does_not_link():
    attili = {
        "doi": "10.17705/1CAIS.04204",
        "author": "Attili, V. S. Prakash",
        "year": 2018,
        "title": "Understanding Information Privacy Assimilation in IT Organizations",
    }
    annabi = {
        "doi": "10.17705/1CAIS.04204",
        "author": "Annabi, Hala and McGann, Sean T.",
        "year": 2019,
        "title": "MISunderstood - A Longitudinal Analysis of Major MISperceptions",
    }
    assert not cluster_pair(attili, annabi)


def test_versions_of_one_cochrane_review_are_not_a_doi_conflict():
    review = {
        "title": "Air versus oxygen for resuscitation of infants at birth",
        "author": "Tan A.Schulze A.",
        "journal": "Cochrane Database Syst Rev",
        "pages": "CD002273",
    }
    assert cluster_pair(
        {**review, "year": 2004, "doi": "10.1002/14651858.CD002273.pub2"},
        {**review, "year": 2005, "doi": "10.1002/14651858.CD002273.pub3"},
    )


# -- bibliographic duplicates ---------------------------------------------------------------


@pytest.mark.parametrize(
    "copy",
    [
        variant(title=PAPER["title"].upper() + "."),
        variant(title="Reputation offsets trust judgements based on social biases among AirBnB users"),
        variant(author="B. Abrahao; P. Parigi; A. Gupta; K. S. Cook", journal=None, volume=None, pages=None),
        variant(author="Abrahao B, Parigi P, Gupta A, Cook KS", journal="Proc Natl Acad Sci U S A"),
        variant(title=f"[{PAPER['title']}]", pages="9848-53"),
        variant(year=2016, pages="1-12", volume=None),  # online first, print a year later
    ],
)
def test_distorted_copies_are_duplicates(copy):
    assert cluster_pair(PAPER, copy)


def test_translated_title_matches_on_the_full_locator():
    german = {
        "title": "Neue Parazentesenadel für Aszites",
        "author": "Schlottmann, K. and Lock, G.",
        "year": 2001,
        "journal": "Medizinische Klinik",
        "volume": "96",
        "pages": "321-324",
    }
    english = {**german, "title": "A new paracentesis device for ascites compared with angiocath"}
    assert cluster_pair(german, english)
    # one page does not locate an article: supplements print several abstracts per page
    assert not cluster_pair({**german, "pages": "S12"}, {**english, "pages": "S12"})


# -- traps: must stay apart -------------------------------------------------------------------


@pytest.mark.parametrize(
    "other",
    [
        variant(title="Erratum: " + PAPER["title"], pages="12000"),
        variant(title="Correction to: " + PAPER["title"]),
        variant(item_type="erratum"),
        variant(title="Comment on “" + PAPER["title"] + "”"),
        variant(title="Reply to: " + PAPER["title"]),
    ],
    ids=["erratum", "correction", "erratum-type", "comment", "reply"],
)
def test_notices_stay_apart_from_their_paper(other):
    assert not cluster_pair(PAPER, other)


def test_comment_and_reply_stay_apart():
    comment = variant(title="Comment on " + PAPER["title"])
    assert not cluster_pair(comment, variant(title="Reply to comment on " + PAPER["title"]))


def test_conference_paper_and_journal_version_stay_apart():
    conference = variant(
        journal="Proceedings of the 2016 Conference on Computer Supported Cooperative Work",
        item_type="inproceedings",
        year=2016,
        volume=None,
        pages="100-110",
    )
    assert not cluster_pair(PAPER, conference)
    assert not cluster_pair(
        variant(journal="Journal of Digital Studies", volume=None, pages=None),
        variant(journal="Workshop of Digital Studies", volume=None, pages=None),
    )


def test_annual_conference_series_stay_apart():
    intro = {
        "title": "Introduction to the Minitrack on Crowdsourcing and Digital Workforce",
        "author": "Deng, Xuefei and Taylor, Joseph",
        "item_type": "inproceedings",
        "journal": "Proceedings of the Annual Hawaii International Conference on System Sciences",
    }
    assert not cluster_pair({**intro, "year": 2021}, {**intro, "year": 2022})
    assert cluster_pair({**intro, "year": 2021}, {**intro, "year": 2021, "author": "X. Deng; J. Taylor"})


def test_preprint_and_published_version_stay_apart():
    preprint = variant(journal="medRxiv", doi="10.1101/2016.05.01.123456", volume=None, pages=None)
    assert not cluster_pair(PAPER, preprint)
    assert not cluster_pair(PAPER, variant(journal="SSRN Electronic Journal", volume=None, pages=None))


def test_series_and_phases_stay_apart():
    guideline = {
        "title": "Global strategy for asthma management and prevention: 2019 update",
        "author": "Reddel, H. K.",
        "journal": "European Respiratory Journal",
    }
    assert not cluster_pair(
        {**guideline, "year": 2019}, {**guideline, "year": 2021, "title": guideline["title"].replace("2019", "2021")}
    )
    trial = {
        "author": "Smith, J.",
        "year": 2010,
        "journal": "Lancet",
        "title": "A phase I trial of intrapleural streptokinase in empyema",
    }
    assert not cluster_pair(trial, {**trial, "title": trial["title"].replace("phase I ", "phase II ")})
    assert not cluster_pair(PAPER, variant(title=PAPER["title"] + ": part 2", pages="1-9"))


def test_same_title_years_apart_stays_apart():
    assert not cluster_pair(PAPER, variant(year=2020, volume="117", pages="100-110"))
    assert not cluster_pair(PAPER, variant(year=2019, volume=None, pages=None))


def test_same_title_author_and_year_in_another_publication_stays_apart():
    assert not cluster_pair(PAPER, variant(journal="ACP Journal Club", pages="JC6-9"))  # a digest
    assert not cluster_pair(PAPER, variant(volume="115", pages="2201"))  # an unmarked erratum


def test_same_title_in_another_journal_and_volume_stays_apart():
    assert not cluster_pair(PAPER, variant(journal="Clinical Cancer Research", volume="16", pages=None))


def test_short_titles_need_author_year_and_place():
    editorial = {
        "title": "Editorial",
        "author": "Smith, J.",
        "year": 2020,
        "journal": "Lancet",
        "volume": "395",
        "pages": "10-11",
    }
    assert cluster_pair(editorial, dict(editorial))
    assert not cluster_pair(editorial, {**editorial, "author": "Jones, K.", "pages": "12-13"})
    assert not cluster_pair({"title": "Book review", "year": 1995}, {"title": "Book review", "year": 1995})
    unplaced = {**editorial, "pages": None, "volume": None}
    assert not cluster_pair(unplaced, dict(unplaced))


def test_records_without_title_match_only_by_identifier():
    frame = table(
        {"title": None, "author": "Smith, J.", "year": 2020, "doi": "10.1000/abc"},
        {"author": "Smith, J.", "year": 2020, "doi": "10.1000/ABC"},
        {"title": "UNKNOWN", "author": "Smith, J.", "year": 2020},
        {"title": float("nan"), "author": "Smith, J.", "year": 2020},
    )
    result = cluster_records(frame)
    assert together(result, frame, "r1", "r2")
    assert result.cluster_id.nunique() == 3


# -- result shape ---------------------------------------------------------------------------


def test_cluster_ids_are_stable_and_derived_from_members():
    frame = table(PAPER, variant(title=PAPER["title"].lower()), {"title": "Something else entirely"})
    first = cluster_records(frame)
    again = cluster_records(frame.iloc[::-1].reset_index(drop=True))
    reversed_ids = frame["record_id"].iloc[::-1]
    assert dict(zip(frame["record_id"], first.cluster_id)) == dict(zip(reversed_ids, again.cluster_id))
    assert first.cluster_id.iloc[0] == cluster_id_for(["r2", "r1"])
    assert first.cluster_id.iloc[2] == cluster_id_for(["r3"])


def test_result_is_aligned_with_the_input_index_and_explains_links():
    frame = table(PAPER, variant(author="Abrahao B, Parigi P")).set_index(pd.Index([10, 20]))
    result = cluster_records(frame)
    assert list(result.cluster_id.index) == [10, 20]
    link = result.pairs.iloc[0]
    assert (link.record_id_a, link.record_id_b) == ("r1", "r2")
    assert link.rule.startswith("title+") and "author" in link.rule.split("+")
    assert link.score == 1.0 and link.points >= 8


def test_record_ids_must_exist_and_be_unique():
    with pytest.raises(ValueError, match="record_id"):
        cluster_records(pd.DataFrame({"title": ["x"]}))
    with pytest.raises(ValueError, match="unique"):
        cluster_records(pd.DataFrame({"record_id": ["a", "a"], "title": ["x", "y"]}))


def test_empty_frame():
    result = cluster_records(pd.DataFrame({"record_id": []}))
    assert result.cluster_id.empty and result.pairs.empty
