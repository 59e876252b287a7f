"""QA stage assets: ``answers`` and ``preference_log`` per query, ``preference_dataset`` across queries."""

import json
from collections.abc import Iterator

import pandas as pd
from dagster import (
    AssetExecutionContext,
    AssetIn,
    AssetOut,
    Config,
    MetadataValue,
    Output,
    asset,
    multi_asset,
)
from pydantic import Field

from hysem_assets.metadata import table_preview
from hysem_assets.partitions import queries_partitions
from hysem_assets.placement import GRAPH_STORE_TAG, gpu_step_tags
from hysem_assets.qa import QASettings, answer_questions, export_preferences, open_engine, questions_for
from hysem_assets.retrieval.settings import VectorIndexSettings
from hysem_assets.settings import Profile, hysem_home, load_profile
from hysem_assets.storage import assets_dir
from hysem_assets.stores.settings import GraphSettings

#: Nested answer parts are kept as JSON text, so every Parquet column has one type.
JSON_COLUMNS = ("json", "chosen_json", "rejected_json", "chosen_verdict", "rejected_verdict")


class QAConfig(Config):
    questions: list[str] = Field(
        default_factory=list,
        description="Questions to answer; empty: the partition's questions in config/questions.yaml.",
    )


def qa_engine(profile: Profile, query: str, chunks: pd.DataFrame, library: pd.DataFrame, terms: pd.DataFrame | None):
    """The QA engine over the profile's stores for one query (a context manager)."""
    return open_engine(
        profile.asset_settings("answers", QASettings), query=query,
        vectors=profile.asset_settings("vector_index", VectorIndexSettings),
        graph=profile.asset_settings("knowledge_graph", GraphSettings),
        chunks=chunks, library=library, canonical_terms=terms, cache_dir=hysem_home() / "llm_cache" / "answers",
    )


def as_frame(records: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(records)
    for column in JSON_COLUMNS:
        if column in frame:
            frame[column] = frame[column].map(lambda value: value if isinstance(value, str) else json.dumps(value))
    return frame


@multi_asset(
    outs={
        "answers": AssetOut(
            description="Cited answers to the query's questions: Markdown and JSON with claims, citations, "
            "verdicts, the route taken (hybrid or symbolic) and timings.",
            kinds={"python", "parquet"},
        ),
        "preference_log": AssetOut(
            description="Every draft the auditor rejected paired with the answer it approved: prompt, rejected, "
            "chosen, verdicts, round, model ids, time.",
            kinds={"python", "parquet"},
        ),
    },
    group_name="qa",
    partitions_def=queries_partitions,
    ins={"vector_index": AssetIn(), "library": AssetIn(), "canonical_terms": AssetIn()},
    deps=["knowledge_graph"],
    pool="gpu",
    op_tags={**gpu_step_tags("answers"), **GRAPH_STORE_TAG},
    code_version="1",
)
def qa_answers(
    context: AssetExecutionContext, config: QAConfig, vector_index: pd.DataFrame, library: pd.DataFrame,
    canonical_terms: pd.DataFrame,
) -> Iterator[Output]:
    questions = config.questions or questions_for(context.partition_key)
    context.log.info(f"Answering {len(questions)} questions for {context.partition_key!r}")
    with qa_engine(load_profile(), context.partition_key, vector_index, library, canonical_terms) as engine:
        answers, preferences = answer_questions(questions, engine)
    table = as_frame(answers)
    unresolved = int(table["unresolved_citations"].sum()) if len(table) else 0
    routes = table["route"].value_counts().to_dict() if len(table) else {}
    yield Output(table, output_name="answers", metadata={
        "dagster/row_count": len(table),
        "unresolved_citations": unresolved,
        "unverified": int(table["unverified"].sum()) if len(table) else 0,
        "routes": MetadataValue.json(routes),
        "prompt_tokens": int(table["prompt_tokens"].sum()) if len(table) else 0,
        "completion_tokens": int(table["completion_tokens"].sum()) if len(table) else 0,
        "first_answer": MetadataValue.md(table["markdown"].iloc[0] if len(table) else "_no questions_"),
    })
    log = as_frame(preferences)
    yield Output(log, output_name="preference_log", metadata={
        "dagster/row_count": len(log),
        "questions_with_pairs": int(log["question"].nunique()) if len(log) else 0,
    })


def preference_logs() -> list[pd.DataFrame]:
    """Every materialized partition of ``preference_log`` that holds pairs."""
    folder = assets_dir() / "preference_log"
    frames = (pd.read_parquet(path) for path in sorted(folder.glob("*.parquet")))
    return [frame for frame in frames if len(frame)]


def export_dataset(folder) -> tuple[int, int]:
    """Write ``preferences.jsonl`` and ``preferences.parquet`` into ``folder``; (pairs, queries)."""
    logs = preference_logs()
    records = pd.concat(logs, ignore_index=True).to_dict("records") if logs else []
    pairs = export_preferences(records, folder / "preferences.jsonl", format="jsonl")
    export_preferences(records, folder / "preferences.parquet", format="parquet")
    return pairs, len(logs)


@asset(
    group_name="qa",
    deps=["preference_log"],
    description="Preference pairs of every query as a DPO dataset: JSONL for TRL's DPO trainer "
    "(prompt, chosen, rejected) and Parquet, under $HYSEM_HOME/exports/.",
    kinds={"python", "parquet"},
    code_version="1",
)
def preference_dataset(context: AssetExecutionContext) -> Output[pd.DataFrame]:
    folder = hysem_home() / "exports"
    pairs, queries = export_dataset(folder)
    dataset = pd.read_parquet(folder / "preferences.parquet")
    return Output(dataset, metadata={
        "dagster/row_count": pairs,
        "queries": queries,
        "jsonl": MetadataValue.path(str(folder / "preferences.jsonl")),
        "parquet": MetadataValue.path(str(folder / "preferences.parquet")),
        "preview": table_preview(dataset, rows=3, width=120, empty="_no pairs yet_"),
    })
