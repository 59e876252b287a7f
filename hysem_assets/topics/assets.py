"""``topics``: LDA topics of the parsed corpus, chosen by c_v coherence, with an intertopic map."""

import base64

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.empty import empty_note
from hysem_assets.environment import hysem_home
from hysem_assets.extraction.assets import documents_to_extract
from hysem_assets.llm import build_backend
from hysem_assets.partitions import queries_partitions
from hysem_assets.profile import TopicsSettings
from hysem_assets.progress import Progress
from hysem_assets.resources import TopicModeller
from hysem_assets.storage import write_parquet
from hysem_assets.topics import (
    TopicLabeller,
    build_topics,
    label_from_top_words,
    load_topic_settings,
    write_intertopic_view,
)
from hysem_assets.topics.labels import llm_labeller


def topic_labeller(placement: TopicsSettings) -> TopicLabeller:
    if not placement.llm:
        return label_from_top_words
    return llm_labeller(build_backend(placement.llm, cache_dir=hysem_home() / "llm_cache" / "topics"))


@asset(
    group_name="enrichment",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn(), "parsed_docs": AssetIn()},
    description=(
        "LDA topics (scikit-learn) over every work's text, the model chosen by mean c_v coherence over the grid "
        "in config/topics.yaml: topic table, per-document mixture and dominant topic, and an intertopic map."
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
    progress = Progress(context.log, "topic models", unit="models")
    try:
        model = build_topics(
            documents,
            load_topic_settings(),
            workers=placement.workers,
            label_topic=topic_labeller(placement),
            progress=progress,
        )
    finally:
        progress.close()
    for note in model.notes:
        context.log.warning(note)
    view = write_intertopic_view(model, hysem_home() / "topics" / context.partition_key)
    png = base64.b64encode(view.png.read_bytes()).decode()
    labels = model.topics.set_index("topic")["label"]
    table = model.documents.rename(columns={"doc_id": "cluster_id"})
    dominant_label = table["dominant_topic"].map(labels).astype(object)  # text, even with no topic to map to
    table.insert(table.columns.get_loc("dominant_topic") + 1, "dominant_label", dominant_label)
    topic_table = model.topics.assign(top_words=model.topics["top_words"].map(", ".join))
    write_parquet(topic_table.drop(columns=["word_weights"]), view.html.parent / "topic_table.parquet")
    quality = {} if model.empty else {"coherence_c_v": round(float(model.chosen["coherence"]), 4)}
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **empty_note(len(table)),
            "n_topics": int(model.chosen["n_topics"]),
            **quality,
            "topics": MetadataValue.md(
                topic_table[["topic", "label", "coherence", "prevalence", "top_words"]].to_markdown(index=False)
            ),
            "grid": MetadataValue.md(model.grid.to_markdown(index=False)),
            "intertopic_map": MetadataValue.md(f"![intertopic distance map](data:image/png;base64,{png})"),
            "intertopic_html": MetadataValue.path(str(view.html)),
        },
    )
