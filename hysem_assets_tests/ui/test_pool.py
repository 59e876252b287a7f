"""Pool ``gpu`` (limit 1 from config/dagster.yaml) holds: its steps never overlap.

Runs the stand-in assets of pool_defs.py, launched through the webserver and dequeued by
the daemon, in one run whose executor could run all four steps at once.
"""

from __future__ import annotations

from hysem_assets.runs.backfill import graphql
from hysem_assets_tests.ui.server import DagsterServer, launch_run, wait_for_run


def _overlap(first: dict, second: dict) -> bool:
    return first["startTime"] < second["endTime"] and second["startTime"] < first["endTime"]


def test_gpu_pool_runs_one_step_at_a_time(dagster_server: DagsterServer) -> None:
    url = dagster_server.url
    pool = graphql(url, '{ instance { concurrencyLimit(concurrencyKey: "gpu") { limit usingDefaultLimit } } }')
    assert pool["instance"]["concurrencyLimit"] == {"limit": 1, "usingDefaultLimit": True}

    selector = {"repositoryLocationName": "pool_test", "repositoryName": "__repository__", "jobName": "pool_job"}
    run = wait_for_run(url, launch_run(url, selector), timeout=180)
    assert run["status"] == "SUCCESS", run
    steps = {step["stepKey"]: step for step in run["stepStats"]}
    assert set(steps) == {"gpu_a", "gpu_b", "free_a", "free_b"}
    assert _overlap(steps["free_a"], steps["free_b"]), "the executor ran nothing in parallel; the test proves nothing"
    assert not _overlap(steps["gpu_a"], steps["gpu_b"]), steps
