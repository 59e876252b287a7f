from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hysem_assets.dedup.tabular import BibliographyError, dedupe_table, read_bibliography, standardize_columns

TITLE = "Reputation offsets trust judgments based on social biases among Airbnb users"
CSV_LINES = [
    b"ID,Title,AUTHOR,Year,Journal,DOI,Note",
    f'a1,"{TITLE}","Abrahao, Bruno and Parigi, Paolo",2017,PNAS,10.1073/pnas.1604234114,'.encode(),
    f'a2,"{TITLE.upper()}","Abrahao, B. and Parigi, P.",2017,Proc Natl Acad Sci,n/a,'.encode(),
    b'a3,,"Smith, J.",2019,Lancet,,',
    b'a4,Editorial,"Jones, K.",2020,BMJ,,',
    f'a1,"{TITLE}","Abrahao, Bruno",2017,PNAS,,second a1'.encode(),
    b'a6,"Caf\xe9 society and trust in platforms",Doe J,2018,Journal of Platforms,,',
]


@pytest.fixture
def csv_path(tmp_path: Path) -> Path:
    path = tmp_path / "export.csv"
    path.write_bytes(b"\n".join(CSV_LINES) + b"\n")
    return path


def test_a_broken_byte_is_replaced_and_its_line_reported(csv_path):
    frame = read_bibliography(csv_path)
    assert list(frame.columns) == ["ID", "Title", "AUTHOR", "Year", "Journal", "DOI", "Note"]
    assert len(frame) == 6
    assert frame.loc[5, "Title"] == "Caf\ufffd society and trust in platforms"
    assert frame.attrs["warnings"] == [
        "Line 7 of 'export.csv' is not valid UTF-8; its undecodable bytes were replaced with "
        "'\ufffd'. Check that record, or export the file as UTF-8."
    ]


def test_dedupe_table_keeps_rows_and_columns_and_adds_cluster_ids(csv_path):
    frame = read_bibliography(csv_path)
    result, _ = dedupe_table(frame)
    assert list(result.columns) == [*frame.columns, "cluster_id"]
    assert result["Title"].tolist() == frame["Title"].tolist()
    assert result["ID"].tolist() == ["a1", "a2", "a3", "a4", "a1-2", "a6"]
    clusters = dict(zip(result["ID"], result["cluster_id"]))
    assert clusters["a1"] == clusters["a2"] == clusters["a1-2"]  # the non-DOI "n/a" blocks nothing
    assert len({clusters["a1"], clusters["a3"], clusters["a4"], clusters["a6"]}) == 4


def test_dedupe_table_warns_about_each_problem_naming_the_record(csv_path):
    _, warnings = dedupe_table(read_bibliography(csv_path))
    text = "\n".join(warnings)
    assert "Line 7 of 'export.csv'" in text
    assert "Record ID 'a1' appears 2 times; all rows are kept and named 'a1', 'a1-2'." in text
    assert "Record 'a3' has no usable title" in text
    assert "Record 'a4' has a one-word title ('Editorial')" in text
    assert "Record 'a2': 'n/a' in the DOI column is not a DOI and is ignored." in text
    assert len(warnings) == 5


def test_rows_with_too_many_fields_are_kept_and_reported(tmp_path: Path):
    path = tmp_path / "export.tsv"
    path.write_text("ID\tTitle\nx1\tFirst title\tstray\nx2\tSecond title\n", encoding="utf-8")
    frame = read_bibliography(path)
    assert frame.to_dict("list") == {"ID": ["x1", "x2"], "Title": ["First title", "Second title"]}
    assert frame.attrs["warnings"] == [
        "Line 2 of 'export.tsv' has 3 fields but the header has 2; the extra fields were "
        "dropped. Check its quotes and separators."
    ]


def test_rows_without_id_are_named_by_row_number():
    frame = pd.DataFrame({"title": [TITLE, TITLE], "id": ["k1", None]})
    result, warnings = dedupe_table(frame)
    assert result["id"].tolist() == ["k1", "row-2"]
    assert warnings == [
        "Row 2 has no record ID; it is called 'row-2' here. Give every record an ID in the source file."
    ]


def test_standardize_columns_maps_export_headers():
    frame = pd.DataFrame(
        {
            "ENTRYTYPE": ["inproceedings"],
            "BookTitle": ["AMCIS 2017 Proceedings"],
            "Journal": [None],
            "number": ["3"],
            "start_page": ["12"],
            "end_page": ["19"],
            "ID": ["x"],
        }
    )
    standard = standardize_columns(frame)
    row = standard.iloc[0]
    assert (row["record_id"], row["item_type"]) == ("x", "inproceedings")
    assert row["journal"] == "AMCIS 2017 Proceedings"
    assert (row["issue"], row["pages"]) == ("3", "12-19")


def test_read_ris(tmp_path: Path):
    path = tmp_path / "export.ris"
    path.write_text(
        "TY  - JOUR\nID  - r1\nTI  - " + TITLE + "\nAU  - Abrahao, Bruno\nAU  - Parigi, Paolo\nPY  - 2017\n"
        "DO  - 10.1073/pnas.1604234114\nER  - \n\n"
        "TY  - JOUR\nID  - r2\nTI  - " + TITLE + "\nAU  - Abrahao, B.\nPY  - 2017\nER  - \n",
        encoding="utf-8",
    )
    result, warnings = dedupe_table(read_bibliography(path))
    assert result["cluster_id"].nunique() == 1 and warnings == []


