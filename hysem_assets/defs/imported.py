"""``raw_metadata/imported``: the records of every database export imported into a query."""

import time

from dagster import AssetExecutionContext, MetadataValue, Output, asset

from hysem_assets.acquisition.imports import imported_records, provenance_table
from hysem_assets.acquisition.types import ImportedMetadataFrame
from hysem_assets.core.empty import empty_note
from hysem_assets.defs.fetch_report import PREVIEW_COLUMNS
from hysem_assets.defs.metadata import table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.sources.registry import Kind, of_kind

(IMPORTED,) = of_kind(Kind.IMPORTED)
#: Unreadable records listed in the metadata; the count says how many more.
WARNINGS_SHOWN = 50


@asset(
    name=IMPORTED.name,
    key_prefix="raw_metadata",
    group_name="acquisition",
    partitions_def=queries_partitions,
    description=IMPORTED.description,
    kinds={"python", "parquet"},
    dagster_type=ImportedMetadataFrame,
)
def imported(context: AssetExecutionContext):
    started = time.monotonic()
    frame, files, warnings = imported_records(context.partition_key)
    for warning in warnings[:WARNINGS_SHOWN]:
        context.log.warning(warning)
    by_source = frame["source"].value_counts().sort_index()
    context.log.info(
        f"{len(frame):,} records from {len(files)} imported file(s): "
        + (", ".join(f"{name} {count:,}" for name, count in by_source.items()) or "none")
    )
    metadata = {
        "dagster/row_count": len(frame),
        **empty_note(len(frame), "no export is imported into this query (hysem query import)"),
        "files": len(files),
        "unreadable_records": len(warnings),
        "with_doi": int(frame["doi"].notna().sum()),
        "with_abstract": int(frame["abstract"].notna().sum()),
        "seconds": round(time.monotonic() - started, 2),
        "preview": table_preview(frame, ["source", *PREVIEW_COLUMNS], empty="_no records_"),
    }
    if files:
        provenance = provenance_table(files)[["source", "name", "sha256", "format", "records", "imported"]]
        metadata["provenance"] = MetadataValue.md(provenance.to_markdown(index=False))
        metadata["records_by_source"] = MetadataValue.json({str(k): int(v) for k, v in by_source.items()})
    if warnings:
        shown = "\n".join(f"- {warning}" for warning in warnings[:WARNINGS_SHOWN])
        more = f"\n- … {len(warnings) - WARNINGS_SHOWN} more" if len(warnings) > WARNINGS_SHOWN else ""
        metadata["unreadable_details"] = MetadataValue.md(shown + more)
    return Output(frame, metadata=metadata)
