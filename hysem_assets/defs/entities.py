"""The ``entities`` and ``entity_relations`` assets: typed entities of every included work and the relations between
them, read by the trained entity model."""

import time
from collections.abc import Iterator

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, AssetOut, MetadataValue, Output, multi_asset

from hysem_assets.core.empty import empty_note
from hysem_assets.core.progress import Progress
from hysem_assets.defs.metadata import table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.entities import tagger
from hysem_assets.entities.mentions import (
    ABSTRACT,
    ABSTRACT_WINDOWS,
    FULL_TEXT,
    FULL_TEXT_WINDOWS,
    GENERIC,
    WorkText,
    cached_reads,
    mention_tables,
    opening,
    reading_counts,
)
from hysem_assets.extraction.findings import term_lookup
from hysem_assets.retrieval import chunking
from hysem_assets.screening.outcome import included_ids
from hysem_assets.stores.work_cache import WorkCache, work_id

#: The part of a work each level of evidence of a chunk is cut from.
CHUNK_PARTS = {chunking.ABSTRACT: ABSTRACT, chunking.FULL_TEXT: FULL_TEXT}
BUDGETS = {ABSTRACT: ABSTRACT_WINDOWS, FULL_TEXT: FULL_TEXT_WINDOWS}


def entity_works(
    corpus: pd.DataFrame, screening: pd.DataFrame, parsed_docs: pd.DataFrame
) -> tuple[list[WorkText], list[str]]:
    """The included works' title and abstract and parsed full text (reference lists blanked: a cited title is
    not the citing work's own), and who each work is from run to run."""
    included = set(included_ids(screening))
    full_texts = parsed_docs[parsed_docs["error"].isna()].set_index("cluster_id")["markdown"].to_dict()
    works, ids = [], []
    for row in corpus[corpus["cluster_id"].isin(included)].to_dict("records"):
        title, abstract = (value if isinstance(value, str) else "" for value in (row.get("title"), row.get("abstract")))
        markdown = full_texts.get(row["cluster_id"])
        full_text = chunking.blank_reference_lists(markdown) if isinstance(markdown, str) and markdown else None
        works.append(WorkText(str(row["cluster_id"]), opening(title, abstract), full_text))
        ids.append(work_id(row.get("doi"), row["cluster_id"]))
    return works, ids


def chunk_parts(vector_index: pd.DataFrame) -> pd.DataFrame:
    """The chunks with the part of their work they are cut from."""
    return vector_index.assign(part=vector_index["evidence"].map(CHUNK_PARTS))[
        ["chunk_id", "cluster_id", "part", "text"]
    ]


@multi_asset(
    outs={
        "entities": AssetOut(
            description=(
                "Typed entities (task, method, metric, material, other scientific term, generic, disease) the "
                "trained entity model tags in every included work's title and abstract and parsed full text, each "
                "within a budget of windows: the text as written, its name (canonical through canonical_terms and "
                "the abbreviations the works define, lower case, singular), the chunk and sentence holding it."
            ),
            kinds={"python", "parquet"},
        ),
        "entity_relations": AssetOut(
            description=(
                "The relation (used for, feature of, hyponym of, part of, compare, conjunction, evaluate for) and its "
                "probability between near entities of one sentence, with that sentence: at most "
                "a few pairs a sentence, as the model labels every pair it is shown."
            ),
            kinds={"python", "parquet"},
        ),
    },
    group_name="enrichment",
    partitions_def=queries_partitions,
    ins={name: AssetIn() for name in ("deduped_corpus", "screening", "parsed_docs", "canonical_terms", "vector_index")},
)
def entities(
    context: AssetExecutionContext,
    deduped_corpus: pd.DataFrame,
    screening: pd.DataFrame,
    parsed_docs: pd.DataFrame,
    canonical_terms: pd.DataFrame,
    vector_index: pd.DataFrame,
) -> Iterator[Output]:
    model = tagger.load()
    works, ids = entity_works(deduped_corpus, screening, parsed_docs)
    progress = Progress(context.log, "entities", unit="works")
    started = time.monotonic()
    try:
        run = cached_reads(WorkCache("entities"), context.partition_key, works, ids, model, BUDGETS, progress)
    finally:
        progress.close()
    mentions, relations = mention_tables(works, run.rows, chunk_parts(vector_index), term_lookup(canonical_terms))
    read = reading_counts(run.rows, works)
    seconds = time.monotonic() - started
    yield Output(
        mentions,
        output_name="entities",
        metadata={
            "dagster/row_count": len(mentions),
            **empty_note(len(mentions), "no included work has a text the entity model tags anything in"),
            "works": len(works),
            "works_with_full_text": sum(work.full_text is not None for work in works),
            "by_type": MetadataValue.json({kind: int((mentions["type"] == kind).sum()) for kind in tagger.TYPES}),
            "entities_in_graph": int(
                mentions.loc[mentions["type"] != GENERIC, ["type", "name"]].drop_duplicates().shape[0]
            ),
            "windows_read": MetadataValue.json(read["windows"]),
            "window_budget": MetadataValue.json(BUDGETS),
            "truncated_docs": len(read["truncated"]),
            "truncated": MetadataValue.json(read["truncated"]),
            "model": model.version,
            "seconds": round(seconds, 2),
            "works_per_second": round(len(works) / seconds, 2) if seconds else None,
            **run.changes.as_metadata(),
            "preview": table_preview(mentions, ["cluster_id", "type", "text", "name"], rows=8),
        },
    )
    yield Output(
        relations,
        output_name="entity_relations",
        metadata={
            "dagster/row_count": len(relations),
            **empty_note(len(relations), "no sentence of an included work has two entities the model relates"),
            "by_label": MetadataValue.json(relations["label"].value_counts().to_dict()),
            "model": model.version,
            "preview": table_preview(relations, ["first", "label", "second", "probability"], rows=8),
        },
    )
