"""The parsed_docs asset keeps one row per saved PDF with its status: native, ocr or failed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from dagster import DagsterInstance, build_asset_context

from hysem_assets.core.filehash import file_sha256
from hysem_assets.defs.parsing import PARSED_COLUMNS, parsed_docs
from hysem_assets.defs.resources import PdfParser
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets_tests.parsing.builders import corrupt_pdf, require, scanned_pdf

PAPER = default_snapshot_dir() / "files" / "10.5555_ahi.2019.0203.pdf"


def test_each_row_says_native_ocr_or_failed_with_the_reason(tmp_path: Path):
    require("tesseract")
    paths = [PAPER, scanned_pdf(PAPER, tmp_path / "scan.pdf"), corrupt_pdf(tmp_path / "broken.pdf")]
    pdfs = pd.DataFrame(
        {
            "cluster_id": ["a", "b", "c"],
            "doi": ["10.1/a", "10.1/b", "10.1/c"],
            "status": ["saved"] * 3,
            "path": [str(p) for p in paths],
            "sha256": [file_sha256(p) for p in paths],
        }
    )
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("queries", ["sample"])
        context = build_asset_context(partition_key="sample", instance=instance)
        output = parsed_docs(context, pdf_parser=PdfParser(), pdfs=pdfs)
    table = output.value
    assert list(table.columns) == list(PARSED_COLUMNS)
    assert table["status"].tolist() == ["native", "ocr", "failed"]
    assert table["ocr_pages"].tolist() == [0, 1, 0] and table["error"].notna().tolist() == [False, False, True]
    assert "corrupt or not a PDF" in table["error"].iloc[2]
    assert output.metadata["ocr"].value == 1 and output.metadata["failed"].value == 1
