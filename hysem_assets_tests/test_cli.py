"""The `hysem` command, run in-process against a private HYSEM_HOME and config folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from dagster import DagsterInstance

from hysem_assets.cli import SAMPLE_QUERY, main
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.settings.protocols import load_protocol
from hysem_assets_tests.parsing.builders import scanned_pdf
from hysem_assets_tests.paths import PROJECT_ROOT

EXPECTED = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))["expected_counts"]


def invoke(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


@pytest.fixture
def after_demo(demo_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's HYSEM_HOME is the module's copy of the demo's, with the bundled config; its HYSEM_HOME."""
    monkeypatch.setenv("HYSEM_HOME", str(demo_home))
    monkeypatch.delenv("HYSEM_CONFIG_DIR", raising=False)
    return demo_home


def test_demo_then_status_show_the_three_sources(after_demo: Path, tmp_path: Path):
    status = invoke("status", "--query", SAMPLE_QUERY, "--json")
    rows = {row["asset"]: row for row in json.loads(status.output)}
    for source, count in EXPECTED.items():
        assert rows[f"raw_metadata/{source}"]["materialized"] is True
        assert rows[f"raw_metadata/{source}"]["rows"] == count
    assert (after_demo / "dagster" / "dagster.yaml").is_file()

    csv_path, parquet_path = tmp_path / "pubmed.csv", tmp_path / "pubmed.parquet"
    assert invoke("show", "raw_metadata/pubmed", "--query", SAMPLE_QUERY, "-o", str(csv_path)).exit_code == 0
    assert len(pd.read_csv(csv_path)) == EXPECTED["pubmed"]
    invoke("show", "raw_metadata/pubmed", "--query", SAMPLE_QUERY, "--format", "parquet", "-o", str(parquet_path))
    assert pd.read_parquet(parquet_path)["source"].eq("pubmed").all()
    as_json = invoke("show", "raw_metadata/scopus", "--query", SAMPLE_QUERY, "--format", "json")
    assert len(json.loads(as_json.output)) == EXPECTED["scopus"]

    # extracted fields: one key per field of the query's protocol, nested values as JSON, and their evidence
    fields = [field.name for field in load_protocol("pollution-cardio-ml").fields]
    rows = json.loads(invoke("show", "extracted_fields", "--query", SAMPLE_QUERY, "--format", "json").output)
    assert rows and all(set(fields) <= set(row) for row in rows)
    assert any(isinstance(row["ml_methods_used"], list) and row["ml_methods_used"] for row in rows)
    cited = [item for row in rows for items in row["evidence"].values() for item in items]
    located = [item for item in cited if item["value"] is not None]  # an empty design column says why instead
    assert located and all(item["sentence"] and item["start"] < item["end"] for item in located)
    assert all(item["reason"] for item in cited if item["value"] is None)


def test_query_add_appends_registers_and_materializes_a_selection(config: Path, isolated_home: Path):
    added = invoke("query", "add", "ozone and stroke", "--sources", "pubmed,openalex", "--from", "2018-01-01")
    assert added.exit_code == 0, added.output
    assert "Unpaywall needs a contact e-mail" in added.stderr  # no --mailto, no HYSEM_MAILTO
    assert "ozone-and-stroke" in (config / "queries.yaml").read_text()
    with_contact = invoke("query", "add", "ozone and asthma", "--mailto", "me@example.org")
    assert with_contact.exit_code == 0 and not with_contact.stderr
    listed = json.loads(invoke("query", "list", "--json").output)
    assert [q["slug"] for q in listed] == [SAMPLE_QUERY, "ozone-and-stroke", "ozone-and-asthma"]
    with DagsterInstance.from_config(str(isolated_home / "dagster")) as instance:
        assert "ozone-and-stroke" in instance.get_dynamic_partitions("queries")

    ran = invoke("materialize", "--query", "ozone-and-stroke", "--select", "raw_metadata/pubmed")
    assert ran.exit_code == 0, ran.output
    rows = {r["asset"]: r for r in json.loads(invoke("status", "--query", "ozone-and-stroke", "--json").output)}
    assert rows["raw_metadata/pubmed"]["materialized"] and not rows["raw_metadata/openalex"]["materialized"]


