"""A query added from the launchpad (add_query_job) gets its partition and a whole-graph run."""

from __future__ import annotations

from dagster import DagsterInstance

from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.runs.backfill import graphql, repository_selector
from hysem_assets.settings.queries import load_queries
from hysem_assets_tests.ui.server import DagsterServer, launch_run, runs, wait_for, wait_for_run

SLUG = "launchpad-query"
TERMINATE = """mutation($id: String!) { terminateRun(runId: $id) { __typename } }"""


def test_a_query_added_from_the_launchpad_is_registered_and_run(dagster_server: DagsterServer) -> None:
    url = dagster_server.url
    selector = {**repository_selector(url, "add_query_job"), "jobName": "add_query_job"}
    config = {
        "text": "ozone and arrhythmia",
        "slug": SLUG,
        "sources": ["pubmed", "openalex"],
        "date_from": "2018-01-01",
    }
    run = wait_for_run(url, launch_run(url, selector, {"ops": {"add_query": {"config": config}}}), timeout=180)
    assert run["status"] == "SUCCESS", run

    added = load_queries(dagster_server.config_dir / "queries.yaml")[SLUG]
    assert added.sources == ["pubmed", "openalex"] and str(added.date_from) == "2018-01-01"
    with DagsterInstance.from_config(str(dagster_server.home / "dagster")) as instance:
        assert SLUG in instance.get_dynamic_partitions(queries_partitions.name)

    def requested():
        found = runs(url, tags=[{"key": "dagster/partition", "value": SLUG}])
        return [r for r in found if r["jobName"] == "query_job"]

    whole_graph = wait_for(requested, timeout=180, message=f"added_query_sensor to request query_job for {SLUG}")
    assert len(whole_graph) == 1
    # The sensor's request is what this test checks; the run itself is the backfill tests' business.
    run_id = whole_graph[0]["runId"]

    def stopping() -> bool:  # a run still starting refuses termination: ask again until it accepts or has ended
        if graphql(url, TERMINATE, {"id": run_id})["terminateRun"]["__typename"] == "TerminateRunSuccess":
            return True
        return runs(url, runIds=[run_id])[0]["status"] in {"CANCELED", "FAILURE", "SUCCESS"}

    wait_for(stopping, timeout=120, message=f"termination of run {run_id}", poll=2.0)
    # a run that ended before termination took went through the whole graph (about two minutes on two cores)
    assert wait_for_run(url, run_id, timeout=300)["status"] in {"CANCELED", "FAILURE", "SUCCESS"}


def test_a_launchpad_query_without_text_fails_with_a_clear_message(dagster_server: DagsterServer) -> None:
    url = dagster_server.url
    selector = {**repository_selector(url, "add_query_job"), "jobName": "add_query_job"}
    run = wait_for_run(
        url, launch_run(url, selector, {"ops": {"add_query": {"config": {"slug": "no-text"}}}}), timeout=180
    )
    assert run["status"] == "FAILURE"
    logs = graphql(
        url,
        """query($id: ID!) { logsForRun(runId: $id) { ... on EventConnection { events {
        __typename ... on ExecutionStepFailureEvent { failureMetadata { description } } } } } }""",
        {"id": run["runId"]},
    )
    failures = [e["failureMetadata"]["description"] for e in logs["logsForRun"]["events"] if e.get("failureMetadata")]
    assert any("Give the query text" in (text or "") and "launchpad" in (text or "") for text in failures), failures
    assert "no-text" not in load_queries(dagster_server.config_dir / "queries.yaml")
