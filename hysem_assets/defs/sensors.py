"""Sensors: turn queries added to config/queries.yaml, or from the UI, into partitions and runs;
and screening decisions into a fresh ``screening`` partition."""

from __future__ import annotations

from dagster import (
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunStatusSensorContext,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    run_status_sensor,
    sensor,
)

from hysem_assets.defs.intake import NewQuery, add_query_job
from hysem_assets.defs.jobs import query_job, screening_job
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.screening.decisions import decisions_path
from hysem_assets.settings.queries import load_queries


def new_query_slugs(declared: list[str], registered: list[str]) -> list[str]:
    """Declared slugs that are not partitions yet, in file order."""
    known = set(registered)
    return [slug for slug in declared if slug not in known]


@sensor(
    job=query_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="Registers a partition for every query added to config/queries.yaml and requests its run.",
)
def queries_sensor(context: SensorEvaluationContext) -> SensorResult | SkipReason:
    declared = list(load_queries())
    added = new_query_slugs(declared, context.instance.get_dynamic_partitions(queries_partitions.name))
    if not added:
        return SkipReason(f"No new queries ({len(declared)} declared, all registered).")
    context.log.info(f"Registering new queries: {', '.join(added)}")
    return SensorResult(
        run_requests=[RunRequest(run_key=f"query:{slug}", partition_key=slug) for slug in added],
        dynamic_partitions_requests=[queries_partitions.build_add_request(added)],
    )


@run_status_sensor(
    run_status=DagsterRunStatus.SUCCESS,
    monitored_jobs=[add_query_job],
    request_job=query_job,
    default_status=DefaultSensorStatus.RUNNING,
    description="Requests the whole graph for a query added from the launchpad (add_query_job), unless it said not to.",
)
def added_query_sensor(context: RunStatusSensorContext) -> RunRequest | SkipReason:
    config = NewQuery(**context.dagster_run.run_config["ops"]["add_query"]["config"])
    slug = config.spec().slug
    if not config.materialize:
        return SkipReason(f"Query {slug!r} was added with materialize: false.")
    return RunRequest(run_key=f"added:{slug}", partition_key=slug)


@sensor(
    job=screening_job,
    minimum_interval_seconds=300,
    default_status=DefaultSensorStatus.RUNNING,
    description="Re-materializes a query's screening when its decision log has grown (decisions made on "
    "`hysem screen`'s page or imported), so the UI shows the ranking and the stopping rule as they stand.",
)
def screening_decisions_sensor(context: SensorEvaluationContext) -> SensorResult | SkipReason:
    requests = []
    for slug in context.instance.get_dynamic_partitions(queries_partitions.name):
        path = decisions_path(slug)
        if path.is_file():  # the log only grows: its size names its state, and a run key is used once
            requests.append(RunRequest(run_key=f"screening:{slug}:{path.stat().st_size}", partition_key=slug))
    if not requests:
        return SkipReason("No query has screening decisions yet.")
    return SensorResult(run_requests=requests)
