"""What an update reports, from two states of a review written out by hand."""

from __future__ import annotations

import json

import pandas as pd

from hysem_assets.review.updates import (
    cited_works,
    history_frame,
    last_update_line,
    review_state,
    update_row,
    what_changed_markdown,
)


def corpus(rows: list[tuple[str, str | None, list[str]]], retracted: tuple[str, ...] = ()) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"cluster_id": c, "doi": d, "title": f"Work {c}", "record_ids": r, "is_retracted": c in retracted}
            for c, d, r in rows
        ]
    )


def answers(texts: dict[str, tuple[str, list[str]]]) -> pd.DataFrame:
    rows = [
        {"question": q, "markdown": text, "json": json.dumps({"claims": [{"citations": [{"DOI": d} for d in dois]}]})}
        for q, (text, dois) in texts.items()
    ]
    return pd.DataFrame(rows, columns=["question", "markdown", "json"])


BEFORE = review_state(
    corpus(
        [
            ("c1", "10.1/a", ["pubmed:1", "openalex:W1"]),
            ("c2", None, ["pubmed:2"]),
            ("c3", "10.1/c", ["pubmed:3"]),
            ("c4", "10.1/d", ["pubmed:4"]),
        ]
    ),
    included=["c1", "c2", "c3"],
    answers=answers({"How many?": ("Two works.", ["10.1/a"]), "Which?": ("A.", ["10.1/a"])}),
)


def test_new_works_are_those_of_records_never_held_and_a_record_joining_a_work_adds_none() -> None:
    # c2 gained a Scopus record (its cluster id changed), c4 was dropped, c3 was retracted, c1 corrected;
    # two new records make one new work.
    after = review_state(
        pd.concat(
            [
                corpus(
                    [
                        ("c1", "10.1/a", ["pubmed:1", "openalex:W1"]),
                        ("c9", None, ["pubmed:2", "scopus:2"]),
                        ("c3", "10.1/c", ["pubmed:3"]),
                        ("c5", "10.1/e", ["pubmed:5", "openalex:W5"]),
                    ],
                    retracted=("c3",),
                ),
                # an erratum PubMed links to c1: it corrects c1 and is no work of its own
                pd.DataFrame(
                    [
                        {
                            "cluster_id": "c6",
                            "doi": None,
                            "title": "Erratum",
                            "record_ids": ["pubmed:6"],
                            "is_retracted": False,
                            "notice_of": "erratum:doi:10.1/a",
                        }
                    ]
                ),
            ],
            ignore_index=True,
        ),
        included=["c1", "c9", "c5"],
        answers=answers({"How many?": ("Three works.", ["10.1/a", "10.1/e"]), "Which?": ("A.", ["10.1/a"])}),
    )
    row = update_row(BEFORE, after, number=2, search="pubmed: records added", searched_through="2026-01-12")
    assert [w["doi"] for w in json.loads(row["new_works_json"])] == ["10.1/e"]
    assert [w["doi"] for w in json.loads(row["retracted_json"])] == ["10.1/c"]
    assert [w["doi"] for w in json.loads(row["corrected_json"])] == ["10.1/a"]
    assert [w["doi"] for w in json.loads(row["dropped_json"])] == ["10.1/d"]
    assert json.loads(row["new_records_json"]) == ["openalex:W5", "pubmed:5", "pubmed:6", "scopus:2"]
    [changed] = json.loads(row["changed_answers_json"])
    assert changed["question"] == "How many?" and changed["cited_added"] == ["10.1/e"]
    assert "-Two works." in changed["diff"] and "+Three works." in changed["diff"]

    flow = {r["box"]: r["count"] for r in json.loads(row["flow_json"])}
    assert flow["previous"] == 3 and flow["identified"] == 4 and flow["identified:scopus"] == 1
    assert (flow["duplicates_removed"], flow["screened"], flow["included_new"]) == (3, 1, 1)
    assert flow["withdrawn"] == 1  # c3, retracted and no longer included
    assert flow["total"] == flow["previous"] - flow["withdrawn"] + flow["included_earlier"] + flow["included_new"] == 3


def test_records_found_by_citation_searching_are_new_records_identified_via_other_methods() -> None:
    after = review_state(
        corpus(
            [
                ("c1", "10.1/a", ["pubmed:1", "openalex:W1"]),
                ("c2", None, ["pubmed:2"]),
                ("c3", "10.1/c", ["pubmed:3"]),
                ("c4", "10.1/d", ["pubmed:4"]),
                ("c7", "10.1/g", ["citations:W7"]),
                ("c8", "10.1/h", ["citations:W8", "embase:L8"]),
            ]
        ),
        included=["c1", "c2", "c3", "c7"],
        answers=answers({}),
    )
    row = update_row(BEFORE, after, number=2, search="", searched_through="2026-01-12")
    flow = {r["box"]: r["count"] for r in json.loads(row["flow_json"])}
    labels = {r["box"]: r["label"] for r in json.loads(row["flow_json"])}
    assert (flow["identified"], flow["identified:embase"]) == (1, 1)
    assert flow["identified_other"] == flow["identified_other:citations"] == 2
    assert labels["identified_other:citations"] == "New records from Citation searching"
    assert (row["new_works"], flow["duplicates_removed"], flow["included_new"]) == (2, 1, 1)


def test_the_first_update_holds_every_work_as_new_and_an_unchanged_review_reports_nothing() -> None:
    first = update_row(None, BEFORE, number=1, search="every record", searched_through="2026-01-05")
    assert (first["new_works"], first["dropped"], first["changed_answers"], first["included_total"]) == (4, 0, 0, 3)
    again = update_row(BEFORE, BEFORE, number=2, search="", searched_through="2026-01-12")
    counts = [again[k] for k in ("new_records", "new_works", "retracted", "corrected", "dropped", "changed_answers")]
    assert counts == [0] * 6 and again["included_total"] == 3

    history = history_frame([first, again])
    assert last_update_line(history).startswith("update 2 (searched through 2026-01-12): 0 new works")
    assert last_update_line(history_frame([])) is None
    text = what_changed_markdown(history)
    assert "### Update 2" in text and "**New works** (0)" in text and "Total studies included in review" in text


def test_cited_works_are_dois_else_the_document() -> None:
    details = {
        "claims": [{"citations": [{"DOI": "10.1/A", "PDF_DocIndex": "c1"}, {"DOI": None, "PDF_DocIndex": "c2"}]}]
    }
    assert cited_works(json.dumps(details)) == ["10.1/a", "c2"]
