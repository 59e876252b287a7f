"""CSL-JSON, BibTeX and RIS exports of the corpus, and its table of works (CSV, XLSX)."""

from __future__ import annotations

import json

import bibtexparser
import pandas as pd
import pytest
import rispy
from openpyxl import load_workbook

from hysem_assets.library.csl import to_csl_item
from hysem_assets.library.exports import (
    TABLE_COLUMNS,
    bibtex,
    bibtex_keys,
    csl_json,
    latex,
    ris,
    works_table,
    write_exports,
    write_works,
)
from hysem_assets_tests.library.corpus import sample_corpus

ROMANO = """@article{romano2025multi,
  author = {Romano, Chiara and Brunner, Lukas and Keller, Anna},
  title = {Multi-pollutant exposure and subclinical atherosclerosis: elastic net and {LASSO} regularised regression \
in a Swiss cohort},
  journal = {Journal of environmental cardiology},
  year = {2025},
  volume = {18},
  number = {1},
  pages = {22--35},
  doi = {10.5555/jec.2025.0103},
  pmid = {39874511},
  language = {en},
  abstract = {BACKGROUND: Carotid intima-media thickness. METHODS: 4,402 adults; 95\\% CI \\& more.}
}
"""


def test_bibtex_keys_are_surname_year_and_first_title_word():
    assert bibtex_keys(sample_corpus()) == {
        "c-480b6032ca8d": "romano2025multi",
        "c-d17a15471213": "european2021air",
        "c-66027d8cf906": "sorensen2022machine",
        "c-7c88eabe28d0": "lima2021gradient",
        "c-d2d6d9670727": "mehta2020deep",
        "c-1625a8ad05f5": "obrien2018personal",
    }


def test_colliding_keys_get_letters_in_cluster_id_order_whatever_the_row_order():
    corpus = sample_corpus()
    twins = corpus.iloc[[0, 0, 0]].copy()
    twins["cluster_id"] = ["c-3", "c-1", "c-2"]
    twins.loc[:, "title"] = ["The multi study", "A multi study", "Multi"]  # articles are skipped
    both = pd.concat([corpus, twins], ignore_index=True)
    keys = bibtex_keys(both)
    assert [keys[c] for c in ("c-1", "c-2", "c-3", "c-480b6032ca8d")] == [
        "romano2025multia",
        "romano2025multib",
        "romano2025multic",
        "romano2025multid",
    ]
    assert bibtex_keys(both.iloc[::-1]) == keys
    assert len(set(keys.values())) == len(keys)


def test_bibtex_entry_of_a_journal_article():
    assert bibtex(sample_corpus()).split("\n\n")[0] + "\n" == ROMANO


def test_bibtex_escapes_names_and_uses_entry_types_per_kind():
    text = bibtex(sample_corpus())
    assert (
        "author = {{European Environmental Cardiology Working Group} and Wei{\\ss}, Katrin and "
        "{\\O}degaard, Ingrid}" in text
    )
    assert "Nguy{\\~{\\^{e}}}n, Th{\\d{i}} Lan" in text
    assert "Gagnon, {\\'{E}}tienne" in text
    assert "journal = {International journal of exposure science \\& computation}" in text
    assert "@incollection{sorensen2022machine,\n  author = {S{\\o}rensen, Henrik and Nwosu, Amara}" in text
    assert "booktitle = {Air Pollution and the Heart: A Clinical Compendium}" in text
    assert "@misc{lima2021gradient," in text and "howpublished = {HealthRxiv}" in text and "note = {Preprint}" in text
    assert "@inproceedings{mehta2020deep," in text
    assert "pages = {455--463}" in text
    assert text.isascii()  # every letter in this corpus has a LaTeX spelling
    assert_balanced(text)


def assert_balanced(text: str) -> None:
    """BibTeX counts every brace, escaped or not: each entry's must balance."""
    depth = 0
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0


def test_latex_escapes_specials_and_keeps_scripts_without_latex_spelling():
    assert latex("50% R&D ~x^2_y {a} \\ $5 #1") == (
        "50\\% R\\&D \\textasciitilde{}x\\textasciicircum{}2\\_y \\textbraceleft{}a\\textbraceright{} "
        "\\textbackslash{} \\$5 \\#1"
    )
    assert latex("Łódź – ç") == "{\\L}{\\'{o}}d{\\'{z}} -- {\\c{c}}"
    assert latex("Ελληνικά 中文") == "Ελληνικά 中文"


def test_ris_round_trips_through_rispy():
    text = ris(sample_corpus())
    assert text.startswith("TY  - JOUR\nID  - c-480b6032ca8d\nAU  - Romano, Chiara\n")
    assert "\n1.\n" not in text and not text.startswith("1.")
    records = rispy.loads(text)
    assert [r["type_of_reference"] for r in records] == ["JOUR", "JOUR", "CHAP", "UNPB", "CPAPER", "JOUR"]
    first = records[0]
    assert first["authors"] == ["Romano, Chiara", "Brunner, Lukas", "Keller, Anna"]
    assert (first["start_page"], first["end_page"], first["doi"], first["accession_number"]) == (
        "22",
        "35",
        "10.5555/jec.2025.0103",
        "39874511",
    )
    assert first["abstract"] == "BACKGROUND: Carotid intima-media thickness. METHODS: 4,402 adults; 95% CI & more."
    assert records[1]["authors"][0] == "European Environmental Cardiology Working Group"
    assert records[3]["urls"] == ["https://example.org/hrx.pdf"]
    assert records[5]["end_page"] == "463"


