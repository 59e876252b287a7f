"""The Dagster code location: every asset, job, sensor and resource of hysem."""

import warnings

from dagster import Definitions, ExecutorDefinition, multiprocess_executor

from hysem_assets.defs.acquisition import deduped_corpus, raw_metadata_assets
from hysem_assets.defs.enrichment import canonical_terms, extracted_fields, topics
from hysem_assets.defs.fulltext import library, pdfs
from hysem_assets.defs.intake import add_query_job
from hysem_assets.defs.jobs import qa_job, query_job, screening_job
from hysem_assets.defs.knowledge import knowledge_graph, report_assets, summary_tree, vector_index
from hysem_assets.defs.parsing import parsed_docs
from hysem_assets.defs.placement import TAG_CONCURRENCY_LIMITS
from hysem_assets.defs.qa import preference_dataset, qa_answers
from hysem_assets.defs.resources import build_resources
from hysem_assets.defs.review import evidence_table, prisma_flow, updates
from hysem_assets.defs.schedules import living_review_schedules
from hysem_assets.defs.screening import screening
from hysem_assets.defs.sensors import added_query_sensor, queries_sensor, screening_decisions_sensor
from hysem_assets.settings.environment import executor_kind
from hysem_assets.settings.protocols import load_protocols
from hysem_assets.settings.queries import QueryError, load_queries
from hysem_assets.stores.graph_schema import graph_schema


def executor() -> ExecutorDefinition:
    """Steps in subprocesses here; with HYSEM_EXECUTOR=k8s each step is its own pod (GPU tags apply)."""
    if executor_kind() == "k8s":
        from dagster_k8s import k8s_job_executor

        return k8s_job_executor.configured({"tag_concurrency_limits": TAG_CONCURRENCY_LIMITS})
    return multiprocess_executor.configured({"tag_concurrency_limits": TAG_CONCURRENCY_LIMITS})


# The graph schema the protocols make together is checked when the code location loads: two
# protocols that give one name two meanings stop it. A protocol file that cannot be read is left
# out with a warning and blocks only the queries that use it.
graph_schema(load_protocols())


def declared_queries() -> dict:
    """The queries file at load, for the living reviews' schedules; a file that cannot be read schedules
    nothing here, and the sensor that reads it again names the problem."""
    try:
        return load_queries()
    except QueryError as exc:
        warnings.warn(f"No living-review schedules: {exc}", stacklevel=1)
        return {}


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
        updates,
    ],
    jobs=[query_job, qa_job, screening_job, add_query_job],
    sensors=[queries_sensor, added_query_sensor, screening_decisions_sensor],
    schedules=living_review_schedules(declared_queries()),
    resources=build_resources(),
    executor=executor(),
)
