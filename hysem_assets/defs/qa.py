"""QA stage assets: ``answers`` and ``preference_log`` per query, ``preference_dataset`` across queries."""

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
from dagster import (
    AllPartitionMapping,
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

from hysem_assets.core.empty import NO_RECORDS, empty_note, typed_when_empty
from hysem_assets.defs.metadata import table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.placement import GRAPH_STORE_TAG, gpu_step_tags
from hysem_assets.defs.resources import AnswerModels, ChunkStore, GraphDatabase, ReviewConfig
from hysem_assets.qa.answer import ANSWER_DTYPES, answer_questions
from hysem_assets.qa.engine import qa_engine
from hysem_assets.qa.preferences import PREFERENCE_DTYPES, excluded_pairs, export_preferences
from hysem_assets.settings.environment import hysem_home
from hysem_assets.settings.profile import AssetSettings
from hysem_assets.stores.graph_schema import graph_schema
from hysem_assets.stores.tables import read_table

#: Nested answer parts are kept as JSON text, so every Parquet column has one type.
JSON_COLUMNS = ("json", "chosen_json", "rejected_json", "chosen_verdict", "rejected_verdict")


class QAConfig(Config):
    questions: list[str] = Field(
        default_factory=list,
        description="Questions to answer; empty: the partition's questions in config/questions.yaml.",
    )


def charts_metadata(answers: pd.DataFrame) -> dict[str, MetadataValue]:
    """The charts of ranking and trend answers, shown in the UI under their questions, with their files' paths."""
    charted = answers.dropna(subset=["chart"])
    if charted.empty:
        return {}
    shown = "\n\n".join(
        f"**{question}**\n\n![chart](data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()})"
        for question, svg in zip(charted["question"], charted["chart"], strict=True)
        if (png := Path(svg).with_suffix(".png")).is_file()
    )
    return {"charts": MetadataValue.md(shown), "chart_files": MetadataValue.json(list(charted["chart"]))}


def as_frame(records: list[dict], dtypes: dict) -> pd.DataFrame:
    """The records as a table; with none, still the record's columns and types."""
    frame = typed_when_empty(pd.DataFrame(records), dtypes)
    for column in JSON_COLUMNS:
        if column in frame:
            frame[column] = frame[column].map(lambda value: value if isinstance(value, str) else json.dumps(value))
    return frame


@multi_asset(
    outs={
        "answers": AssetOut(
            description="Cited answers to the query's questions: Markdown and JSON with claims, citations, "
            "verdicts, the route taken (counting, listing, numeric, global or local), why, the routes tried "
            "before it, and timings.",
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
    ins={
        name: AssetIn()
        for name in ("vector_index", "library", "canonical_terms", "extracted_fields", "summary_tree", "findings")
    },
    deps=["knowledge_graph"],
    pool="gpu",
    op_tags={**gpu_step_tags("answers"), **GRAPH_STORE_TAG},
)
def qa_answers(
    context: AssetExecutionContext,
    config: QAConfig,
    answer_models: AnswerModels,
    chunk_store: ChunkStore,
    graph_database: GraphDatabase,
    review_config: ReviewConfig,
    vector_index: pd.DataFrame,
    library: pd.DataFrame,
    canonical_terms: pd.DataFrame,
    extracted_fields: pd.DataFrame,
    summary_tree: pd.DataFrame,
    findings: pd.DataFrame,
) -> Iterator[Output]:
    questions = config.questions or review_config.questions(context.partition_key)
    context.log.info(f"Answering {len(questions)} questions for {context.partition_key!r}")
    protocol = review_config.protocol(context.partition_key)
    settings = AssetSettings(
        answers=answer_models.settings,
        vector_index=chunk_store.settings,
        knowledge_graph=graph_database.settings,
    )
    with qa_engine(
        settings,
        context.partition_key,
        protocol,
        graph_schema(review_config.protocols(), protocol),
        vector_index,
        library,
        canonical_terms,
        extracted_fields,
        summary_tree,
        findings,
    ) as engine:
        answers, preferences = answer_questions(questions, engine)
    table = as_frame(answers, ANSWER_DTYPES)
    yield Output(
        table,
        output_name="answers",
        metadata={
            "dagster/row_count": len(table),
            # a partition without works still answers each question: that there is no evidence
            **empty_note(len(library), f"{NO_RECORDS}; every answer says there is no evidence"),
            "unresolved_citations": int(table["unresolved_citations"].sum()),
            "unverified": int(table["unverified"].sum()),
            "routes": MetadataValue.json(table["route"].value_counts().to_dict()),
            "prompt_tokens": int(table["prompt_tokens"].sum()),
            "completion_tokens": int(table["completion_tokens"].sum()),
            "first_answer": MetadataValue.md(table["markdown"].iloc[0] if len(table) else "_no questions_"),
            **charts_metadata(table),
        },
    )
    log = as_frame(preferences, PREFERENCE_DTYPES)
    yield Output(
        log,
        output_name="preference_log",
        metadata={
            "dagster/row_count": len(log),
            **empty_note(len(log), NO_RECORDS if library.empty else "the auditor rejected no draft"),
            "questions_with_pairs": int(log["question"].nunique()),
        },
    )


def export_dataset(logs: list[pd.DataFrame], folder) -> int:
    """Write ``preferences.jsonl`` and ``preferences.parquet`` into ``folder``; the number of pairs."""
    records = pd.concat(logs, ignore_index=True).to_dict("records") if logs else []
    pairs = export_preferences(records, folder / "preferences.jsonl", format="jsonl")
    export_preferences(records, folder / "preferences.parquet", format="parquet")
    return pairs


@asset(
    group_name="qa",
    ins={
        "preference_log": AssetIn(partition_mapping=AllPartitionMapping(), metadata={"allow_missing_partitions": True})
    },
    description="Preference pairs of every query as a DPO dataset: JSONL for TRL's DPO trainer "
    "(prompt, chosen, rejected) and Parquet, under $HYSEM_HOME/exports/; only pairs whose chosen answer was "
    "approved and passed the citation audit.",
    kinds={"python", "parquet"},
)
def preference_dataset(context: AssetExecutionContext, preference_log) -> Output[pd.DataFrame]:
    """Every query's log (the materialized partitions of ``preference_log``) in one dataset.

    The IO manager hands over one frame per partition, or the frame itself when only one
    partition is materialized.
    """
    folder = hysem_home() / "exports"
    by_query = preference_log if isinstance(preference_log, dict) else {"": preference_log}
    logs = [log for _, log in sorted(by_query.items()) if len(log)]
    pairs, queries = export_dataset(logs, folder), len(logs)
    left_out = excluded_pairs(record for log in logs for record in log.to_dict("records"))
    dataset = read_table(folder / "preferences.parquet")
    return Output(
        dataset,
        metadata={
            "dagster/row_count": pairs,
            **empty_note(pairs, "no query has a preference pair yet"),
            "queries": queries,
            "excluded_not_approved": left_out["chosen_not_approved"],
            "excluded_failed_citation_audit": left_out["chosen_failed_citation_audit"],
            "jsonl": MetadataValue.path(str(folder / "preferences.jsonl")),
            "parquet": MetadataValue.path(str(folder / "preferences.parquet")),
            "preview": table_preview(dataset, rows=3, width=120, empty="_no pairs yet_"),
        },
    )
