"""Full-text stage assets: ``pdfs`` (attached PDFs, JATS full texts, open-access downloads) and ``library``
(citations, Zotero)."""

import os
import time
from collections import Counter
from pathlib import Path

import pandas as pd
from dagster import (
    AssetCheckResult,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetIn,
    Config,
    Failure,
    MetadataValue,
    Output,
    asset,
)
from pydantic import Field

from hysem_assets.core.empty import NO_RECORDS, empty_note, nothing_to_check
from hysem_assets.core.filehash import file_sha256
from hysem_assets.core.pdfcheck import structural_problem
from hysem_assets.core.progress import Progress
from hysem_assets.dedup.notices import corrections
from hysem_assets.defs.metadata import table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import PdfFetcher, ReviewConfig, ScholarlyApis
from hysem_assets.fulltext.attach import ATTACHED, attachments, usable_attachments
from hysem_assets.fulltext.outcome import STATUSES, is_jats
from hysem_assets.fulltext.pdfs import JATS_FAILED, JATS_NOT_FOUND, download_pdfs
from hysem_assets.fulltext.store import REUSED
from hysem_assets.library.csl import render_citations, to_csl_item
from hysem_assets.library.exports import write_exports
from hysem_assets.library.table import library_table
from hysem_assets.library.zotero import ZoteroLibrary, sync_library, with_zotero_fallback
from hysem_assets.screening.outcome import screened_in
from hysem_assets.settings.environment import MISSING_CONTACT, hysem_home, zotero_library
from hysem_assets.sources.registry import api_key, full_text_sources
from hysem_assets.stores.work_cache import WorkCache, WorkChanges, content_key, work_id


def downloads_dir():
    return hysem_home() / "downloads" / "pdfs"


def record_outcomes(partition: str, table: pd.DataFrame) -> WorkChanges:
    """Each work's outcome (status, file hash) against the partition's last run; reused: files saved before."""
    outcomes = {
        work_id(row.doi, row.cluster_id): content_key(row.status, row.sha256)
        for row in table[["cluster_id", "doi", "status", "sha256"]].itertuples()
    }
    return WorkCache("pdfs").record_run(partition, outcomes, reused=int((table["reason"] == REUSED).sum()))


def invalid_saved_files(table: pd.DataFrame) -> list[str]:
    """Saved rows whose file is missing or not a complete PDF, or whose JATS full text changed since it was
    fetched (the check behind ``every_pdf_is_valid``)."""
    saved = table[table["status"] == "saved"]
    jats = is_jats(saved)
    pdfs = [path for path in saved.loc[~jats, "path"] if not os.path.isfile(path) or structural_problem(Path(path))]
    texts = [
        path
        for path, sha256 in zip(saved.loc[jats, "path"], saved.loc[jats, "sha256"])
        if not os.path.isfile(path) or file_sha256(Path(path)) != sha256
    ]
    return pdfs + texts


@asset(
    group_name="fulltext",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn(), "screening": AssetIn()},
    check_specs=[
        AssetCheckSpec(
            "every_pdf_is_valid",
            asset="pdfs",
            blocking=True,
            description="Every saved file exists and is a complete PDF (a JATS full text: unchanged since fetched).",
        )
    ],
    description=(
        "One row per work that screening lets through (see `screening`'s `proceeds`): the PDF the reviewer "
        "attached (`hysem pdf attach`), else for a work with a PMCID its open-access JATS XML full text (Europe PMC, "
        "profile key pdfs.jats_full_text; stored by PMCID hash as .xml, parsed with no PDF step), else its "
        "open-access PDF from Unpaywall's locations (best first), streamed "
        "with a size cap and timeouts, checked (content type, %PDF- magic, structure) and stored by DOI hash; or the "
        "status and reason why there is none (no_oa_location, not_pdf, too_large, http_error, timeout, invalid_pdf). "
        "`source` says where a saved file came from: attached, jats, or the host it was downloaded from. "
        "A file saved by an earlier run is reused while it is unchanged."
    ),
    kinds={"python", "parquet", "pdf"},
)
def pdfs(
    context: AssetExecutionContext,
    scholarly_apis: ScholarlyApis,
    pdf_fetcher: PdfFetcher,
    review_config: ReviewConfig,
    deduped_corpus: pd.DataFrame,
    screening: pd.DataFrame,
):
    spec = review_config.query(context.partition_key)
    columns = ["cluster_id", "doi", "pmid", *(["pmcid"] if "pmcid" in deduped_corpus.columns else [])]
    records = screened_in(deduped_corpus, screening)[columns]
    context.log.info(f"{len(records):,} of {len(deduped_corpus):,} works go on from screening")
    attached, broken = usable_attachments(attachments(context.partition_key))
    for attachment in broken:
        context.log.warning(
            f"The PDF attached to {attachment.work} ({attachment.path}) is missing or changed; attach it again "
            f"(`hysem pdf attach --query {context.partition_key} {attachment.cluster_id} FILE`). Downloading instead."
        )
    endpoint = scholarly_apis.endpoint("unpaywall", spec)
    if not endpoint.mailto and records["doi"].notna().any():  # without DOIs nothing is asked of Unpaywall
        raise Failure(description=MISSING_CONTACT)
    full_text = (
        [scholarly_apis.endpoint(name, spec) for name in full_text_sources()]
        if pdf_fetcher.settings.jats_full_text
        else []
    )
    tally: Counter[str] = Counter()
    progress = Progress(context.log, "pdfs", unit="works")
    started = time.monotonic()
    try:
        table = download_pdfs(
            records,
            endpoint,
            downloads_dir(),
            scholarly_apis.http,
            limits=pdf_fetcher.limits(),
            progress=progress,
            attached=attached,
            full_text=full_text,
            tally=tally,
        )
    finally:
        progress.close()
    if tally[JATS_FAILED]:
        context.log.info(f"{tally[JATS_FAILED]} JATS full text request(s) failed; those works went on to PDFs")
    counts = table["status"].value_counts()
    taken = int((table["source"] == ATTACHED).sum())
    if (waiting := len(attached) - taken) > 0:
        context.log.info(
            f"{waiting} attached PDF(s) belong to works screening does not let through; kept for when it does"
        )
    problems = table[~table["status"].isin(["saved", "no_oa_location"])]
    metadata = {
        "dagster/row_count": len(table),
        **empty_note(len(table), NO_RECORDS if deduped_corpus.empty else "screening lets no work through"),
        "saved": int(counts.get("saved", 0)),
        "attached": taken,
        "jats_full_texts": int(is_jats(table).sum()),
        "jats_not_found": tally[JATS_NOT_FOUND],
        "jats_failed": tally[JATS_FAILED],
        "saved_megabytes": round(float(table["bytes"].fillna(0).sum()) / 2**20, 2),
        "seconds": round(time.monotonic() - started, 2),
        "statuses": MetadataValue.md(
            pd.DataFrame({"status": list(STATUSES), "works": [int(counts.get(s, 0)) for s in STATUSES]}).to_markdown(
                index=False
            )
        ),
        "downloads_dir": MetadataValue.path(str(downloads_dir())),
        **record_outcomes(context.partition_key, table).as_metadata(),
    }
    if len(problems):
        metadata["problems"] = table_preview(problems, ["doi", "status", "reason"], rows=30, width=160)
    yield Output(table, metadata=metadata)
    invalid = invalid_saved_files(table)
    yield AssetCheckResult(
        check_name="every_pdf_is_valid",
        passed=not invalid,
        description=nothing_to_check(len(table)),
        metadata={
            "saved": int(counts.get("saved", 0)),
            "invalid": len(invalid),
            "examples": ", ".join(invalid[:5]) or "none",
        },
    )


