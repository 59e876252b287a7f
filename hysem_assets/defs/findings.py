"""The ``findings`` asset: one row per comparison a study reports, with its direction and evidence."""

import time

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.core.empty import empty_note
from hysem_assets.core.progress import Progress
from hysem_assets.defs.metadata import table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.extraction.findings import WorkText, cached_findings, findings_table, folded, work_rows
from hysem_assets.extraction.publication_types import record_types
from hysem_assets.findings import classifier
from hysem_assets.findings.schema import DIRECTIONS
from hysem_assets.pico import tagger as pico_tagger
from hysem_assets.screening.outcome import screened_in
from hysem_assets.stores.work_cache import WorkCache, work_id


def work_texts(corpus: pd.DataFrame, parsed: pd.DataFrame) -> list[WorkText]:
    """Title, abstract, parsed full text (empty where none), stated types and run-to-run id of each work."""
    full_text = parsed[parsed["error"].isna()].set_index("cluster_id")["markdown"].to_dict()
    return [
        WorkText(
            row.cluster_id,
            row.title if isinstance(row.title, str) else "",
            row.abstract if isinstance(row.abstract, str) else "",
            full_text.get(row.cluster_id) or "",
            tuple(record_types(getattr(row, "publication_types", None), getattr(row, "item_type", None))),
            work_id(row.doi, row.cluster_id),
        )
        for row in corpus.itertuples()
    ]


def term_lookup(canonical_terms: pd.DataFrame) -> dict[str, str]:
    """Folded raw term -> canonical term as the dictionaries spell it, over every field the protocol unifies (the
    first field's on a clash)."""
    matched = canonical_terms[canonical_terms["canonical"].notna()]
    lookup: dict[str, str] = {}
    for raw, canonical in zip(matched["raw_term"], matched["canonical"], strict=True):
        lookup.setdefault(folded(str(raw)), str(canonical))
    return lookup


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
