"""The ``findings`` asset: one row per comparison a study reports, with its direction and evidence."""

import time

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.core.empty import empty_note
from hysem_assets.core.progress import Progress
from hysem_assets.defs.metadata import table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.extraction.findings import cached_findings, findings_table, term_lookup, work_rows, work_texts
from hysem_assets.findings import classifier
from hysem_assets.findings.schema import DIRECTIONS
from hysem_assets.pico import tagger as pico_tagger
from hysem_assets.screening.outcome import screened_in
from hysem_assets.stores.work_cache import WorkCache


@asset(
    group_name="enrichment",
    partitions_def=queries_partitions,
    ins={
        "deduped_corpus": AssetIn(),
        "screening": AssetIn(),
        "parsed_docs": AssetIn(),
        "canonical_terms": AssetIn(),
    },
    description=(
        "One row per comparison a study reports: each intervention against its comparator on each outcome the "
        "span tagger finds in the title and abstract, judged by the trained findings model in the abstract and in "
        "the parsed full text (significantly increased / significantly decreased / no significant difference), "
        "with the evidence sentence, its section and offsets, and the effect estimate that sentence or the next "
        "states. The full text's row of a comparison is preferred; meta-analyses and reviews are marked."
    ),
    kinds={"python", "parquet"},
)
def findings(
    context: AssetExecutionContext,
    deduped_corpus: pd.DataFrame,
    screening: pd.DataFrame,
    parsed_docs: pd.DataFrame,
    canonical_terms: pd.DataFrame,
) -> Output[pd.DataFrame]:
    works = screened_in(deduped_corpus, screening)
    texts = work_texts(works, parsed_docs)
    tagger, model = pico_tagger.load(), classifier.load()
    progress = Progress(context.log, "findings", unit="works")
    started = time.monotonic()
    try:
        run = cached_findings(
            WorkCache("findings"),
            context.partition_key,
            texts,
            [text.work for text in texts],
            tagger,
            model,
            progress,
        )
    finally:
        progress.close()
    table = findings_table(work_rows(texts, run), term_lookup(canonical_terms))
    seconds = time.monotonic() - started
    preferred = table[table["preferred"]]
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **empty_note(len(table), "no included work states a result of a comparison its abstract names"),
            "works": len(texts),
            "works_with_findings": int(table["cluster_id"].nunique()),
            "by_direction": MetadataValue.json(
                {direction: int((preferred["direction"] == direction).sum()) for direction in DIRECTIONS}
            ),
            "by_source": MetadataValue.json(table["source"].value_counts().to_dict()),
            "with_estimate": int(preferred["estimate"].notna().sum()),
            "reviews": int(preferred.loc[preferred["study_kind"] == "review", "cluster_id"].nunique()),
            "model": model.version,
            "seconds": round(seconds, 2),
            "works_per_second": round(len(texts) / seconds, 2) if seconds else None,
            **run.changes.as_metadata(),
            "preview": table_preview(table, ["cluster_id", "outcome", "direction", "evidence"], rows=8),
        },
    )
