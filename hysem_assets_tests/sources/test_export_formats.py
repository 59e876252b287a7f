"""Each export format read from real files (REALDATA, by path) and from fixtures in the exporting tools' own shape."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from hysem_assets.sources.exports import read_export
from hysem_assets_tests.paths import REALDATA, needs_realdata

EXPORTS = REALDATA / "exports_rispy"
BIB_DEDUPE = REALDATA / "dedup_bib_dedupe"


def _count(path: Path, pattern: str) -> int:
    return len(re.findall(pattern, path.read_text(encoding="utf-8-sig"), re.MULTILINE))


def _by_id(records: list[dict]) -> dict[str, dict]:
    return {record["source_id"]: record for record in records}


# --- real files ---------------------------------------------------------------------------------


@needs_realdata
def test_web_of_science_plain_text():
    path = EXPORTS / "example_wos.ris"
    read = read_export(path, "wos")
    assert (read.format, read.warnings) == ("Web of Science plain text", [])
    assert len(read.records) == _count(path, r"^ER\s*$") == 2
    record = _by_id(read.records)["WOS:000221807500019"]
    assert record["title"] == (
        "Interactions stabilizing the structure of the core light-harvesting complex (LHl) of photosynthetic "
        "bacteria and its subunit (B820)"
    )
    assert (record["doi"], record["year"], record["pmid"], record["pages"]) == (
        "10.1021/bi049798f",
        2004,
        "15170338",
        "7003-7016",
    )
    assert record["authors"] == ["Parkes-Loach, PS", "Majeed, AP", "Law, CJ", "Loach, PA"]
    assert (record["journal"], record["item_type"], record["language"]) == (
        "BIOCHEMISTRY",
        "journal-article",
        "English",
    )


@needs_realdata
def test_medline_nbib():
    path = EXPORTS / "example_pubmed.txt"
    read = read_export(path, "pubmed-export")
    assert (read.format, read.warnings) == ("MEDLINE (NBIB)", [])
    assert len(read.records) == _count(path, r"^PMID- ") == 10
    record = _by_id(read.records)["21251189"]
    assert record["title"] == "Biology of the sauropod dinosaurs: the evolution of gigantism."
    assert (record["doi"], record["year"], record["pmid"], record["volume"], record["issue"], record["pages"]) == (
        "10.1111/j.1469-185x.2010.00137.x",
        2011,
        "21251189",
        "86",
        "1",
        "117-55",
    )
    assert record["authors"][:2] == ["Sander, P Martin", "Christian, Andreas"]
    assert record["first_author"] == "Sander"
    assert record["item_type"] == "review"  # PubMed's own precedence: Review over Journal Article
    assert record["abstract"].startswith("The herbivorous sauropod dinosaurs of the Jurassic and Cretaceous")
    assert "\n" not in record["abstract"]  # continuation lines joined
    assert _by_id(read.records)["35444275"]["authors"][1] == "Nicolaï, Michaël"


@needs_realdata
def test_endnote_ris():
    path = EXPORTS / "example_endnote.ris"
    read = read_export(path, "endnote")
    assert (read.format, read.warnings) == ("RIS", [])
    assert len(read.records) == _count(path, r"^ER  -") == 1
    (record,) = read.records
    assert record["source_id"] == "123"  # the ID tag: the record number in that library
    assert (record["title"], record["doi"], record["year"], record["journal"]) == (
        "EndNote: The Only Reference I Can Remember",
        "10.1234/endnote.joke.2024",
        2024,
        "Journal of Reference Management",
    )
    assert record["authors"] == ["Smith, A. Nonymous", "Doe, J.", "End, N. Ote", "Ref, E. Rence"]


@needs_realdata
def test_ris_edge_cases():
    full = read_export(EXPORTS / "example_full.ris", "x")
    assert len(full.records) == _count(EXPORTS / "example_full.ris", r"^ER  -") == 2
    assert [record["source_id"] for record in full.records] == ["12345", "12345-2"]  # both records say ID 12345
    assert [record["year"] for record in full.records] == [2014, 2006]
    assert full.warnings[0] == "lines 1, 26 lie outside any record (no 'TY  - ' line opens them) and were skipped."
    assert full.warnings[1].startswith("record 2 (line 27, id '12345'): id '12345' is also that of record 1")

    urls = read_export(EXPORTS / "example_urls.ris", "x")
    assert len(urls.records) == _count(EXPORTS / "example_urls.ris", r"^ER  -") == 4
    assert {record["title"] for record in urls.records} == {"A Mathematical Theory of Communication"}
    assert [record["pages"] for record in urls.records] == ["379-423"] * 4
    assert len({record["source_id"] for record in urls.records}) == 4 and len(urls.warnings) == 3

    utf = read_export(EXPORTS / "example_utf_chars.ris", "x")
    assert utf.encoding == "utf-8-sig"
    (record,) = utf.records
    assert record["title"].startswith("Состояние рецепторного аппарата эндометрия")
    assert (record["item_type"], record["volume"], record["pages"]) == ("journal-article", "8", "52-57")

    for name, count in (("example_bom.ris", 1), ("example_multiline.ris", 3)):
        untitled = read_export(EXPORTS / name, "x")  # these records have no title at all: each is named
        assert untitled.records == []
        assert len(untitled.warnings) == count == _count(EXPORTS / name, r"^ER  -")
        assert all(re.match(r"record \d+ \(line \d+\): no title; skipped", line) for line in untitled.warnings)


@needs_realdata
@pytest.mark.parametrize("dataset", ["cytology_screening", "respiratory", "special_cases"])
def test_generic_csv_every_row_read_with_its_id(dataset):
    path = BIB_DEDUPE / dataset / "records_pre_merged.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    read = read_export(path, "bib-dedupe")
    assert read.format == "CSV"
    assert [record["source_id"] for record in read.records] == [row["ID"] for row in rows]
    assert [record["title"] for record in read.records] == [" ".join(row["title"].split()) for row in rows]
    assert all(not line.startswith(("row ", "record ")) for line in read.warnings)
    first = read.records[0]
    assert first["year"] == int(rows[0]["year"])
    assert first["first_author"] == rows[0]["author"].split(",")[0]


@needs_realdata
def test_generic_csv_names_the_double_decoded_line():
    read = read_export(BIB_DEDUPE / "respiratory" / "records_pre_merged.csv", "x")
    assert read.warnings == [
        "Line 228 of 'records_pre_merged.csv' holds 'Ã©', UTF-8 text decoded twice before it was exported (e.g. "
        "'Ã©' for 'é'); the text was kept as it is. Fix the records in the database or reference manager."
    ]


# --- fixtures in the tools' own shape -----------------------------------------------------------

SCOPUS = (
    '\ufeff"Authors","Author full names","Author(s) ID","Title","Year","Source title","Volume","Issue","Art. No.",'
    '"Page start","Page end","Page count","Cited by","DOI","Link","Abstract","Author Keywords",'
    '"Language of Original Document","Document Type","Publication Stage","Open Access","Source","EID"\n'
    '"Müller J.; Smith J.P.","Müller, Jana (57190000001); Smith, John P. (57190000002)","57190000001; 57190000002",'
    '"Soil carbon under agroforestry","2019","Agriculture, Ecosystems and Environment","278","","","101","109","9",'
    '"12","10.1016/j.agee.2019.01.001","https://www.scopus.com/inward/record.uri?eid=2-s2.0-85061234567",'
    '"Agroforestry stores carbon. © 2019 Elsevier B.V.","carbon","English","Article","Final","","Scopus",'
    '"2-s2.0-85061234567"\n'
    '"Doe A.","Doe, Anne (57190000003)","57190000003","Hedgerows and soil carbon","2020",'
    '"Proceedings of the Soil Conference 2020","","","e12","","","","0","","","","","English",'
    '"Conference Paper","Final","","Scopus","2-s2.0-85071234567"\n'
)

COVIDENCE = (
    '"Title","Authors","Abstract","Published Year","Published Month","Journal","Volume","Issue","Pages",'
    '"Accession Number","DOI","Ref","Covidence #","Study","Notes","Tags"\n'
    '"Soil carbon under agroforestry","Müller, J.; Smith, J. P.","Agroforestry stores carbon.","2019","Jan",'
    '"Agriculture, Ecosystems and Environment","278","","101-109","620000001","10.1016/j.agee.2019.01.001","",'
    '"#12","Müller 2019","",""\n'
    '"","Doe, A.","","2020","","Soil","","","","","","","#13","Doe 2020","",""\n'
)

WOS_TABBED = (
    "PT\tAU\tAF\tTI\tSO\tLA\tDT\tAB\tPY\tVL\tIS\tBP\tEP\tAR\tDI\tPM\tUT\t\n"
    "J\tParkes-Loach, PS; Majeed, AP\tParkes-Loach, Pamela S.; Majeed, Aamir P.\tInteractions stabilizing the "
    "core complex\tBIOCHEMISTRY\tEnglish\tArticle\tReconstitution experiments.\t2004\t43\t22\t7003\t7016\t\t"
    "10.1021/bi049798f\t15170338\tWOS:000221807500019\t\n"
    "J\tCao, WX\tCao, Wenxiang\tLigand binding kinetics\tBIOCHEMISTRY\tEnglish\tArticle; Proceedings Paper\t\t2004"
    "\t43\t22\t\t\te0123\t\t\tWOS:000221807500020\t\n"
)


def test_scopus_csv(tmp_path):
    path = tmp_path / "scopus.csv"
    path.write_text(SCOPUS, encoding="utf-8")
    read = read_export(path, "scopus-export")
    assert (read.format, read.encoding, read.warnings) == ("CSV (Scopus)", "utf-8-sig", [])
    first, second = read.records
    assert first["source_id"] == "2-s2.0-85061234567"  # the EID, as the Scopus API source names it
    assert first["authors"] == ["Müller, Jana", "Smith, John P."]
    assert (first["first_author"], first["year"], first["pages"], first["doi"]) == (
        "Müller",
        2019,
        "101-109",
        "10.1016/j.agee.2019.01.001",
    )
    assert (first["journal"], first["item_type"], first["language"]) == (
        "Agriculture, Ecosystems and Environment",
        "journal-article",
        "English",
    )
    assert first["abstract"] == "Agroforestry stores carbon."  # the publisher's notice dropped, as the API source does
    assert (second["item_type"], second["pages"], second["doi"]) == ("conference-paper", "e12", None)


def test_covidence_csv_skips_and_names_a_row_without_title(tmp_path):
    path = tmp_path / "covidence.csv"
    path.write_text(COVIDENCE, encoding="utf-8")
    read = read_export(path, "covidence")
    assert read.format == "CSV (Covidence)"
    (record,) = read.records
    assert record["source_id"] == "#12"
    assert (record["authors"], record["year"], record["pages"], record["pmid"]) == (
        ["Müller, J.", "Smith, J. P."],
        2019,
        "101-109",
        None,
    )
    assert read.warnings == [
        "row 2 (line 3, id '#13'): no title; skipped. Add its title in the database and export it again."
    ]


def test_web_of_science_tab_delimited_in_utf16(tmp_path):
    path = tmp_path / "savedrecs.txt"
    path.write_bytes(b"\xff\xfe" + WOS_TABBED.encode("utf-16-le"))
    read = read_export(path, "wos")
    assert (read.format, read.encoding, read.warnings) == ("Web of Science tab-delimited", "utf-16-le", [])
    first, second = read.records
    assert first["source_id"] == "WOS:000221807500019"
    assert first["authors"] == ["Parkes-Loach, Pamela S.", "Majeed, Aamir P."]
    assert (first["pages"], first["doi"], first["pmid"], first["year"]) == (
        "7003-7016",
        "10.1021/bi049798f",
        "15170338",
        2004,
    )
    assert (second["item_type"], second["publication_types"], second["pages"]) == (
        "conference-paper",
        "Article; Proceedings Paper",
        "e0123",
    )


WOS_PLAIN = """FN Clarivate Analytics Web of Science
VR 1.0
PT J
AU Cao, WX
TI Ligand binding
   kinetics
