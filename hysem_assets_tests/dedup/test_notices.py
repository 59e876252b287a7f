"""Errata are linked to the work they correct, whatever their title adds, and nothing else is one."""

from __future__ import annotations

import pandas as pd

from hysem_assets.dedup.notices import corrections, linked_notices

PAPER = "Random forest models of short-term PM2.5 exposure and hospital admissions for heart failure in Bavaria"


def corpus(rows: list[tuple[str, str, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["cluster_id", "title", "item_type"])


def test_errata_are_linked_to_the_paper_they_name():
    works = corpus(
        [
            ("paper", f"{PAPER}.", "journal-article"),
            ("erratum", f"Erratum: {PAPER}.", "erratum"),
            # Scopus words it with the paper's citation after the title, and no type
            ("cited", f"Erratum: {PAPER} (Journal of Environmental Cardiology (2019) 12:3 (211-224))", None),
            ("corrigendum", f"Corrigendum to “{PAPER}”", None),
            ("typed", "Notice about a figure legend", "Published Erratum"),
            ("orphan", "Correction: A paper this corpus does not hold, about ozone and stroke risk", None),
        ]
    )
    found = linked_notices(works).set_index("cluster_id")
    assert set(found.index) == {"erratum", "cited", "corrigendum", "typed", "orphan"}
    assert (found["notice"] == "erratum").all()
    assert found.loc[["erratum", "cited", "corrigendum"], "notice_for"].tolist() == ["paper"] * 3
    assert found.loc["typed", "notice_for"] is None and found.loc["orphan", "notice_for"] is None


def test_a_corrected_work_names_its_errata_by_doi_else_title():
    works = corpus(
        [
            ("paper", f"{PAPER}.", "journal-article"),
            ("erratum", f"Erratum: {PAPER}.", "erratum"),
            ("corrigendum", f"Corrigendum to “{PAPER}”", None),
            ("other", "Ozone and stroke risk in older adults", "journal-article"),
        ]
    ).assign(doi=["10.1/p", "10.1/e", None, "10.1/o"])
    assert corrections(works) == {"paper": f"Corrigendum to “{PAPER}”; https://doi.org/10.1/e"}
    assert corrections(works[works["cluster_id"] != "erratum"].iloc[[0, 2]]) == {}


def test_studies_whose_titles_start_like_a_notice_are_no_notices():
    works = corpus(
        [
            ("a", "Correction of vitamin D deficiency and blood pressure in older adults", "journal-article"),
            ("b", "Retraction and cognition: a cohort of retired teachers", None),
            ("c", "Comment on the 2019 guideline: a reply", "comment"),  # comments stay works of their own
        ]
    )
    assert linked_notices(works).empty
    assert linked_notices(pd.DataFrame({"cluster_id": ["x"]})).empty  # no titles, no notices


def test_a_source_s_link_decides_which_work_an_erratum_corrects():
    works = corpus(
        [
            ("paper", f"{PAPER}.", "journal-article"),
            ("twin", f"{PAPER}: a replication.", "journal-article"),
            ("by-pmid", "Correction.", "erratum"),  # a title that names nothing
            ("by-doi", "Notice of a corrected table", None),  # a title and type that say nothing either
        ]
    ).assign(
        pmid=["31002418", "31002419", "31574233", None],
        doi=["10.5555/jec.2019.0312", "10.5555/twin", None, "10.5555/jec.2019.0498"],
        notice_of=[None, None, "erratum:pmid:31002419", "erratum:doi:10.5555/JEC.2019.0312"],
    )
    found = linked_notices(works).set_index("cluster_id")["notice_for"].to_dict()
    assert found == {"by-pmid": "twin", "by-doi": "paper"}


def test_a_retraction_notice_is_a_notice_and_the_retracted_paper_is_none():
    works = corpus(
        [
            ("paper", f"{PAPER}.", "retracted publication"),
            ("notice", f"Retraction: {PAPER}.", "retraction of publication"),
            ("erratum", "Correction.", None),
        ]
    ).assign(pmid=["1", "2", "3"], doi=[None, None, None], notice_of=[None, "retraction:pmid:1", "erratum:pmid:1"])
    found = linked_notices(works).set_index("cluster_id")
    assert found["notice"].to_dict() == {"notice": "retraction", "erratum": "erratum"}
    assert set(found["notice_for"]) == {"paper"}
    assert corrections(works) == {"paper": "Correction."}  # a retraction is no correction