def test_read_bibtex_reports_unparsable_blocks(tmp_path: Path):
    path = tmp_path / "export.bib"
    path.write_text(
        "@article{k1, title={" + TITLE + "}, author={Abrahao, Bruno and Parigi, Paolo}, year={2017}}\n"
        "@article{k2, title={" + TITLE + "}, author={Abrahao, B.}, year=2017}\n"
        "@article{broken, title={unbalanced, year=2017\n",
        encoding="utf-8",
    )
    frame = read_bibliography(path)
    assert frame["ID"].tolist()[:2] == ["k1", "k2"]
    result, warnings = dedupe_table(frame)
    assert result.loc[0, "cluster_id"] == result.loc[1, "cluster_id"]
    assert any("could not be parsed" in warning for warning in warnings)
    assert "1 of 3 BibTeX entries could not be parsed and were skipped (line 3 of 'export.bib')" in warnings[0]


def test_a_ris_record_without_its_end_tag_is_kept_and_stray_lines_are_reported(tmp_path: Path):
    path = tmp_path / "export.ris"
    path.write_text(
        "Exported by a reference manager\n"
        "TY  - JOUR\nID  - r1\nTI  - " + TITLE + "\nPY  - 2017\n"  # no ER: read up to the next TY
        "TY  - JOUR\nID  - r2\nTI  - " + TITLE + "\nPY  - 2017\nER  - \n"
        "stray text between records\n"
        "TY  - JOUR\nID  - r3\nTI  - Another study of trust\nPY  - 2019\n",  # no ER at the end either
        encoding="utf-8",
    )
    frame = read_bibliography(path)
    assert frame["id"].tolist() == ["r1", "r2", "r3"]
    assert frame.attrs["warnings"] == [
        "Line 2 of 'export.ris' opens a record with no 'ER  - ' line; it was read up to line 5.",
        "Line 12 of 'export.ris' opens a record with no 'ER  - ' line; it was read up to the end of the file.",
        "Lines 1, 11 of 'export.ris' lie outside any record (no 'TY  - ' line opens them) and were skipped.",
    ]
    result, _ = dedupe_table(frame)
    assert result.loc[0, "cluster_id"] == result.loc[1, "cluster_id"] != result.loc[2, "cluster_id"]


def test_a_file_named_ris_without_any_record_fails_in_one_line(tmp_path: Path):
    path = tmp_path / "notes.ris"
    path.write_text("These are my notes\nTI  - not in a record\n", encoding="utf-8")
    with pytest.raises(BibliographyError, match="'notes.ris' holds no RIS record: each record starts with a 'TY  - '"):
        read_bibliography(path)


def test_an_unclosed_quote_fails_with_the_line_it_opens(tmp_path: Path):
    path = tmp_path / "broken.csv"
    path.write_text('ID,title,author\n1,"Open quote title,Smith\n2,Fine title,Jones\n3,Other,Roe\n', encoding="utf-8")
    with pytest.raises(BibliographyError, match="Line 2 of 'broken.csv' opens a quote that is never closed"):
        read_bibliography(path)
    path.write_text(
        'ID,title,author\n1,"A title spanning\ntwo lines",Smith\n2,"5"" floppy disks",Jones\n', encoding="utf-8"
    )
    assert read_bibliography(path)["title"].tolist() == ["A title spanning\ntwo lines", '5" floppy disks']


def test_long_fields_and_repeated_headers_are_read(tmp_path: Path):
    path = tmp_path / "export.csv"
    path.write_text(f"ID,title,title,abstract\n1,A long study,Dup,{'x' * 300_000}\n", encoding="utf-8")
    frame = read_bibliography(path)
    assert list(frame.columns) == ["ID", "title", "title-2", "abstract"] and len(frame.loc[0, "abstract"]) == 300_000
    assert "Column 'title' appears more than once" in frame.attrs["warnings"][0]
    assert dedupe_table(frame)[0]["cluster_id"].notna().all()
    path.write_text(f"ID,title\n1,{'y' * 200_000}\n", encoding="utf-8")  # a one-word title 200 kB long
    [warning] = dedupe_table(read_bibliography(path))[1]
    assert "has a one-word title ('yyyy" in warning and len(warning) < 300


def test_binary_input_is_refused(tmp_path: Path):
    path = tmp_path / "paper.csv"
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 50)
    with pytest.raises(BibliographyError, match="not a text file"):
        read_bibliography(path)


def test_one_warning_when_no_column_is_recognised(tmp_path: Path):
    path = tmp_path / "odd.csv"
    path.write_text("foo,bar\n1,2\n3,4\n", encoding="utf-8")
    _, warnings = dedupe_table(read_bibliography(path))
    assert [w for w in warnings if "no duplicate can be found" in w] and not [
        w for w in warnings if "usable title" in w
    ]
