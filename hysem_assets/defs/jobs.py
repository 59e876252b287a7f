"""Jobs over the asset graph."""

from dagster import AssetSelection, define_asset_job

#: Materializes every asset of one query partition; sensors and backfills request it.
query_job = define_asset_job(
    "query_job",
    selection=AssetSelection.all() - AssetSelection.assets("preference_dataset"),
    description="Materialize the whole graph for one query partition (all but the cross-query dataset).",
)

#: Answers the query's questions and logs preference pairs (stores must be loaded first).
qa_job = define_asset_job(
    "qa_job",
    selection=AssetSelection.assets("answers", "preference_log"),
    description="Answer a query's questions (config/questions.yaml or run config) and log preference pairs.",
)

#: Passes a query's screening decisions on: re-ranks and re-decides what goes on to full text.
screening_job = define_asset_job(
    "screening_job",
    selection=AssetSelection.assets("screening"),
    description="Re-rank a query's works from its screening decisions (requested when the decision log grows).",
)
