"""``topics``: LDA topics of the parsed corpus, chosen by c_v coherence, with an intertopic map."""

import base64
from typing import Any

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.asset_tables import write_parquet
from hysem_assets.empty import empty_note
from hysem_assets.environment import hysem_home
from hysem_assets.extraction.rows import documents_to_extract
from hysem_assets.llm import build_backend
from hysem_assets.llm.config import answer_settings
from hysem_assets.partitions import queries_partitions
from hysem_assets.profile import TopicsSettings
from hysem_assets.progress import Progress
from hysem_assets.resources import TopicModeller
from hysem_assets.topics import (
    TopicLabeller,
    label_from_top_words,
    load_topic_settings,
    read_state,
    update_topics,
    write_intertopic_view,
    write_state,
)
from hysem_assets.topics.labels import llm_labeller
from hysem_assets.work_cache import work_id

#: The kept model of a partition, beside its intertopic view, for the next run to reuse.
STATE_FILE = "topic_model.pkl"


def topic_labeller(placement: TopicsSettings) -> TopicLabeller:
    if not placement.llm:
        return label_from_top_words
    return llm_labeller(build_backend(placement.llm, cache_dir=hysem_home() / "llm_cache" / "topics"))


def labeller_settings(placement: TopicsSettings) -> Any:
    """What names the topics, as kept with the model: a change of it refits (new labels). None: the top words."""
    return answer_settings(placement.llm) if placement.llm else None


@asset(
    group_name="enrichment",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn(), "parsed_docs": AssetIn()},
    description=(
        "LDA topics (scikit-learn) over every work's text, the model chosen by mean c_v coherence over the grid "
        "in config/topics.yaml: topic table, per-document mixture and dominant topic, and an intertopic map. "
        "A re-run keeps the fitted model, and its topic numbers and labels, placing new and changed works in it, "
        "unless the settings changed or more than training.refit_share of the fitted works are new, changed or "
        "dropped; `refit` and `refit_reason` say which."
    ),
    kinds={"python", "parquet", "scikitlearn"},
)
def topics(
    context: AssetExecutionContext,
    topic_modeller: TopicModeller,
    deduped_corpus: pd.DataFrame,
    parsed_docs: pd.DataFrame,
) -> Output[pd.DataFrame]:
    placement = topic_modeller.settings
    documents = pd.DataFrame(
        [{"doc_id": d.doc_id, "text": d.text} for d in documents_to_extract(deduped_corpus, parsed_docs)],
        columns=["doc_id", "text"],
    )
    directory = hysem_home() / "topics" / context.partition_key
    progress = Progress(context.log, "topic models", unit="models")
    try:
        run = update_topics(
            documents,
            [work_id(doi, cluster) for doi, cluster in zip(deduped_corpus["doi"], deduped_corpus["cluster_id"])],
            load_topic_settings(),
            read_state(directory / STATE_FILE),
            labeller=labeller_settings(placement),
            workers=placement.workers,
            label_topic=topic_labeller(placement),
            progress=progress,
        )
    finally:
        progress.close()
    model = run.model
    context.log.info(
        ("Refitted the topic model" if run.refit else "Kept the fitted topic model, new and changed works placed in it")
        + f": {run.reason}"
    )
    for note in model.notes:
        context.log.warning(note)
    view = write_intertopic_view(model, directory)
    png = base64.b64encode(view.png.read_bytes()).decode()
    labels = model.topics.set_index("topic")["label"]
    table = model.documents.rename(columns={"doc_id": "cluster_id"})
    dominant_label = table["dominant_topic"].map(labels).astype(object)  # text, even with no topic to map to
    table.insert(table.columns.get_loc("dominant_topic") + 1, "dominant_label", dominant_label)
    topic_table = model.topics.assign(top_words=model.topics["top_words"].map(", ".join))
    write_parquet(topic_table.drop(columns=["word_weights"]), view.html.parent / "topic_table.parquet")
    quality = {} if model.empty else {"coherence_c_v": round(float(model.chosen["coherence"]), 4)}
    write_state(directory / STATE_FILE, run.state)
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **empty_note(len(table)),
            "n_topics": int(model.chosen["n_topics"]),
            **quality,
            "refit": run.refit,
            "refit_reason": run.reason,
            **run.changes.as_metadata(),
            "topics": MetadataValue.md(
                topic_table[["topic", "label", "coherence", "prevalence", "top_words"]].to_markdown(index=False)
            ),
            "grid": MetadataValue.md(model.grid.to_markdown(index=False)),
            "intertopic_map": MetadataValue.md(f"![intertopic distance map](data:image/png;base64,{png})"),
            "intertopic_html": MetadataValue.path(str(view.html)),
        },
    )
