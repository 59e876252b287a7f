"""``raw_metadata/citations``: citation searching from the included studies (PRISMA: other methods).

The included studies come from screening, which comes after deduplication, which takes these
records in: the asset reads the query's latest ``screening`` and ``deduped_corpus`` tables from
storage rather than as inputs, so the graph stays acyclic. Materialized after screening (or on a
living review's schedule), it chases each study once; the records it adds are screened in the next
run of the graph. Works the query already holds are counted but get no record: a record joining a
held work would change its cluster id, and the screening decisions made on it are kept by that id.
"""

import json
import time

import pandas as pd
from dagster import AssetExecutionContext, AssetKey, MetadataValue, Output, asset

from hysem_assets.acquisition.chasing import FOUND_VIA, chased_frame, merge_chased, seeds_of
from hysem_assets.core.empty import empty_note
from hysem_assets.core.progress import Progress
from hysem_assets.defs.fetch_report import PREVIEW_COLUMNS, failures_table
from hysem_assets.defs.metadata import latest_metadata, table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import ReviewConfig, ScholarlyApis
from hysem_assets.screening.outcome import included_ids
from hysem_assets.settings.environment import asset_file
from hysem_assets.sources.registry import Kind, of_kind
from hysem_assets.stores.tables import DamagedAssetError, read_table

(CITATIONS,) = of_kind(Kind.CHASED)
KEY = AssetKey(["raw_metadata", CITATIONS.name])


@asset(
    name=CITATIONS.name,
    key_prefix="raw_metadata",
    group_name="acquisition",
    partitions_def=queries_partitions,
    description=CITATIONS.description,
    kinds={"python", "parquet"},
)
def citations(context: AssetExecutionContext, scholarly_apis: ScholarlyApis, review_config: ReviewConfig):
    slug = context.partition_key
    spec = review_config.query(slug)
    held = _stored(context, f"raw_metadata/{CITATIONS.name}", slug)
    if spec.citations is None:
        return _empty(None, "citation searching is off for this query (add `citations:` to it in queries.yaml)")
    screening = _stored(context, "screening", slug)
    corpus = _stored(context, "deduped_corpus", slug)
    if screening is None or corpus is None:
        return _empty(held, "nothing to chase yet: materialize screening for this query, then this asset again")
    seeds = seeds_of(corpus, included_ids(screening))
    held_works = set(corpus["openalex_id"].dropna().astype(str))
    before = set(json.loads((latest_metadata(context.instance, KEY, slug) or {}).get("chased_studies", "[]")))
    new = [seed for seed in seeds if seed not in before]
    context.log.info(f"{len(seeds)} included studies with an OpenAlex id; {len(new)} not chased before")
    started = time.monotonic()
    progress = Progress(context.log, f"raw_metadata/{CITATIONS.name}", unit="studies")
    try:
        outcome = scholarly_apis.chase(new, spec, held_works, progress)
    finally:
        progress.close()
    for study, reason in outcome.not_chased.items():
        context.log.warning(f"{study} not chased: {reason}")
    found = chased_frame(outcome.fetch.records, outcome.found_via)
    frame = merge_chased(held if held is not None else found.iloc[0:0], found)
    chased = sorted(before | (set(new) - set(outcome.not_chased)))
    metadata = {
        "dagster/row_count": len(frame),
        **empty_note(len(frame), "the included studies' citations led to no work"),
        "included_studies": len(seeds),
        "studies_chased_now": len(new) - len(outcome.not_chased),
        "studies_not_chased": len(outcome.not_chased),
        "records_found_now": len(found),
        "held_works_found_now": len(set(outcome.found_via) - set(found["source_id"])),
        "records_new": int((~found["source_id"].isin(set(held["source_id"]) if held is not None else set())).sum()),
        "directions": ", ".join(d for d in ("backward", "forward") if getattr(spec.citations, d)),
        "cap_per_study": spec.citations.per_study,
        "left_out_by_cap": sum(outcome.capped.values()),
        "chased_studies": json.dumps(chased),
        "seconds": round(time.monotonic() - started, 2),
        "preview": table_preview(frame, [*PREVIEW_COLUMNS, FOUND_VIA], empty="_no records_"),
    }
    if outcome.not_chased:
        metadata["not_chased"] = MetadataValue.md(
            "\n".join(f"- {study}: {reason}" for study, reason in outcome.not_chased.items())
        )
    if outcome.fetch.failures:
        metadata["failure_details"] = MetadataValue.md(failures_table(outcome.fetch.failures))
    return Output(frame, metadata=metadata)


def _empty(held: pd.DataFrame | None, reason: str) -> Output:
    """What was chased before stays (a study once found keeps its records); nothing new is asked."""
    frame = held if held is not None else chased_frame([], {})
    return Output(
        frame, metadata={"dagster/row_count": len(frame), **empty_note(len(frame), reason), "skipped": reason}
    )


def _stored(context: AssetExecutionContext, asset: str, slug: str) -> pd.DataFrame | None:
    path = asset_file(asset, slug)
    if not path.is_file():
        return None
    try:
        return read_table(path)
    except DamagedAssetError as exc:
        context.log.warning(f"{path} cannot be read ({exc}); treated as not materialized")
        return None
