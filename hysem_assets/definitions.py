"""The Dagster code location: every asset, job, sensor and resource of hysem."""

import os

from dagster import Definitions, ExecutorDefinition, multiprocess_executor

from hysem_assets.acquisition.assets import raw_metadata_assets
from hysem_assets.acquisition.corpus import deduped_corpus
from hysem_assets.extraction.assets import extracted_fields
from hysem_assets.fulltext.assets import library, pdfs
from hysem_assets.intake import add_query_job
from hysem_assets.jobs import qa_job, query_job, screening_job
from hysem_assets.knowledge.assets import knowledge_graph, report_assets, vector_index
from hysem_assets.knowledge.schema import graph_schema
from hysem_assets.knowledge.summary_tree_asset import summary_tree
from hysem_assets.parsing.assets import parsed_docs
from hysem_assets.placement import TAG_CONCURRENCY_LIMITS
from hysem_assets.protocols import load_protocols
from hysem_assets.qa.assets import preference_dataset, qa_answers
from hysem_assets.resources import build_resources
from hysem_assets.review.assets import evidence_table, prisma_flow
from hysem_assets.screening.assets import screening
from hysem_assets.sensors import added_query_sensor, queries_sensor, screening_decisions_sensor
from hysem_assets.terms.assets import canonical_terms
from hysem_assets.topics.assets import topics


def executor() -> ExecutorDefinition:
    """Steps in subprocesses here; with HYSEM_EXECUTOR=k8s each step is its own pod (GPU tags apply)."""
    if os.environ.get("HYSEM_EXECUTOR") == "k8s":
        from dagster_k8s import k8s_job_executor

        return k8s_job_executor.configured({"tag_concurrency_limits": TAG_CONCURRENCY_LIMITS})
    return multiprocess_executor.configured({"tag_concurrency_limits": TAG_CONCURRENCY_LIMITS})


# The graph schema the protocols make together is checked when the code location loads: two
# protocols that give one name two meanings stop it. A protocol file that cannot be read is left
# out with a warning and blocks only the queries that use it.
graph_schema(load_protocols())

defs = Definitions(
    assets=[
        *raw_metadata_assets,
        deduped_corpus,
        screening,
        pdfs,
        library,
        parsed_docs,
        extracted_fields,
        topics,
        canonical_terms,
        vector_index,
        knowledge_graph,
        summary_tree,
        *report_assets,
        qa_answers,
        preference_dataset,
        prisma_flow,
        evidence_table,
    ],
    jobs=[query_job, qa_job, screening_job, add_query_job],
    sensors=[queries_sensor, added_query_sensor, screening_decisions_sensor],
    resources=build_resources(),
    executor=executor(),
)
