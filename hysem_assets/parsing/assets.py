"""``parsed_docs``: Markdown, tables and equations from every saved PDF (Docling)."""

import time
from pathlib import Path

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset
from pydantic import BaseModel, ConfigDict, Field

from hysem_assets.parsing import ParseOptions, parse_many
from hysem_assets.partitions import queries_partitions
from hysem_assets.placement import gpu_step_tags
from hysem_assets.progress import Progress
from hysem_assets.settings import load_profile

PARSED_COLUMNS = (
    "cluster_id", "doi", "path", "markdown", "tables_json", "equations_json", "token_count", "tokenizer",
    "pages", "parser", "device", "seconds", "error",
)


class ParsingSettings(BaseModel):
    """``assets.parsed_docs`` in the profile: pipeline, model artifacts and placement."""

    model_config = ConfigDict(extra="forbid")

    pipeline: str = "native"
    artifacts_path: Path | None = None
    #: One worker process is pinned to each device in turn; empty: CPU.
    devices: list[str] = Field(default_factory=list)
    workers: int = Field(1, ge=1)
    num_threads: int = Field(1, ge=1)
    table_structure: bool = True
    formula_enrichment: bool = True
    ocr: bool = False
    #: Standard pipeline: hysem's line-number, formula and sparse-table corrections.
    layout_heuristics: bool = True
    document_timeout_s: float | None = 600.0

    def options(self) -> ParseOptions:
        return ParseOptions(
            pipeline=self.pipeline, artifacts_path=self.artifacts_path, num_threads=self.num_threads,
            table_structure=self.table_structure, formula_enrichment=self.formula_enrichment, ocr=self.ocr,
            layout_heuristics=self.layout_heuristics, document_timeout_s=self.document_timeout_s,
        )


@asset(
    group_name="parsing",
    partitions_def=queries_partitions,
    ins={"pdfs": AssetIn()},
    pool="gpu",
    op_tags=gpu_step_tags("parsed_docs"),
    description=(
        "One row per saved PDF: Markdown with headings, paragraphs, lists and tables; tables and equations as "
        "JSON; token count; pages; the parser used; or the error that document met. Docling's weight-free native "
        "pipeline plus hysem's page reconstruction by default, the standard layout pipeline on GPUs in production."
    ),
    kinds={"python", "parquet", "docling"},
    code_version="1",
)
def parsed_docs(context: AssetExecutionContext, pdfs: pd.DataFrame) -> Output[pd.DataFrame]:
    settings = load_profile().asset_settings("parsed_docs", ParsingSettings)
    saved = pdfs[pdfs["status"] == "saved"].reset_index(drop=True)
    context.log.info(
        f"Parsing {len(saved):,} PDFs with the {settings.pipeline} pipeline on "
        f"{', '.join(settings.devices) or 'cpu'} ({max(settings.workers, len(settings.devices))} workers)"
    )
    progress = Progress(context.log, "parsed_docs", unit="documents")
    started = time.monotonic()
    try:
        documents = parse_many(saved["path"].tolist(), settings.options(), settings.devices, settings.workers, progress)
    finally:
        progress.close()
    parsed = pd.DataFrame([d.to_record() for d in documents], columns=[c for c in PARSED_COLUMNS if c not in ("cluster_id", "doi")])
    table = pd.concat([saved[["cluster_id", "doi"]], parsed], axis=1)[list(PARSED_COLUMNS)]
    failed = table[table["error"].notna()]
    for row in failed.itertuples():
        context.log.warning(f"{row.doi or row.cluster_id}: {row.error}")
    ok = table[table["error"].isna()]
    pages = int(ok["pages"].sum())
    seconds = time.monotonic() - started
    metadata = {
        "dagster/row_count": len(table),
        "parsed": len(ok),
        "failed": len(failed),
        "pages": pages,
        "pages_per_second": round(pages / seconds, 2) if seconds else 0.0,
        "tokens": int(ok["token_count"].sum()),
        "tokenizer": str(ok["tokenizer"].iloc[0]) if len(ok) else "",
        "parser": str(table["parser"].iloc[0]) if len(table) else "",
    }
    if len(ok):
        metadata["first_document"] = MetadataValue.md(ok["markdown"].iloc[0][:3000])
    if len(failed):
        metadata["errors"] = MetadataValue.md(failed[["doi", "error"]].to_markdown(index=False))
    return Output(table, metadata=metadata)