def test_csl_json_is_the_list_of_csl_items():
    corpus = sample_corpus()
    assert json.loads(csl_json(corpus)) == [to_csl_item(row) for row in corpus.to_dict("records")]
    assert "Nguyễn" in csl_json(corpus)  # UTF-8, not \\u escapes


def test_write_exports_writes_the_three_formats(tmp_path):
    corpus = sample_corpus()
    paths = write_exports(corpus, tmp_path / "library", "air-pollution")
    assert {name: path.name for name, path in paths.items()} == {
        "csl-json": "air-pollution.json",
        "bibtex": "air-pollution.bib",
        "ris": "air-pollution.ris",
    }
    assert paths["bibtex"].read_text(encoding="utf-8") == bibtex(corpus)
    assert paths["ris"].read_text(encoding="utf-8") == ris(corpus)
    assert paths["csl-json"].read_text(encoding="utf-8") == csl_json(corpus)


def colliding_corpus() -> pd.DataFrame:
    """The sample corpus and three works whose keys collide with its first one."""
    corpus = sample_corpus()
    twins = corpus.iloc[[0, 0, 0]].copy()
    twins["cluster_id"] = ["c-3", "c-1", "c-2"]
    twins.loc[:, "title"] = ["The multi study", "A multi study", "Multi"]
    return pd.concat([corpus, twins], ignore_index=True)


def test_a_part_of_the_corpus_keeps_the_keys_the_whole_corpus_gives():
    corpus = colliding_corpus()
    keys = bibtex_keys(corpus)
    only = ["c-2", "c-7c88eabe28d0"]
    entries = bibtexparser.loads(bibtex(corpus, only)).entries
    assert sorted(entry["ID"] for entry in entries) == sorted(keys[cluster] for cluster in only)
    assert keys["c-2"] != bibtex_keys(corpus[corpus["cluster_id"] == "c-2"])["c-2"]  # alone it needs no letter
    assert [record["id"] for record in rispy.loads(ris(corpus, only=only))] == ["c-7c88eabe28d0", "c-2"]
    assert works_table(corpus, only).set_index("cluster_id")["bibtex_key"].to_dict() == {c: keys[c] for c in only}
    assert bibtex(corpus, []) == "" and ris(corpus, only=[]) == "" and works_table(corpus, []).empty


def test_the_table_of_works_reads_each_work_as_the_bibliographies_do():
    corpus = sample_corpus()
    table = works_table(corpus)
    assert list(table.columns) == list(TABLE_COLUMNS) and list(table["cluster_id"]) == list(corpus["cluster_id"])
    records = {record["id"]: record for record in rispy.loads(ris(corpus))}
    for row in table.itertuples():
        record = records[row.cluster_id]
        assert list(row.authors) == record["authors"] and row.title == record["title"]
        assert (row.doi or None) == record.get("doi") and str(row.year) == record["year"]
    assert table["bibtex_key"].tolist() == [bibtex_keys(corpus)[c] for c in corpus["cluster_id"]]


@pytest.mark.parametrize("fmt", ["bibtex", "ris", "csv", "xlsx"])
def test_write_works_writes_the_chosen_works_with_authors_as_a_list(tmp_path, fmt):
    corpus = sample_corpus()
    only = list(corpus["cluster_id"].iloc[[4, 0]])
    path = tmp_path / f"works.{fmt}"
    assert write_works(corpus, fmt, path, only) == 2
    table = works_table(corpus, only)
    names = ["; ".join(authors) for authors in table["authors"]]
    if fmt == "bibtex":
        keys = [entry["ID"] for entry in bibtexparser.loads(path.read_text(encoding="utf-8")).entries]
        assert sorted(keys) == sorted(table["bibtex_key"])
    elif fmt == "ris":
        records = rispy.loads(path.read_text(encoding="utf-8"))
        assert sorted(record["id"] for record in records) == sorted(only)
    elif fmt == "csv":
        written = pd.read_csv(path, dtype=str, keep_default_na=False)
        assert sorted(written["cluster_id"]) == sorted(only) and list(written["authors"]) == names
    else:
        rows = list(load_workbook(path).active.iter_rows(values_only=True))
        assert rows[0] == TABLE_COLUMNS and [row[0] for row in rows[1:]] == list(table["cluster_id"])
        assert [row[TABLE_COLUMNS.index("authors")] for row in rows[1:]] == names


def test_write_works_refuses_a_format_it_does_not_write(tmp_path):
    with pytest.raises(ValueError, match="bibtex, ris, csv, xlsx"):
        write_works(sample_corpus(), "docx", tmp_path / "works.docx")
    assert not (tmp_path / "works.docx").exists()
