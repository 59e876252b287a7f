"""Decisions to and from ASReview's files: what hysem writes comes back the same, what ASReview
reads it finds, and an import that cannot be matched whole is refused whole."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
import rispy

from hysem_assets.screening.decisions import Decision, DecisionsError
from hysem_assets.screening.exchange import export_decisions, file_format, read_decisions_file


def corpus() -> pd.DataFrame:
    """Three works as the corpus holds them: every column ``Work.from_row`` reads, None where empty."""
    return pd.DataFrame(
        {
            "cluster_id": ["c-1", "c-2", "c-3"],
            "title": ["Nitrate in groundwater wells.", "Stock markets: a review", "Soil carbon under grazing"],
            "abstract": ["Nitrate was measured in 40 wells.", None, "Carbon stocks, grazed and not."],
            "authors": [["Smith, Jane", "Doe, Alex"], [], ["Lee, Kim"]],
            "year": [2020, 2019, None],
            "doi": ["10.1000/abc", None, "10.1000/xyz"],
            "journal": ["Journal of Hydrology", None, None],
            "item_type": ["journal-article", None, None],
            "volume": ["12", None, None],
            "issue": [None, None, None],
            "pages": ["1-9", None, None],
            "pmid": [None, None, None],
            "oa_url": [None, None, None],
            "language": ["en", None, None],
        }
    )


DECISIONS = {
    "c-1": Decision("c-1", "included"),
    "c-2": Decision("c-2", "excluded", "wrong topic, not water"),
}


def essentials(decisions: list[Decision]) -> dict[str, tuple[str, str | None]]:
    return {d.record_id: (d.action, d.reason) for d in decisions}


@pytest.mark.parametrize("name", ["decisions.csv", "decisions.tsv", "decisions.ris", "decisions.txt"])
def test_exported_decisions_import_back_the_same(tmp_path: Path, name: str):
    path = tmp_path / "out" / name
    assert export_decisions(corpus(), DECISIONS, path) == 3  # every work, the undecided one too
    imported = read_decisions_file(path, corpus())
    assert essentials(imported) == {"c-1": ("included", None), "c-2": ("excluded", "wrong topic, not water")}
    assert {d.source for d in imported} == {f"import:{name}"}


def test_the_csv_has_the_columns_asreview_reads(tmp_path: Path):
    path = tmp_path / "decisions.csv"
    export_decisions(corpus(), DECISIONS, path)
    with open(path, newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [(row["record_id"], row["included"], row["exclusion_reason"]) for row in rows] == [
        ("c-1", "1", ""),
        ("c-2", "0", "wrong topic, not water"),
        ("c-3", "", ""),  # undecided: no label, as ASReview writes a record not yet seen
    ]
    assert rows[0]["title"] == "Nitrate in groundwater wells." and rows[0]["authors"] == "Smith, Jane; Doe, Alex"
    assert rows[0]["doi"] == "10.1000/abc"


def test_the_ris_notes_carry_asreview_labels(tmp_path: Path):
    path = tmp_path / "decisions.ris"
    export_decisions(corpus(), DECISIONS, path)
    entries = {entry["id"]: entry for entry in rispy.loads(path.read_text(encoding="utf-8"))}
    hysem_notes = ["reviewer: reviewer", "stage: title_abstract"]
    assert entries["c-1"]["notes"] == ["ASReview_relevant", "decision: included", *hysem_notes]
    assert entries["c-2"]["notes"] == [
        "ASReview_irrelevant",
        "exclusion_reason: wrong topic, not water",
        "decision: excluded",
        *hysem_notes,
    ]
    assert entries["c-3"]["notes"] == ["ASReview_not_seen"]
    assert entries["c-1"]["doi"] == "10.1000/abc" and entries["c-1"]["authors"] == ["Smith, Jane", "Doe, Alex"]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_rows_of_another_tool_match_by_doi_then_by_exact_title(tmp_path: Path):
    # ASReview numbers records itself: its ids are unknown here, so the DOI decides, even over the title
    path = write(
        tmp_path,
        "asreview.csv",
        "record_id,title,doi,label_included\n"
        "0,Soil carbon under grazing,https://doi.org/10.1000/ABC,1\n"
        "1,STOCK MARKETS -- A REVIEW!,,0\n"
        "2,Soil carbon under grazing,,-1\n"
        "3,A paper not in this query,,\n",  # unlabelled rows are skipped, matched or not
    )
    assert essentials(read_decisions_file(path, corpus())) == {
        "c-1": ("included", None),
        "c-2": ("excluded", "excluded in asreview.csv"),  # no reason given: the file is named instead
    }
    ris = write(
        tmp_path,
        "asreview.ris",
        "TY  - JOUR\nTI  - soil carbon, under grazing\nN1  - ASReview_irrelevant\nER  - \n\n"
        "TY  - JOUR\nDO  - 10.1000/ABC\nTI  - Something else\nN1  - ASReview_relevant\nER  - \n\n"
        "TY  - JOUR\nTI  - A paper not in this query\nN1  - ASReview_not_seen\nER  - \n",
    )
    assert essentials(read_decisions_file(ris, corpus())) == {
        "c-3": ("excluded", "excluded in asreview.ris"),
        "c-1": ("included", None),
    }
    clash = write(
        tmp_path,
        "clash.ris",
        "TY  - JOUR\nTI  - Soil carbon under grazing\nN1  - ASReview_irrelevant\nER  - \n\n"
        "TY  - JOUR\nDO  - 10.1000/XYZ\nN1  - ASReview_relevant\nER  - \n",
    )
    # the title finds c-3, and so does the DOI of the second record, which decides it otherwise
    with pytest.raises(DecisionsError, match=r"record 1 and record 2 decide work 'c-3' differently"):
        read_decisions_file(clash, corpus())


def test_a_title_must_match_exactly_not_nearly(tmp_path: Path):
    path = write(tmp_path, "near.csv", "record_id,title,included\n9,Nitrate in groundwater,1\n")
    with pytest.raises(DecisionsError, match=r"1 labelled row\(s\) match no work .*row 2 \(record_id 9\)"):
        read_decisions_file(path, corpus())


def test_an_import_with_a_row_matching_no_work_is_refused_whole(tmp_path: Path):
    path = write(
        tmp_path,
        "mixed.csv",
        "record_id,title,included\nc-1,,1\nc-2,,0\nzz,A paper not in this query,0\nyy,Nor this one,1\n",
    )
    unmatched = (
        r"2 labelled row\(s\) match no work .*\(first: row 4 \(record_id zz\), row 5 \(record_id yy\)\); nothing"
    )
    with pytest.raises(DecisionsError, match=unmatched):
        read_decisions_file(path, corpus())


def test_two_rows_deciding_one_work_differently_are_named(tmp_path: Path):
    path = write(tmp_path, "twice.csv", "record_id,title,included\nc-1,,1\nc-3,,1\n,nitrate in groundwater wells,0\n")
    with pytest.raises(DecisionsError, match=r"row 2 \(record_id c-1\) and row 4 decide work 'c-1' differently"):
        read_decisions_file(path, corpus())


def test_duplicate_identical_rows_are_taken_once(tmp_path: Path):
    path = write(
        tmp_path,
        "dup.csv",
        "record_id,title,included,exclusion_reason\nc-2,,0,off topic\nc-2,,0,off topic\n"
        ",Stock markets: a review,0,off topic\n",
    )
    assert essentials(read_decisions_file(path, corpus())) == {"c-2": ("excluded", "off topic")}


def test_a_label_that_is_not_0_or_1_is_refused_naming_the_row(tmp_path: Path):
    path = write(tmp_path, "maybe.csv", "record_id,included\nc-1,1\nc-2,maybe\n")
    with pytest.raises(DecisionsError, match=r"row 3 \(record_id c-2\) has label 'maybe'"):
        read_decisions_file(path, corpus())
    ris = write(tmp_path, "nolabel.ris", "TY  - JOUR\nID  - c-1\nN1  - some other note\nER  - \n")
    with pytest.raises(DecisionsError, match="no record has a label note"):  # it would import nothing
        read_decisions_file(ris, corpus())
    bare = write(tmp_path, "bare.csv", "record_id,title\nc-1,x\n")
    with pytest.raises(DecisionsError, match="no label column"):
        read_decisions_file(bare, corpus())


def test_an_unknown_format_is_refused(tmp_path: Path):
    assert [file_format(Path(name)) for name in ("a.CSV", "a.tsv", "a.ris", "a.txt")] == ["csv", "csv", "ris", "ris"]
    with pytest.raises(DecisionsError, match=r"unknown format '\.xlsx'"):
        file_format(tmp_path / "decisions.xlsx")
    with pytest.raises(DecisionsError, match=r"unknown format '\.xlsx'"):
        export_decisions(corpus(), DECISIONS, tmp_path / "decisions.xlsx")
    assert not (tmp_path / "decisions.xlsx").exists()
    with pytest.raises(DecisionsError, match=r"unknown format '\.xlsx'"):
        read_decisions_file(write(tmp_path, "in.xlsx", "record_id,included\nc-1,1\n"), corpus())


def test_a_title_several_works_share_identifies_none_of_them(tmp_path: Path):
    twins = corpus().assign(title=["Editorial", "Editorial", *corpus()["title"][2:]])
    path = tmp_path / "asreview.csv"
    pd.DataFrame({"record_id": [5], "title": ["Editorial"], "included": [0]}).to_csv(path, index=False)
    with pytest.raises(DecisionsError, match="a title several works share"):
        read_decisions_file(path, twins)


def test_a_ris_label_is_read_in_any_case(tmp_path: Path):
    ris = write(
        tmp_path,
        "lower.ris",
        "TY  - JOUR\nDO  - 10.1000/ABC\nN1  - asreview_relevant\nER  - \n\n"
        "TY  - JOUR\nTI  - Soil carbon under grazing\nN1  - ASREVIEW_IRRELEVANT\nER  - \n",
    )
    assert essentials(read_decisions_file(ris, corpus())) == {
        "c-1": ("included", None),
        "c-3": ("excluded", "excluded in lower.ris"),
    }
