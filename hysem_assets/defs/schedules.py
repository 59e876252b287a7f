"""Living reviews: a query with a ``schedule:`` gets a Dagster schedule that re-searches it.

Each tick requests the whole graph for the query's partition with every ``raw_metadata`` asset
asked only for records added since its last complete search, up to the tick's day. Downstream
assets reuse each work's results by content (``stores/work_cache``), so the run computes only
what the new records brought; ``updates`` records what changed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter

from dagster import (
    DefaultScheduleStatus,
    RunRequest,
    ScheduleDefinition,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)

from hysem_assets.defs.jobs import query_job
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.settings.queries import QuerySpec
from hysem_assets.sources.registry import searched

#: Run tag naming the day a scheduled re-search covers up to.
UPDATE_TAG = "hysem/update"


def schedule_name(slug: str, unique: bool = True) -> str:
    """Dagster names allow letters, digits and '_' only; slugs that would share a name ("a-b", "a_b")
    each get a few characters of their own hash (``unique=False``)."""
    name = "living_review__" + slug.replace("-", "_")
    return name if unique else f"{name}_{hashlib.sha256(slug.encode()).hexdigest()[:6]}"


def re_search_config(day: dt.date) -> dict:
    """Run config asking every source only for records added since its last complete search, up to ``day``."""
    config = {"search": "new", "as_of": day.isoformat()}
    return {"ops": {f"raw_metadata__{source}": {"config": config} for source in searched()}}


def living_review_schedule(spec: QuerySpec, name: str) -> ScheduleDefinition:
    @schedule(
        name=name,
        cron_schedule=spec.cron,
        execution_timezone="UTC",
        job=query_job,
        default_status=DefaultScheduleStatus.RUNNING,
        description=f"Re-searches {spec.slug!r} ({spec.schedule}) for what the sources added since its last "
        "complete search; the graph follows for the new works only, and `updates` records what changed.",
    )
    def _tick(context: ScheduleEvaluationContext) -> RunRequest | SkipReason:
        if not context.instance.has_dynamic_partition(queries_partitions.name, spec.slug):
            return SkipReason(
                f"Query {spec.slug!r} has no partition yet; queries_sensor registers it and runs it first."
            )
        day = context.scheduled_execution_time.astimezone(dt.UTC).date()
        return RunRequest(
            run_key=f"update:{spec.slug}:{day.isoformat()}",
            partition_key=spec.slug,
            run_config=re_search_config(day),
            tags={UPDATE_TAG: day.isoformat()},
        )

    return _tick


def living_review_schedules(specs: dict[str, QuerySpec]) -> list[ScheduleDefinition]:
    """One schedule per query that declares one, in file order."""
    scheduled = [spec for spec in specs.values() if spec.cron]
    shared = Counter(schedule_name(spec.slug) for spec in scheduled)
    return [
        living_review_schedule(spec, schedule_name(spec.slug, unique=shared[schedule_name(spec.slug)] == 1))
        for spec in scheduled
    ]
