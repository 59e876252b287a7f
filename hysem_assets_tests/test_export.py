"""`hysem export` on the sample as `hysem demo` leaves it, and lists written as lists in every CSV and XLSX.

The module reads a copy of the home one `hysem demo` of the whole run left (``demo_home``).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import bibtexparser
import numpy as np
import pandas as pd
import pytest
import rispy
from click.testing import CliRunner
from openpyxl import load_workbook

from hysem_assets.cli import SAMPLE_QUERY, main
from hysem_assets.core.cells import cell_text, text_cells
from hysem_assets.core.spreadsheets import csv_text
from hysem_assets.screening.outcome import included_ids
from hysem_assets.settings.environment import asset_file
from hysem_assets.stores.tables import read_table, write_parquet
from hysem_assets_tests.aggregations import NOTICE_TYPES
from hysem_assets_tests.library.corpus import sample_corpus

FORMATS = ("bibtex", "ris", "csv", "xlsx")
#: A list as Python or numpy print it: quoted items in brackets, a numpy array, a dict with quoted keys.
_REPR = re.compile(r"^\[\s*['\"].*['\"]\s*\]$|^\{\s*'", re.S)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def looks_like_a_repr(cell: str) -> bool:
    """Whether a written cell is a list in some language's print form instead of its items."""
    return "array(" in cell or bool(_REPR.match(cell.strip()))


