"""The run coordinator of a team server: Dagster's queue, after one check of the query a run is for.

A run launched through the webserver (the UI's launchpad, a GraphQL client, a backfill's
runs) for a query that ``config/queries.yaml`` does not declare is refused when it is
submitted, with the line ``hysem materialize`` says for that query, instead of starting,
loading the code location and failing in its first step.
"""

from __future__ import annotations

from dagster import DagsterRun
from dagster._core.run_coordinator import QueuedRunCoordinator, SubmitRunContext
from dagster._core.storage.tags import PARTITION_NAME_TAG

from hysem_assets.settings.queries import get_query


def check_declared(run: DagsterRun) -> None:
    """Raise :class:`~hysem_assets.settings.queries.QueryError` for a run of an undeclared query's partition."""
    slug = run.tags.get(PARTITION_NAME_TAG)
    if slug is not None:
        get_query(slug)


class DeclaredQueriesRunCoordinator(QueuedRunCoordinator):
    """Dagster's queued coordinator (run limits, pools, dequeue retries) that refuses undeclared queries."""

    def submit_run(self, context: SubmitRunContext) -> DagsterRun:
        check_declared(context.dagster_run)
        return super().submit_run(context)
