"""Database export files read into normalized records: decoding, refusals, repairs, ids and size."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hysem_assets.core.records import CORE_COLUMNS
from hysem_assets.sources.exports import ExportError, read_export

RIS = """TY  - JOUR
AN  - 620000001
TI  - Soil carbon under agroforestry: a meta-analysis
AU  - Müller, Jana
AU  - Smith, J. P.
PY  - 2019
T2  - Agriculture, Ecosystems and Environment
VL  - 12
IS  - 3
SP  - 101
EP  - 109
DO  - https://doi.org/10.1016/J.AGEE.2019.01.001
AB  - Agroforestry stores carbon.
LA  - English
ER  - 

TY  - CONF
AN  - 620000002
TI  - Hedgerows and soil carbon
AU  - Doe, Anne
PY  - 2020
M3  - Conference Abstract
ER  - 
"""


def _write(tmp_path: Path, name: str, content: str | bytes, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode(encoding))
    return path


def test_ris_records_have_every_core_column_and_normalized_values(tmp_path):
    read = read_export(_write(tmp_path, "embase.ris", RIS), "embase")
    assert (read.format, read.encoding, read.warnings) == ("RIS", "utf-8", [])
    first, second = read.records
    assert list(first) == list(CORE_COLUMNS)
    assert first["source"] == "embase"
    assert first["source_id"] == "620000001"
    assert first["doi"] == "10.1016/j.agee.2019.01.001"
    assert first["authors"] == ["Müller, Jana", "Smith, J. P."]
    assert first["first_author"] == "Müller"
    assert (first["year"], first["journal"], first["volume"], first["issue"], first["pages"]) == (
        2019,
        "Agriculture, Ecosystems and Environment",
        "12",
        "3",
        "101-109",
    )
    assert first["item_type"] == "journal-article"
    assert first["abstract"] == "Agroforestry stores carbon."
    assert '"title":"Soil carbon under agroforestry: a meta-analysis"' in first["raw"]
    assert second["item_type"] == "conference-abstract"  # Embase's M3 under TY CONF
    assert second["publication_types"] == "Conference Abstract"


MEDLINE_WITH_PMC = """PMID- 34465012
TI  - Heat and fine particles in Hanoi.
FAU - Nguyen, Thi Lan
DP  - 2021 Nov
PMC - PMC8398114
SO  - Atmos Health Inform. 2021 Nov;4(4):301-315.
"""


def test_pmcids_are_read_from_medline_ris_custom2_and_a_csv_column(tmp_path):
    [medline] = read_export(_write(tmp_path, "pubmed.nbib", MEDLINE_WITH_PMC), "pubmed-export").records
    assert (medline["pmid"], medline["pmcid"]) == ("34465012", "PMC8398114")
    ris = RIS.replace("LA  - English\n", "LA  - English\nC2  - PMC5815332\n").replace(
        "M3  - Conference Abstract\n", "M3  - Conference Abstract\nC2  - Not a PMCID\n"
    )
    first, second = read_export(_write(tmp_path, "endnote.ris", ris), "endnote").records
    assert (first["pmcid"], second["pmcid"]) == ("PMC5815332", None)
    csv = "Title,PMCID\nWith a PMCID,pmc123\nWithout one,\n"
    with_id, without = read_export(_write(tmp_path, "sheet.csv", csv), "sheet").records
    assert (with_id["pmcid"], without["pmcid"]) == ("PMC123", None)


def test_ids_are_stable_across_imports_and_hashed_where_the_file_has_none(tmp_path):
    text = RIS.replace("AN  - 620000001\n", "").replace("AN  - 620000002\n", "")
    first = [record["source_id"] for record in read_export(_write(tmp_path, "a.ris", text), "x").records]
    again = [record["source_id"] for record in read_export(_write(tmp_path, "b.ris", text), "x").records]
    assert first == again
    assert all(record_id.startswith("h:") and len(record_id) == 18 for record_id in first)
    # the same record re-exported with other whitespace and case keeps its id
    reexported = text.replace(
        "TI  - Soil carbon under agroforestry: a meta-analysis",
        "TI  - SOIL  carbon under agroforestry - a meta-analysis",
    )
    assert read_export(_write(tmp_path, "c.ris", reexported), "x").records[0]["source_id"] == first[0]


def test_repeated_ids_are_suffixed_and_named_never_dropped(tmp_path):
    text = RIS.replace("620000002", "620000001")
    read = read_export(_write(tmp_path, "dup.ris", text), "x")
    assert [record["source_id"] for record in read.records] == ["620000001", "620000001-2"]
    assert read.warnings == [
        "record 2 (line 17, id '620000001'): id '620000001' is also that of record 1 (line 1, id '620000001'); "
        "this record is kept as '620000001-2'."
    ]


def test_a_record_without_title_is_skipped_and_named(tmp_path):
    text = RIS.replace("TI  - Hedgerows and soil carbon\n", "")
    read = read_export(_write(tmp_path, "untitled.ris", text), "x")
    assert [record["source_id"] for record in read.records] == ["620000001"]
    assert read.warnings == [
        "record 2 (line 17, id '620000002'): no title; skipped. Add its title in the database and export it again."
    ]


def test_ris_record_missing_er_before_the_next_ty_and_at_the_end(tmp_path):
    text = RIS.replace("LA  - English\nER  - \n", "LA  - English\n").rstrip("ER  - \n") + "\n"
    read = read_export(_write(tmp_path, "cut.ris", text), "x")
    assert [record["title"] for record in read.records] == [
        "Soil carbon under agroforestry: a meta-analysis",
        "Hedgerows and soil carbon",
    ]
    assert read.records[0]["language"] == "English"  # the next TY did not leak into it
    assert read.warnings == [
        "record 1 (line 1) has no 'ER  - ' line; it was read up to line 14 (the next record or the end of the file). "
        "Check that the file is complete.",
        "record 2 (line 16) has no 'ER  - ' line; it was read up to line 21 (the next record or the end of the "
        "file). Check that the file is complete.",
    ]


def test_bad_values_are_left_empty_and_named(tmp_path):
    text = RIS.replace("PY  - 2019", "PY  - n.d.").replace(
        "DO  - https://doi.org/10.1016/J.AGEE.2019.01.001", "DO  - n/a"
    )
    read = read_export(_write(tmp_path, "values.ris", text), "x")
    assert (read.records[0]["year"], read.records[0]["doi"]) == (None, None)
    assert read.warnings == [
        "record 1 (line 1, id '620000001'): year 'n.d.' is not a publication year; left empty.",
        "record 1 (line 1, id '620000001'): DOI field 'n/a' holds no DOI; left empty.",
    ]


# --- decoding -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "prefix", "expected"),
    [
        ("utf-8", b"", "utf-8"),
        ("utf-8", b"\xef\xbb\xbf", "utf-8-sig"),
        ("utf-16-le", b"\xff\xfe", "utf-16-le"),
        ("utf-16-be", b"\xfe\xff", "utf-16-be"),
    ],
)
def test_unicode_encodings_are_read_by_their_bom(tmp_path, encoding, prefix, expected):
    read = read_export(_write(tmp_path, "u.ris", prefix + RIS.encode(encoding)), "x")
    assert (read.encoding, read.warnings) == (expected, [])
    assert read.records[0]["authors"][0] == "Müller, Jana"


def test_utf16_without_bom_is_recognised_by_its_zero_bytes(tmp_path):
    read = read_export(_write(tmp_path, "nobom.ris", RIS.encode("utf-16-le")), "x")
    assert read.encoding == "utf-16-le"
    assert read.records[0]["authors"][0] == "Müller, Jana"
    assert read.warnings == [
        "'nobom.ris' has no byte-order mark but its zero bytes say utf-16-le; it was read as such."
    ]


def test_windows_1252_falls_back_and_says_so(tmp_path):
    text = RIS.replace("Smith, J. P.", "Smith, J. P. ‘Ed’")
    read = read_export(_write(tmp_path, "legacy.ris", text.encode("cp1252")), "x")
    assert read.encoding == "cp1252"
    assert read.records[0]["authors"] == ["Müller, Jana", "Smith, J. P. ‘Ed’"]
    assert read.warnings == [
        "'legacy.ris' is not UTF-8 (line 4 is the first that is not); it was read as cp1252. "
        "If accented names look wrong, export the file as UTF-8."
    ]


def test_one_bad_line_in_utf8_is_read_as_cp1252_and_named_without_mojibake_elsewhere(tmp_path):
    raw = RIS.encode("utf-8").replace(b"Doe, Anne", b"Do\xe9, Anne")
    read = read_export(_write(tmp_path, "mixed.ris", raw), "x")
    assert read.encoding == "utf-8, cp1252 on 1 line"
    assert read.records[0]["authors"][0] == "Müller, Jana"
    assert read.records[1]["authors"] == ["Doé, Anne"]
    assert read.warnings == [
        "'mixed.ris' is UTF-8 except line 20, read as cp1252; check the accented characters of the records there."
    ]


def test_text_decoded_twice_before_export_is_named(tmp_path):
    read = read_export(_write(tmp_path, "twice.ris", RIS.replace("Müller", "MÃ¼ller")), "x")
    assert read.records[0]["authors"][0] == "MÃ¼ller, Jana"
    assert len(read.warnings) == 1 and read.warnings[0].startswith("Line 4 of 'twice.ris' holds 'Ã¼', UTF-8 text")


# --- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("paper.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "'paper.pdf' is a PDF document, not a database export"),
        ("export.zip", b"PK\x03\x04\x14\x00\x00\x00\x08\x00", "'export.zip' is a ZIP archive"),
        ("blob.ris", bytes(range(256)) * 8, "'blob.ris' is not a text file (binary content)"),
    ],
)
def test_binary_files_are_refused_in_one_line(tmp_path, name, content, message):
    with pytest.raises(ExportError) as caught:
        read_export(_write(tmp_path, name, content), "x")
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_file_in_no_known_format_names_the_formats_tried(tmp_path):
    with pytest.raises(ExportError) as caught:
        read_export(_write(tmp_path, "notes.txt", "Dear colleague\nplease find attached\n"), "x")
    assert str(caught.value) == (
        "'notes.txt' is in no export format this reader knows (tried RIS, MEDLINE (NBIB), Web of Science plain "
        "text, Web of Science tab-delimited, CSV); it starts with 'Dear colleague please find attached'. Export "
        "the records from the database as RIS, MEDLINE, Web of Science or CSV."
    )


def test_an_empty_file_is_refused(tmp_path):
    with pytest.raises(ExportError, match=r"^'empty.ris' is in no export format .* it starts with nothing"):
        read_export(_write(tmp_path, "empty.ris", b""), "x")


def test_a_csv_without_title_column_is_refused_naming_its_columns(tmp_path):
    path = _write(tmp_path, "refs.csv", "ID,Authors,Year\n1,Doe A,2020\n")
    with pytest.raises(ExportError) as caught:
        read_export(path, "x")
    assert str(caught.value) == (
        "'refs.csv' (CSV): the table has no title column (title, primary_title, primary title, article_title, "
        "article title, document title, ti); its columns are 'ID', 'Authors', 'Year'. Export the records with "
        "their titles."
    )


def test_a_csv_quote_left_open_is_refused_with_its_line(tmp_path):
    path = _write(tmp_path, "open.csv", 'ID,Title,Year\n1,"First,2020\n2,Second,2021\n')
    with pytest.raises(ExportError, match=r"^'open.csv' \(CSV\): line 2 opens a quote that is never closed"):
        read_export(path, "x")


# --- size -----------------------------------------------------------------------------------------


def test_two_hundred_thousand_ris_records_are_read_in_bounded_time(tmp_path):
    count = 200_000
    lines = []
    for number in range(count):
        lines += [
            "TY  - JOUR",
            f"TI  - Trial {number} of a short intervention",
            f"AU  - Author{number % 97}, A.",
            f"PY  - {1990 + number % 30}",
            "T2  - Journal of Tests",
            f"DO  - 10.1000/t{number}",
            "ER  - ",
            "",
        ]
    path = _write(tmp_path, "big.ris", "\n".join(lines))
    started = time.perf_counter()
    read = read_export(path, "embase")
    elapsed = time.perf_counter() - started
    assert len(read.records) == count
    assert read.warnings == []
    assert len({record["source_id"] for record in read.records}) == count
    assert read.records[-1]["doi"] == f"10.1000/t{count - 1}"
    assert elapsed < 60, f"reading {count} records took {elapsed:.1f} s"
