"""prisma_flow and evidence_table materialized from stored upstream tables, and the
blocking check that stops a flow whose tables are out of step."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner
from dagster import AssetSelection, materialize
from openpyxl import load_workbook

from hysem_assets.cli import main
from hysem_assets.definitions import defs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.review import RECONCILE_CHECK
from hysem_assets.findings.schema import DECREASED, INCREASED, NO_DIFFERENCE
from hysem_assets.review.evidence import FINDING_COLUMNS
from hysem_assets.runs.instance import get_instance
from hysem_assets.settings.environment import asset_file, review_dir
from hysem_assets.stores.tables import write_parquet
from hysem_assets_tests.acquisition.helpers import SAMPLE

from . import tables
from .pages import Page

QUERY = SAMPLE  # a declared query, so that `hysem report` finds its title


def store(corpus: pd.DataFrame) -> None:
    frames = {f"raw_metadata/{source}": frame for source, frame in tables.raw().items()}
    frames.update(
        deduped_corpus=corpus,
        screening=tables.screening({"w3": ("excluded", "wrong outcome")}),
        pdfs=tables.pdfs(),
        parsed_docs=tables.parsed(),
        library=tables.library(),
        extracted_fields=tables.extracted(),
        topics=tables.topics(),
        findings=tables.findings(),
    )
    for key, frame in frames.items():
        write_parquet(frame, asset_file(key, QUERY))


def run():
    """Materialize the review group in the home's own instance, as `hysem materialize` does."""
    instance = get_instance()
    instance.add_dynamic_partitions(queries_partitions.name, [QUERY])
    partitioned = [a for a in defs.assets if a.partitions_def is not None]
    return materialize(
        partitioned,
        selection=AssetSelection.groups("review"),
        instance=instance,
        partition_key=QUERY,
        resources=defs.resources,
        raise_on_error=False,
    )


def test_deliverables_from_stored_tables():
    """w3 excluded by a reviewer: w1 and w2 are included from their full texts, w4 (no PDF) and w5 (PDF not
    readable) from their abstracts."""
    store(tables.corpus())
    result = run()
    assert result.success
    [check] = result.get_asset_check_evaluations()
    assert check.check_name == RECONCILE_CHECK and check.passed
    flow = pd.read_parquet(asset_file("prisma_flow", QUERY))
    counts = dict(zip(flow["box"], flow["count"]))
    assert (counts["included"], counts["included:abstract only"], counts["included_reports"]) == (4, 2, 2)
    folder = review_dir(QUERY)
    assert (folder / "prisma_flow.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert (folder / "prisma_flow.png").read_bytes().startswith(b"\x89PNG")

    evidence = pd.read_parquet(asset_file("evidence_table", QUERY))
    assert evidence["cluster_id"].tolist() == ["w1", "w2", "w4", "w5"]
    assert evidence["text_source"].tolist() == ["full_text", "full_text", "abstract", "abstract"]
    assert evidence.loc[0, "outcomes"] == "stroke; heart failure" and evidence.loc[0, "sample_size"] == "4402"
    assert evidence.loc[0, "citation"] == "Doe, J. (w1). Study w1." and evidence.loc[0, "topic"] == "risk, cohort"
    sheet = load_workbook(folder / "evidence_table.xlsx").active
    header = [cell.value for cell in sheet[1]]
    assert header[:4] == ["cluster_id", "citation", "year", "title"] and "study_design" in header
    assert sheet.max_row == 5 and sheet.freeze_panes == "A2" and sheet["A1"].font.bold
    assert sheet["B2"].alignment.wrap_text and sheet.column_dimensions["B"].width > 10
    assert pd.read_csv(folder / "evidence_table.csv")["cluster_id"].tolist() == ["w1", "w2", "w4", "w5"]

    workbook = load_workbook(folder / "evidence_table.xlsx")
    assert workbook.sheetnames == ["Evidence", "Findings"]
    findings = workbook["Findings"]
    assert [cell.value for cell in findings[1]] == list(FINDING_COLUMNS) and findings.max_row == 5
    assert findings.freeze_panes == "A2" and findings["A1"].font.bold
    hostile = next(cell for cell in findings["L"] if cell.value and str(cell.value).startswith("=HYPERLINK"))
    assert hostile.value == '=HYPERLINK("x")' and hostile.data_type == "s"
    sheet = pd.read_csv(folder / "evidence_findings.csv")
    assert sheet["cluster_id"].tolist() == ["w1", "w1", "w2", "w1"] and sheet["abstract_only"].tolist()[2]
    assert '\'=HYPERLINK("x")' in sheet["evidence"].tolist()
    [materialized] = [
        m for m in result.get_asset_materialization_events() if m.asset_key.to_user_string() == "evidence_table"
    ]
    metadata = materialized.materialization.metadata
    assert metadata["findings_by_direction"].value == {DECREASED: 1, INCREASED: 1, NO_DIFFERENCE: 1}
    assert (metadata["findings"].value, metadata["pooled"].value, metadata["not_pooled"].value) == (4, 1, 1)
    assert metadata["forest_plots"].value.count("](data:image/png;base64,") == 1
    assert tables.POOLED_STROKE in metadata["syntheses"].value and "one study" in metadata["syntheses"].value
    assert (folder / "forest" / "002.svg").is_file()

    report = folder / "report.html"
    written = CliRunner().invoke(main, ["report", "--query", QUERY, "-o", str(report)])
    assert written.exit_code == 0, written.output
    html = report.read_text(encoding="utf-8")
    assert "<svg" in html and "Studies included in review (n = 4)" in html and "Doe, J. (w1). Study w1." in html
    # the flow, the evidence, the pooled and the unpooled findings, and what the update changed with its flow:
    # tables, not Markdown
    page = Page(html)
    assert page.elements["table"] == 6 and not page.pipe_rows() and "What changed" in html
    assert f"<h3>{tables.POOLED_STROKE}</h3>" in html and html.count("<svg") == 2


def test_a_flow_that_does_not_add_up_blocks_the_evidence_table():
    store(tables.corpus().iloc[1:])  # the corpus lost a work that the raw tables still hold
    result = run()
    assert not result.success
    [check] = result.get_asset_check_evaluations()
    assert not check.passed
    assert "but screened is 5" in check.metadata["problems"].value
    assert not asset_file("evidence_table", QUERY).exists()
    missing = CliRunner().invoke(main, ["report", "--query", QUERY, "-o", "report.html"])
    assert missing.exit_code == 1 and "--select group:review" in missing.output