PY 2004
UT WOS:1
PT J
AU Doe, A
TI Second record
PY 2005
UT WOS:2
ER

EF
"""


def test_web_of_science_record_missing_er_is_read_and_named(tmp_path):
    path = tmp_path / "wos.txt"
    path.write_text(WOS_PLAIN, encoding="utf-8")
    read = read_export(path, "wos")
    assert [(record["source_id"], record["title"]) for record in read.records] == [
        ("WOS:1", "Ligand binding kinetics"),
        ("WOS:2", "Second record"),
    ]
    assert read.warnings == [
        "record 1 (line 3) has no 'ER' line; it was read up to line 8 (the next record or the end of the file). "
        "Check that the file is complete."
    ]


NBIB = """PMID- 111
TI  - A complete record about
      soil carbon.
FAU - Müller, Jana
AU  - Müller J
DP  - 2019 Nov
LID - 10.1000/one [doi]
PT  - Journal Article
SO  - Soil. 2019 Nov;1(1):1-2.

PMID- 222
TI  - A record the download cut
FAU - Doe, Anne
"""


def test_nbib_cut_inside_the_last_record_keeps_it_when_it_has_a_title(tmp_path):
    path = tmp_path / "pubmed.nbib"
    path.write_text(NBIB, encoding="utf-8")
    read = read_export(path, "pubmed-export")
    assert [(record["source_id"], record["title"]) for record in read.records] == [
        ("111", "A complete record about soil carbon."),
        ("222", "A record the download cut"),
    ]
    assert read.records[0]["doi"] == "10.1000/one" and read.records[0]["year"] == 2019
    assert read.warnings == [
        "record 2 (line 11, id '222') has no 'SO  - ' line: the file seems cut off inside it; it was kept with the "
        "fields read. Download the export again to complete it."
    ]


def test_nbib_cut_before_the_title_names_the_record_unreadable(tmp_path):
    path = tmp_path / "pubmed.nbib"
    path.write_text(NBIB.split("TI  - A record the download cut")[0], encoding="utf-8")
    read = read_export(path, "pubmed-export")
    assert [record["source_id"] for record in read.records] == ["111"]
    assert read.warnings == [
        "record 2 (line 11, id '222'): the file is cut off inside it before its title, so it is unreadable and was "
        "skipped. Download the export again."
    ]


def test_excel_style_semicolon_csv_in_cp1252_without_id_column_gets_hashed_ids(tmp_path):
    path = tmp_path / "rayyan.csv"
    text = 'title;authors;year;journal;doi\n"Café workers\' sleep";"Doé, Anne and Roe, B.";2021;Sleep;10.1/x\n'
    path.write_bytes(text.encode("cp1252"))
    read = read_export(path, "rayyan")
    assert (read.format, read.encoding) == ("CSV", "cp1252")
    (record,) = read.records
    assert (record["title"], record["authors"], record["first_author"]) == (
        "Café workers' sleep",
        ["Doé, Anne", "Roe, B."],
        "Doé",
    )
    assert record["source_id"].startswith("h:")
    assert record["doi"] is None  # "10.1/x" is no DOI: named, not kept
    assert read.warnings[1] == "row 1 (line 2): DOI field '10.1/x' holds no DOI; left empty."
    assert all("\n" not in line for line in read.warnings)
