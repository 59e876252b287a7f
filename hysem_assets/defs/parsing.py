"""``parsed_docs``: Markdown, tables and equations from every saved PDF (Docling) or JATS full text (no PDF step)."""

import time
from pathlib import Path

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.core.empty import NO_RECORDS, empty_note, typed_when_empty
from hysem_assets.core.progress import Progress
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.placement import gpu_step_tags
from hysem_assets.defs.resources import PdfParser
from hysem_assets.fulltext.outcome import is_jats
from hysem_assets.parsing.jats import JATS, parse_jats
from hysem_assets.parsing.pool import parse_many
from hysem_assets.parsing.result import ParsedDocument
from hysem_assets.parsing.reuse import reuse_or_parse
from hysem_assets.stores.work_cache import WorkCache, work_id

PARSED_COLUMNS = (
    "cluster_id",
    "doi",
    "path",
    "markdown",
    "tables_json",
    "equations_json",
    "token_count",
    "tokenizer",
    "pages",
    "parser",
    "device",
    "seconds",
    "status",
    "ocr_pages",
    "ocr_confidence_json",
    "unreadable_pages",
    "dropped_lines",
    "dropped_json",
    "furniture_json",
    "restored_lines",
    "docling_order_pages",
    "docling_pages",
    "error",
)
#: Types of the numeric columns, which a table of no documents cannot infer.
PARSED_DTYPES = {
    "token_count": "int64",
    "pages": "int64",
    "seconds": "float64",
    "ocr_pages": "int64",
    "unreadable_pages": "int64",
    "dropped_lines": "int64",
    "restored_lines": "int64",
    "docling_order_pages": "int64",
    "docling_pages": "int64",
}


@asset(
    group_name="parsing",
    partitions_def=queries_partitions,
    ins={"pdfs": AssetIn()},
    pool="gpu",
    op_tags=gpu_step_tags("parsed_docs"),
    description=(
        "One row per saved PDF or JATS full text: Markdown with headings, paragraphs, lists and tables; tables and "
        "equations as JSON; token count; pages; the parser used; status native, ocr, jats (a JATS XML full text, "
        "read in the main process with no PDF step), failed, too_large or resource_limit (over a "
        "limit of the profile), with the error that document met; "
        "per-page OCR confidence and pages too faint to be text; the page furniture left out (running headers and "
        "footers, page numbers, line numbers, margin stamps) with its page and rule; "
        "lines dropped by named rules and lines restored; pages given Docling's own lines. Docling's weight-free native "
        "pipeline plus hysem's page reconstruction by default, the standard layout pipeline on GPUs in production. "
        "A PDF parsed before with the same bytes and settings, or a JATS full text with the same bytes, is read "
        "from the work cache."
    ),
    kinds={"python", "parquet", "docling"},
)
def parsed_docs(context: AssetExecutionContext, pdf_parser: PdfParser, pdfs: pd.DataFrame) -> Output[pd.DataFrame]:
    settings = pdf_parser.settings
    saved = pdfs[pdfs["status"] == "saved"].reset_index(drop=True)
    texts = set(saved.loc[is_jats(saved), "path"])
    options, limits = pdf_parser.options(), pdf_parser.limits()
    progress = Progress(context.log, "parsed_docs", unit="documents")
    started = time.monotonic()

    def parse(paths: list[str]) -> list[ParsedDocument]:
        done = {path: read_jats(path) for path in paths if path in texts}
        if done:
            context.log.info(f"Read {len(done):,} JATS full text(s) with no PDF step")
        files = [path for path in paths if path not in texts]
        if files:
            context.log.info(
                f"Parsing {len(files):,} of {len(saved) - len(texts):,} PDFs (the others parsed before, read from "
                f"the cache) with the {settings.pipeline} pipeline on {', '.join(settings.devices) or 'cpu'} "
                f"({max(settings.workers, len(settings.devices))} workers)"
            )
            parsed = parse_many(files, options, settings.devices, settings.workers, progress, limits=limits)
            done.update(zip(files, parsed, strict=True))
        return [done[path] for path in paths]

    try:
        run = reuse_or_parse(
            WorkCache("parsed_docs"),
            context.partition_key,
            [(work_id(r.doi, r.cluster_id), r.path, r.sha256) for r in saved.itertuples()],
            options,
            limits,
            parse,
            jats=texts,
        )
    finally:
        progress.close()
    parsed = pd.DataFrame(run.rows, columns=[c for c in PARSED_COLUMNS if c not in ("cluster_id", "doi")])
    table = pd.concat([saved[["cluster_id", "doi"]], parsed], axis=1)[list(PARSED_COLUMNS)]
    table = typed_when_empty(table, PARSED_DTYPES)
    failed = table[table["error"].notna()]
    for row in failed.itertuples():
        context.log.warning(f"{row.doi or row.cluster_id}: {row.error}")
    ok = table[table["error"].isna()]
    pages = int(ok["pages"].sum())
    fresh = table.loc[[not reused for reused in run.reused]]
    parsed_pages = int(fresh.loc[fresh["error"].isna(), "pages"].sum())
    seconds = time.monotonic() - started
    metadata = {
        "dagster/row_count": len(table),
        **empty_note(len(table), NO_RECORDS if pdfs.empty else "none of the query's works has a saved PDF"),
        "parsed": len(ok),
        "native": int((table["status"] == "native").sum()),
        "ocr": int((table["status"] == "ocr").sum()),
        JATS: int((table["status"] == JATS).sum()),
        "jats_full_texts": len(table[table["path"].isin(texts)]),
        "ocr_pages": int(ok["ocr_pages"].sum()),
        "unreadable_pages": int(table["unreadable_pages"].sum()),
        "failed": len(failed),
        "too_large": int((table["status"] == "too_large").sum()),
        "resource_limit": int((table["status"] == "resource_limit").sum()),
        "dropped_lines": int(ok["dropped_lines"].sum()),
        "restored_lines": int(ok["restored_lines"].sum()),
        "docling_order_pages": int(ok["docling_order_pages"].sum()),
        "docling_pages": int(ok["docling_pages"].sum()),
        "pages": pages,
        "pages_per_second": round(parsed_pages / seconds, 2) if seconds else 0.0,
        "tokens": int(ok["token_count"].sum()),
        "tokenizer": str(ok["tokenizer"].iloc[0]) if len(ok) else "",
        "parser": str(table["parser"].iloc[0]) if len(table) else "",
        **run.changes.as_metadata(),
    }
    if len(ok):
        metadata["first_document"] = MetadataValue.md(ok["markdown"].iloc[0][:3000])
    if len(failed):
        metadata["errors"] = MetadataValue.md(failed[["doi", "error"]].to_markdown(index=False))
    return Output(table, metadata=metadata)


def read_jats(path: str) -> ParsedDocument:
    """The row of one JATS full text, parsed here in the main process (no Docling, no worker)."""
    try:
        xml = Path(path).read_bytes()
    except OSError as exc:
        return ParsedDocument(path, error=f"the JATS full text cannot be read: {exc.strerror or exc}")
    return parse_jats(xml, path)