def test_clear_errors_for_unknown_query_duplicate_and_missing_asset(config: Path):
    unknown = invoke("status", "--query", "nope")
    assert unknown.exit_code == 1 and "No query with slug 'nope'" in unknown.output
    duplicate = invoke("query", "add", "anything", "--slug", SAMPLE_QUERY)
    assert duplicate.exit_code == 1 and "already exists" in duplicate.output
    missing = invoke("show", "raw_metadata/pubmed", "--query", SAMPLE_QUERY)
    assert missing.exit_code == 1 and "is not materialized" in missing.output and "hysem materialize" in missing.output
    bad_slug = invoke("query", "add", "x", "--slug", "a/b")
    assert bad_slug.exit_code == 2 and "slug" in bad_slug.output


def test_dedupe_command_adds_cluster_ids_and_reports_bad_rows(tmp_path: Path):
    source = tmp_path / "export.csv"
    source.write_bytes(
        b"ID,title,author,year,journal,volume,pages,doi\n"
        b'a,Machine learning of ozone and heart failure admissions,"M\xc3\xbcller, J",2020,Env Res,12,1-9,https://doi.org/10.5555/X.1\n'
        b'b,Machine Learning of Ozone and Heart-Failure Admissions.,"Muller, J.",2020,Environmental Research,12,1-9,\n'
        b'b,,"Lee, K",2019,,,,not-a-doi\n'
        b'd,Caf\xe9 workers and PM2.5 exposure,"Roy, A",2018,,,,\n'
    )
    output = tmp_path / "out.csv"
    result = CliRunner().invoke(main, ["dedupe", str(source), "-o", str(output)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(output, dtype=str)
    assert list(table["ID"]) == ["a", "b", "b-2", "d"]
    assert table.loc[0, "cluster_id"] == table.loc[1, "cluster_id"]
    assert table["cluster_id"].nunique() == 3
    assert "Record ID 'b' appears 2 times" in result.output
    assert "'not-a-doi' in the DOI column is not a DOI" in result.output
    assert "no usable title" in result.output and "Line 5" in result.output


def test_dedupe_explain_prints_the_evidence_and_rejects_unknown_ids():
    source = Path(__file__).parent / "dedup" / "adversarial" / "records_pre_merged.csv"
    result = CliRunner().invoke(main, ["dedupe", str(source), "--explain", "rec-08", "rec-09"])
    assert result.exit_code == 0, result.output
    assert "'rec-08' and 'rec-09': not merged" in result.output
    assert "because -1 points, 8 needed" in result.output and "evidence against: pages -6, issue -6" in result.output
    unknown = CliRunner().invoke(main, ["dedupe", str(source), "--explain", "rec-08", "nope"])
    assert unknown.exit_code == 1 and "No record with ID 'nope'" in unknown.output
    neither = CliRunner().invoke(main, ["dedupe", str(source)])
    assert neither.exit_code == 2 and "--explain" in neither.output


def test_parse_command_writes_markdown_and_reports_bad_files(tmp_path: Path):
    files = default_snapshot_dir() / "files"
    output = tmp_path / "paper.md"
    result = CliRunner().invoke(main, ["parse", str(files / "10.5555_ahi.2019.0203.pdf"), "-o", str(output)])
    assert result.exit_code == 0, result.output
    markdown = output.read_text(encoding="utf-8")
    assert markdown.startswith("# Nitrogen dioxide, ozone and hospital admissions") and "## 2 Methods" in markdown
    truncated = CliRunner().invoke(main, ["parse", str(files / "10.5555_ehr.2023.0001.pdf")])
    assert truncated.exit_code == 1 and "corrupt or not a PDF" in truncated.output


def test_parse_exits_non_zero_on_a_scan_with_ocr_off_and_says_how_to_turn_it_on(tmp_path: Path):
    scan = scanned_pdf(default_snapshot_dir() / "files" / "10.5555_ahi.2019.0203.pdf", tmp_path / "scan.pdf")
    hysem = Path(sys.executable).parent / "hysem"
    done = subprocess.run([str(hysem), "parse", str(scan), "--ocr-engine", "off"], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == ""
    assert str(scan) in done.stderr and "OCR is off" in done.stderr and "--ocr-engine tesseract" in done.stderr


def test_eval_retrieval_prints_the_three_methods_side_by_side():
    folder = Path(__file__).parent / "retrieval" / "beir_sample"
    result = CliRunner().invoke(main, ["eval-retrieval", str(folder), "--method", "all"])
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines()]
    scores = {row[0]: float(row[1]) for row in rows if row and row[0] in {"bm25", "dense", "hybrid"}}
    assert set(scores) == {"bm25", "dense", "hybrid"}
    assert scores["hybrid"] >= max(scores["bm25"], scores["dense"])


def test_ask_and_export_preferences_after_the_demo(after_demo: Path, tmp_path: Path):
    asked = CliRunner().invoke(
        main, ["ask", "--query", SAMPLE_QUERY, "--json", "How does PM2.5 relate to heart failure?"]
    )
    assert asked.exit_code == 0, asked.output
    record = json.loads(asked.output[asked.output.index("{") :])
    assert record["evidence_found"] and record["unresolved_citations"] == 0 and record["claims"] > 0
    empty = CliRunner().invoke(main, ["ask", "--query", SAMPLE_QUERY, "  "])
    assert empty.exit_code == 1 and "question" in empty.output.lower()
    answered = invoke("materialize", "--query", SAMPLE_QUERY, "--select", "answers")  # made with preference_log
    assert answered.exit_code == 0, answered.output
    output = tmp_path / "dpo.jsonl"
    exported = invoke("export-preferences", "-o", str(output))
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert rows and all(set(row) == {"prompt", "chosen", "rejected"} for row in rows)


def test_dedupe_refuses_unreadable_input_in_one_line(tmp_path: Path):
    binary = tmp_path / "paper.csv"
    binary.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 50)
    result = CliRunner().invoke(main, ["dedupe", str(binary), "-o", str(tmp_path / "out.csv")])
    assert result.exit_code == 1 and result.output.startswith("Error: 'paper.csv' is not a text file")
    assert "Traceback" not in result.output and not (tmp_path / "out.csv").exists()


def test_status_ask_and_report_are_the_same_from_any_folder(after_demo: Path, tmp_path: Path):
    """Run from the project and from an unrelated folder, each command reads the same state and prints the
    same, with no other library's deprecation notice on stderr."""
    from hysem_assets_tests.test_cli_shape import run_hysem, third_party_notices

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outputs = {}
    for cwd in (PROJECT_ROOT, elsewhere):
        ran = [
            run_hysem("status", "--query", SAMPLE_QUERY, "--json", cwd=cwd),
            run_hysem("ask", "--query", SAMPLE_QUERY, "How does PM2.5 relate to heart failure?", cwd=cwd),
            run_hysem("report", "--query", SAMPLE_QUERY, "-o", str(tmp_path / f"{cwd.name}.md"), cwd=cwd),
        ]
        for result in ran:
            assert result.returncode == 0 and third_party_notices(result.stderr) == [], result.stderr
        outputs[cwd] = [ran[0].stdout, ran[1].stdout, (tmp_path / f"{cwd.name}.md").read_text(encoding="utf-8")]
    status, answer, report = outputs[elsewhere]
    assert all(row["materialized"] for row in json.loads(status) if row["query"] == SAMPLE_QUERY)
    assert "[" in answer and "Evidence table" in report
    assert outputs[PROJECT_ROOT] == outputs[elsewhere]
    assert not (elsewhere / ".hysem").exists()
