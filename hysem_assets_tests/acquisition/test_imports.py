"""Database exports imported into a query: read as a source, merged with what the searches found, counted
among the databases, and imported once however often the file is given."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from dagster import DagsterInstance, materialize

from hysem_assets.acquisition.imports import (
    MANIFEST,
    ImportRefused,
    import_export,
    imported_records,
    imports_dir,
    manifest,
)
from hysem_assets.cli import main
from hysem_assets.defs.acquisition import deduped_corpus, raw_metadata_assets
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import build_resources
from hysem_assets.review.flow import identified_by_source
from hysem_assets.settings.environment import asset_file
from hysem_assets.sources.registry import record_sources
from hysem_assets_tests.acquisition.helpers import SAMPLE

#: One real export per format the done-when names, and the format each must be read as.
REAL_EXPORTS = {
    "exports_rispy/example_wos.ris": ("Web of Science plain text", "PT "),
    "exports_rispy/example_pubmed.txt": ("MEDLINE (NBIB)", "PMID-"),
    "exports_rispy/example_endnote.ris": ("RIS", "TY  -"),
    "dedup_bib_dedupe/cytology_screening/records_pre_merged.csv": ("CSV", None),
    "dedup_bib_dedupe/respiratory/records_pre_merged.csv": ("CSV", None),
}


def _expected_records(path: Path, marker: str | None) -> int:
    """Records in the file, counted without the reader: its record markers, or a CSV's rows."""
    if marker is None:
        return len(pd.read_csv(path, dtype=str))
    return sum(line.startswith(marker) for line in path.read_text(encoding="utf-8-sig").splitlines())


@pytest.mark.parametrize("name", REAL_EXPORTS, ids=lambda name: name.split("/")[-1])
def test_a_real_export_imports_as_a_source_and_importing_it_again_changes_nothing(realdata: Path, name: str):
    path = realdata / name
    expected_format, marker = REAL_EXPORTS[name]
    outcome = import_export(SAMPLE, path, "embase")
    assert outcome.new and outcome.entry.format == expected_format
    assert outcome.entry.records == _expected_records(path, marker)
    assert outcome.entry.sha256 and outcome.entry.name == path.name and outcome.entry.source == "embase"
    before = (imports_dir(SAMPLE) / MANIFEST).read_bytes()

    again = import_export(SAMPLE, path, "Embase")
    assert not again.new and again.entry == outcome.entry
    assert (imports_dir(SAMPLE) / MANIFEST).read_bytes() == before
    frame, files, _ = imported_records(SAMPLE)
    assert files == [outcome.entry] and set(frame["source"]) == {"embase"}
    assert len(frame) == outcome.entry.records == frame["source_id"].nunique()


def test_a_searched_source_name_a_file_in_no_format_and_a_missing_file_are_refused_whole(tmp_path: Path):
    export = tmp_path / "embase.ris"
    export.write_text("TY  - JOUR\nTI  - A title\nER  - \n", encoding="utf-8")
    with pytest.raises(ImportRefused, match=r"'pubmed' is the name of a source hysem searches itself.*--source"):
        import_export(SAMPLE, export, "pubmed")
    junk = tmp_path / "notes.txt"
    junk.write_text("just some notes\nnothing bibliographic\n", encoding="utf-8")
    with pytest.raises(ImportRefused, match="RIS") as refused:
        import_export(SAMPLE, junk, "embase")
    assert "\n" not in str(refused.value)
    with pytest.raises(ImportRefused, match="cannot be read"):
        import_export(SAMPLE, tmp_path / "missing.ris", "embase")
    assert manifest(SAMPLE) == []


def _ris(works: list[dict]) -> str:
    lines = []
    for work in works:
        lines += ["TY  - JOUR", f"TI  - {work['title']}", *(f"AU  - {name}" for name in work["authors"])]
        lines += [f"PY  - {work['year']}", f"JO  - {work['journal']}"]
        lines += [f"DO  - {work['doi']}"] if work.get("doi") else []
        lines += [f"AN  - {work['an']}", "ER  - ", ""]
    return "\n".join(lines)


def _materialize(instance: DagsterInstance):
    instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
    return materialize(
        [*raw_metadata_assets, deduped_corpus], instance=instance, resources=build_resources(), partition_key=SAMPLE
    )


def test_imported_records_join_the_searched_ones_and_count_as_a_database(tmp_path: Path):
    """Two sample works exported from Embase (one without its DOI) merge into the works the searches found; a
    third is new. PRISMA counts Embase's three records among the databases."""
    with DagsterInstance.ephemeral() as instance:
        _materialize(instance)
        before = pd.read_parquet(asset_file("deduped_corpus", SAMPLE))
        known = before[before["doi"].notna() & before["authors"].map(len).gt(1)].head(2)
        works = [
            {**row, "an": f"L{index}", "doi": row["doi"] if index == 0 else None}
            for index, row in enumerate(known[["title", "authors", "year", "journal", "doi"]].to_dict("records"))
        ]
        works.append(
            {
                "title": "Wildfire smoke episodes and out-of-hospital cardiac arrest: a case-crossover study",
                "authors": ["Okafor, Adaeze", "Lindqvist, Per"],
                "year": 2021,
                "journal": "Journal of Fictional Cardiology",
                "doi": "10.5555/jfc.2021.0042",
                "an": "L9",
            }
        )
        export = tmp_path / "embase-2026.ris"
        export.write_text(_ris(works), encoding="utf-8")
        result = CliRunner().invoke(main, ["query", "import", "--query", SAMPLE, "--source", "Embase", str(export)])
        assert result.exit_code == 0, result.output
        assert "Read 3 records from embase-2026.ris as RIS" in result.output and "'embase'" in result.output
        again = CliRunner().invoke(main, ["query", "import", "--query", SAMPLE, "--source", "embase", str(export)])
        assert again.exit_code == 0 and "nothing changed" in again.output

        run = _materialize(instance)
    [event] = [e for e in run.get_asset_materialization_events() if e.asset_key.path == ["raw_metadata", "imported"]]
    assert event.materialization.metadata["files"].value == 1
    assert "embase-2026.ris" in event.materialization.metadata["provenance"].value
    corpus = pd.read_parquet(asset_file("deduped_corpus", SAMPLE))
    assert len(corpus) == len(before) + 1
    embase = corpus[corpus["record_ids"].map(lambda ids: any(i.startswith("embase:") for i in ids))]
    assert sorted(embase["title"]) == sorted(work["title"] for work in works)
    merged = embase[embase["record_ids"].map(len) > 1]
    assert set(merged["title"]) == set(known["title"]), "both exported sample works merge with their search records"

    raw = {name: pd.read_parquet(asset_file(f"raw_metadata/{name}", SAMPLE)) for name in record_sources()}
    counts = identified_by_source(raw, ["pubmed", "openalex", "scopus"])
    assert counts["embase"] == 3 and "imported" not in counts


def test_the_command_names_an_unknown_query_and_a_refused_file_in_one_line(tmp_path: Path, config: Path):
    export = tmp_path / "wos.txt"
    export.write_bytes(b"%PDF-1.7\n\x00\x01binary")
    refused = CliRunner().invoke(main, ["query", "import", "--query", SAMPLE, str(export)])
    assert refused.exit_code != 0 and len(refused.output.strip().splitlines()) == 1
    unknown = CliRunner().invoke(main, ["query", "import", "--query", "no-such-query", str(export)])
    assert unknown.exit_code != 0 and "no-such-query" in unknown.output