@pytest.fixture
def sample_home(demo_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HYSEM_HOME where `hysem demo` ran on the sample query."""
    monkeypatch.setenv("HYSEM_HOME", str(demo_home))
    return demo_home


def exported_ids(path: Path, fmt: str, keys: dict[str, str]) -> list[str]:
    """The cluster ids of the works in an exported file, read back with a reader of its format; BibTeX
    entries through their citation keys (``keys``: key -> cluster id)."""
    text = path.read_text(encoding="utf-8") if fmt in ("bibtex", "ris") else None
    if fmt == "bibtex":
        return [keys[entry["ID"]] for entry in bibtexparser.loads(text).entries]
    if fmt == "ris":
        return [record["id"] for record in rispy.loads(text)]
    if fmt == "csv":
        return pd.read_csv(path, dtype=str)["cluster_id"].tolist()
    rows = list(load_workbook(path).active.iter_rows(values_only=True))
    return [row[rows[0].index("cluster_id")] for row in rows[1:]]


@pytest.mark.parametrize("fmt", FORMATS)
def test_export_writes_the_included_studies_and_with_all_every_work(sample_home: Path, tmp_path: Path, fmt: str):
    corpus = read_table(asset_file("deduped_corpus", SAMPLE_QUERY))
    included = included_ids(read_table(asset_file("screening", SAMPLE_QUERY)))
    library = read_table(asset_file("library", SAMPLE_QUERY))
    keys = dict(zip(library["bibtex_key"], library["cluster_id"], strict=True))
    notices = corpus["item_type"].fillna("").str.casefold().isin(NOTICE_TYPES)
    not_studies = set(corpus.loc[notices | corpus["is_retracted"].fillna(False).astype(bool), "cluster_id"])
    assert not_studies and 0 < len(included) < len(corpus)

    path = tmp_path / f"included.{fmt}"
    ran = invoke("export", "--query", SAMPLE_QUERY, fmt, "-o", str(path))
    assert ran.exit_code == 0, ran.output
    written = exported_ids(path, fmt, keys)
    assert len(written) == len(set(written)) and set(written) == set(included)
    assert not set(written) & not_studies
    assert f"Wrote {len(included)} included studies" in ran.stderr

    everything = tmp_path / f"all.{fmt}"
    assert invoke("export", "--query", SAMPLE_QUERY, fmt, "--all", "-o", str(everything)).exit_code == 0
    assert sorted(exported_ids(everything, fmt, keys)) == sorted(corpus["cluster_id"])


def test_export_csv_holds_each_works_authors_as_a_list(sample_home: Path, tmp_path: Path):
    path = tmp_path / "included.csv"
    assert invoke("export", "--query", SAMPLE_QUERY, "csv", "-o", str(path)).exit_code == 0
    written = pd.read_csv(path, dtype=str, keep_default_na=False).set_index("cluster_id")
    corpus = read_table(asset_file("deduped_corpus", SAMPLE_QUERY)).set_index("cluster_id")
    for cluster_id, names in written["authors"].items():
        assert names.split("; ") == [name.strip() for name in corpus.loc[cluster_id, "authors"]]


def test_every_csv_and_xlsx_of_the_sample_writes_its_lists_as_lists(sample_home: Path, tmp_path: Path):
    """The files the demo writes, every asset as `hysem show --format csv` gives it, and the exports."""
    shown = tmp_path / "shown"
    shown.mkdir()
    for table in sorted((sample_home / "assets").rglob(f"{SAMPLE_QUERY}.parquet")):
        asset = table.parent.relative_to(sample_home / "assets").as_posix()
        target = shown / f"{asset.replace('/', '_')}.csv"
        assert invoke("show", asset, "--query", SAMPLE_QUERY, "--format", "csv", "-o", str(target)).exit_code == 0
    for fmt in ("csv", "xlsx"):
        assert (
            invoke("export", "--query", SAMPLE_QUERY, fmt, "--all", "-o", str(tmp_path / f"all.{fmt}")).exit_code == 0
        )
    files = [p for root in (sample_home, tmp_path) for p in root.rglob("*") if p.suffix in (".csv", ".tsv", ".xlsx")]
    assert {"evidence_table.csv", "evidence_table.xlsx", "deduped_corpus.csv", "all.xlsx"} <= {p.name for p in files}
    offenders = {str(path): bad[:3] for path in files if (bad := [c for c in cells(path) if looks_like_a_repr(c)])}
    assert offenders == {}, f"lists written as a language's repr in: {', '.join(offenders)}"


def cells(path: Path) -> list[str]:
    """Every text cell of a CSV, TSV or XLSX file."""
    if path.suffix == ".xlsx":
        workbook = load_workbook(path, read_only=True)
        return [str(v) for sheet in workbook for row in sheet.iter_rows(values_only=True) for v in row if v]
    text = path.read_text(encoding="utf-8")
    csv.field_size_limit(len(text) + 1)
    return [cell for row in csv.reader(io.StringIO(text, newline=""), delimiter="\t" if path.suffix == ".tsv" else ",")
            for cell in row]  # fmt: skip


def test_the_repr_check_knows_a_list_from_a_bracketed_title():
    written = pd.DataFrame({"authors": [np.array(["Romano, Chiara", "Brunner, Lukas"], dtype=object)]}).to_csv()
    assert looks_like_a_repr(next(csv.reader(io.StringIO(written.splitlines()[1])))[1])
    assert looks_like_a_repr("['a', 'b']") and looks_like_a_repr("array([1, 2])") and looks_like_a_repr("{'n': 1}")
    assert not looks_like_a_repr("[Air pollution and the heart]") and not looks_like_a_repr('{"n": 1}')
    assert not looks_like_a_repr("Romano, Chiara; Brunner, Lukas")


def test_list_cells_are_their_items_and_other_cells_stay_as_they_are():
    assert (
        cell_text(np.array(["Romano, Chiara", None, "Brunner, Lukas"], dtype=object))
        == "Romano, Chiara; Brunner, Lukas"
    )
    assert cell_text([1.0, 2.5, float("nan")]) == "1; 2.5" and cell_text(("b", "a")) == "b; a"
    assert cell_text({"b", "a"}) == "a; b" and cell_text([]) == ""
    assert cell_text({"n": 120, "unit": "people", "note": None}) == "n: 120, unit: people"
    assert cell_text([{"term": "PM2.5"}, ["x", "y"]]) == "term: PM2.5; x; y"
    for kept in ("[Air pollution]", 3, 2.5, None, True):
        assert cell_text(kept) is kept
    frame = pd.DataFrame({"authors": [np.array(["=cmd", "Lima, A"], dtype=object)], "year": [2021]})
    assert text_cells(frame).loc[0, "authors"] == "=cmd; Lima, A" and frame.loc[0, "authors"][0] == "=cmd"
    assert csv_text(frame).splitlines()[1] == '"\'=cmd; Lima, A",2021'  # joined, then made inert


def test_export_of_a_bad_query_writes_nothing(tmp_path: Path):
    path = tmp_path / "out.bib"
    ran = CliRunner().invoke(main, ["export", "--query", "no-such-query", "bibtex", "-o", str(path)])
    assert ran.exit_code == 1 and "no-such-query" in ran.output and len(ran.output.strip().splitlines()) == 1
    assert not path.exists()


def stored_corpus_only() -> pd.DataFrame:
    corpus = sample_corpus()
    write_parquet(corpus, asset_file("deduped_corpus", SAMPLE_QUERY))
    return corpus


def test_export_before_screening_says_what_to_run_and_all_needs_only_the_corpus(tmp_path: Path):
    ran = CliRunner().invoke(main, ["export", "--query", SAMPLE_QUERY, "ris", "-o", str(tmp_path / "a.ris")])
    assert ran.exit_code == 1 and "--select deduped_corpus" in ran.output and not (tmp_path / "a.ris").exists()
    corpus = stored_corpus_only()
    ran = CliRunner().invoke(main, ["export", "--query", SAMPLE_QUERY, "ris", "-o", str(tmp_path / "b.ris")])
    assert ran.exit_code == 1 and len(ran.output.strip().splitlines()) == 1
    assert "screening is not materialized" in ran.output and "--select screening" in ran.output
    assert not (tmp_path / "b.ris").exists()
    assert invoke("export", "--query", SAMPLE_QUERY, "ris", "--all", "-o", str(tmp_path / "c.ris")).exit_code == 0
    records = rispy.loads((tmp_path / "c.ris").read_text(encoding="utf-8"))
    assert [record["id"] for record in records] == corpus["cluster_id"].tolist()


def test_export_of_a_screening_from_before_the_included_column_asks_to_materialize_it_again(tmp_path: Path):
    corpus = stored_corpus_only()
    older = pd.DataFrame({"cluster_id": corpus["cluster_id"], "decision": "undecided", "proceeds": True})
    write_parquet(older, asset_file("screening", SAMPLE_QUERY))
    ran = CliRunner().invoke(main, ["export", "--query", SAMPLE_QUERY, "csv", "-o", str(tmp_path / "a.csv")])
    assert ran.exit_code == 1 and len(ran.output.strip().splitlines()) == 1
    assert "older than this version" in ran.output and "--select 'screening*'" in ran.output
    assert not (tmp_path / "a.csv").exists()
