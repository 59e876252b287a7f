"""The standard pipeline's code path, offline, with a random-weight layout model: structure, not text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from docling.datamodel.base_models import InputFormat

from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.parse import converter, parse_pdf
from hysem_assets.parsing.preflight import NO_TEXT_NO_OCR
from hysem_assets.parsing.standard import ClusterCorrections, HysemStandardPipeline, LineNumberFilter
from hysem_assets_tests.parsing.builders import encrypted_pdf, image_only_pdf
from hysem_assets_tests.parsing.test_sample_pdfs import runs_of_counting_numbers, sample_pdfs
from hysem_assets_tests.parsing.tiny_layout import build_tiny_layout_model

#: Docling reads its own deprecated option fields while it runs; nothing here sets them.
pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated.*:DeprecationWarning")


@pytest.fixture(scope="module")
def layout_only(tmp_path_factory: pytest.TempPathFactory) -> ParseOptions:
    artifacts = build_tiny_layout_model(tmp_path_factory.mktemp("artifacts"))
    return ParseOptions(pipeline="standard", artifacts_path=artifacts, table_structure=False, formula_enrichment=False)


def test_standard_pipeline_runs_from_local_artifacts_only(layout_only: ParseOptions):
    pdfs = sample_pdfs()
    if not pdfs:
        pytest.skip("the sample PDFs are not built")
    result = parse_pdf(pdfs[0], layout_only)
    assert result.ok, result.error
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert result.pages == 2 and result.token_count > 0 and result.markdown.strip()
    assert result.parser.startswith("docling ") and "standard pipeline + hysem layout corrections" in result.parser
    assert not runs_of_counting_numbers(result.markdown)
    furniture = json.loads(result.furniture_json)  # what the layout model labelled page header or footer
    assert all(set(item) == {"page", "rule", "text"} for item in furniture)


def test_the_hysem_stages_wrap_doclings(layout_only: ParseOptions):
    document_converter = converter(layout_only)
    document_converter.initialize_pipeline(InputFormat.PDF)
    (pipeline,) = document_converter.initialized_pipelines.values()
    assert isinstance(pipeline, HysemStandardPipeline)
    assert isinstance(pipeline.preprocessing_model, LineNumberFilter)
    assert isinstance(pipeline.layout_postprocessing_model, ClusterCorrections)


def test_standard_pipeline_errors_are_rows_too(layout_only: ParseOptions, tmp_path: Path):
    assert parse_pdf(image_only_pdf(tmp_path / "scan.pdf"), layout_only).error == NO_TEXT_NO_OCR
    assert parse_pdf(encrypted_pdf(tmp_path / "locked.pdf"), layout_only).error.startswith("encrypted PDF")
    missing = ParseOptions(
        pipeline="standard", artifacts_path=tmp_path, table_structure=False, formula_enrichment=False
    )
    error = parse_pdf(image_only_pdf(tmp_path / "other.pdf"), missing).error
    assert "docling-layout-heron" in error and "not found in artifacts_path" in error
