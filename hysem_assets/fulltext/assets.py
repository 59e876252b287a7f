"""Full-text stage assets: ``library`` (citations, exports, Zotero)."""

import os

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, Config, MetadataValue, Output, asset
from pydantic import Field

from hysem_assets.library.csl import render_citations, to_csl_item
from hysem_assets.library.exports import write_exports
from hysem_assets.library.table import library_table, load_citation_settings
from hysem_assets.library.zotero import ZoteroLibrary, sync_library, with_zotero_fallback
from hysem_assets.partitions import queries_partitions
from hysem_assets.settings import api_key, config_dir, hysem_home, load_profile
from hysem_assets.sources.endpoints import base_url


class LibraryConfig(Config):
    style: str = Field("", description="CSL style name or .csl path; empty: config/citations.yaml.")
    locale: str = Field("", description="CSL locale such as en-GB; empty: config/citations.yaml.")


def zotero_from_environment() -> ZoteroLibrary | None:
    """A Zotero library when ZOTERO_LIBRARY_ID and ZOTERO_API_KEY are set, else None (exports only)."""
    library_id, key = os.environ.get("ZOTERO_LIBRARY_ID"), api_key("zotero")
    if not (library_id and key):
        return None
    library_type = os.environ.get("ZOTERO_LIBRARY_TYPE", "user")
    return ZoteroLibrary(library_id, library_type, key, base_url=base_url("zotero", load_profile()))


@asset(
    group_name="fulltext",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn()},
    description=(
        "Citations for every work rendered locally with citeproc-py (CSL style from config/citations.yaml), "
        "CSL-JSON/BibTeX/RIS exports, and the Zotero library when ZOTERO_LIBRARY_ID and ZOTERO_API_KEY are set."
    ),
    kinds={"python", "parquet"},
    code_version="1",
)
def library(context: AssetExecutionContext, config: LibraryConfig, deduped_corpus: pd.DataFrame) -> Output[pd.DataFrame]:
    settings = load_citation_settings(config_dir() / "citations.yaml")
    style, locale = config.style or settings.style, config.locale or settings.locale
    items = [to_csl_item(row) for row in deduped_corpus.to_dict("records")]
    context.log.info(f"Rendering {len(items):,} citations in {style} ({locale})")
    citations = render_citations(items, style=style, locale=locale)

    zotero, keys, failures = zotero_from_environment(), {}, {}
    if zotero is not None:
        sync = sync_library(zotero, deduped_corpus)
        keys, failures = sync.keys, sync.failures
        context.log.info(f"Zotero: {len(sync.created)} created, {len(sync.found)} already there, {len(failures)} failed")
        citations = with_zotero_fallback(citations, keys, zotero, style, locale)

    exports = write_exports(deduped_corpus, hysem_home() / "library" / context.partition_key, context.partition_key)
    table = library_table(deduped_corpus, citations, keys, failures)
    errors = table["citation_error"].notna()
    for row in table[errors].itertuples():
        context.log.warning(f"Citation for {row.cluster_id} ({row.doi or row.title}) failed: {row.citation_error}")
    preview = table[["in_text_citation", "full_citation"]].head(8)
    return Output(table, metadata={
        "dagster/row_count": len(table),
        "style": style,
        "locale": locale,
        "citation_errors": int(errors.sum()),
        "zotero": "on" if zotero else "off (set ZOTERO_LIBRARY_ID and ZOTERO_API_KEY)",
        "zotero_keys": len(keys),
        **{f"export_{fmt}": MetadataValue.path(str(path)) for fmt, path in exports.items()},
        "preview": MetadataValue.md(preview.to_markdown(index=False)),
    })