class LibraryConfig(Config):
    style: str = Field("", description="CSL style name or .csl path; empty: config/citations.yaml.")
    locale: str = Field("", description="CSL locale such as en-GB; empty: config/citations.yaml.")


def zotero_from_environment(base_url: str, deadline_s: float) -> ZoteroLibrary | None:
    """A Zotero library at ``base_url`` when ZOTERO_LIBRARY_ID and ZOTERO_API_KEY are set, else None (exports only);
    each request must be whole within ``deadline_s``."""
    (library_id, library_type), key = zotero_library(), api_key("zotero")
    if not (library_id and key):
        return None
    return ZoteroLibrary(library_id, library_type, key, base_url=base_url, deadline_s=deadline_s)


@asset(
    group_name="fulltext",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn(), "pdfs": AssetIn()},
    description=(
        "Citations for every work rendered locally with citeproc-py (CSL style from config/citations.yaml), "
        "CSL-JSON/BibTeX/RIS exports, and the Zotero library when ZOTERO_LIBRARY_ID and ZOTERO_API_KEY are set."
    ),
    kinds={"python", "parquet"},
)
def library(
    context: AssetExecutionContext,
    config: LibraryConfig,
    scholarly_apis: ScholarlyApis,
    review_config: ReviewConfig,
    deduped_corpus: pd.DataFrame,
    pdfs: pd.DataFrame,
) -> Output[pd.DataFrame]:
    settings = review_config.citation_settings()
    style, locale = config.style or settings.style, config.locale or settings.locale
    items = [to_csl_item(row) for row in deduped_corpus.to_dict("records")]
    context.log.info(f"Rendering {len(items):,} citations in {style} ({locale})")
    citations = render_citations(items, style=style, locale=locale)

    zotero, keys, failures = (
        zotero_from_environment(scholarly_apis.base_url("zotero"), scholarly_apis.http.total_timeout_s),
        {},
        {},
    )
    if zotero is not None:
        saved = pdfs[(pdfs["status"] == "saved") & ~is_jats(pdfs)]  # Zotero takes PDFs, not JATS XML
        sync = sync_library(zotero, deduped_corpus, dict(zip(saved["cluster_id"], saved["path"])))
        keys, failures = sync.keys, sync.failures
        context.log.info(
            f"Zotero: {len(sync.created)} created, {len(sync.found)} already there, {len(failures)} failed"
        )
        citations = with_zotero_fallback(citations, keys, zotero, style, locale)

    exports = write_exports(deduped_corpus, hysem_home() / "library" / context.partition_key, context.partition_key)
    table = library_table(deduped_corpus, citations, keys, failures, corrections(deduped_corpus))
    errors = table["citation_error"].notna()
    for row in table[errors].itertuples():
        context.log.warning(f"Citation for {row.cluster_id} ({row.doi or row.title}) failed: {row.citation_error}")
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **empty_note(len(table)),
            "style": style,
            "locale": locale,
            "citation_errors": int(errors.sum()),
            "zotero": "on" if zotero else "off (set ZOTERO_LIBRARY_ID and ZOTERO_API_KEY)",
            "zotero_keys": len(keys),
            **{f"export_{fmt}": MetadataValue.path(str(path)) for fmt, path in exports.items()},
            "preview": table_preview(table, ["in_text_citation", "full_citation"], rows=8, width=200),
        },
    )
