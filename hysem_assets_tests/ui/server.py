"""One real ``dagster dev`` (webserver, daemon, code servers) for every UI test.

It runs on 127.0.0.1 with its own HYSEM_HOME, DAGSTER_HOME and config folder, so tests
never touch a user's state. The queries sensor is stopped once the server is up (after
the sample partition is registered, so its first tick has nothing to do): its automatic
whole-graph runs would compete with the runs the tests launch on purpose.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from hysem_assets.runs.backfill import graphql, repository_selector
from hysem_assets_tests.neo4j_launcher import free_port
from hysem_assets_tests.paths import PROJECT_ROOT

SAMPLE = "air-pollution-cardio-ml"
ARTIFACTS = PROJECT_ROOT / "test-artifacts" / "ui"
POOL_DEFS = Path(__file__).with_name("pool_defs.py")
STARTUP_SECONDS = 180


@dataclass(frozen=True)
class DagsterServer:
    url: str
    home: Path
    config_dir: Path
    log: Path


def _write_workspace(path: Path) -> None:
    """hysem's code location plus the pool test's stand-in assets."""
    path.write_text(
        yaml.safe_dump(
            {
                "load_from": [
                    {
                        "python_module": {
                            "module_name": "hysem_assets.definitions",
                            "working_directory": str(PROJECT_ROOT),
                        }
                    },
                    {"python_file": {"relative_path": str(POOL_DEFS), "location_name": "pool_test"}},
                ]
            }
        )
    )


def _register_sample(dagster_home: Path) -> None:
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(dagster_home)) as instance:
        instance.add_dynamic_partitions("queries", [SAMPLE])


def wait_until_loaded(url: str, process: subprocess.Popen, log: Path, expected_locations: int = 2) -> None:
    """Until the webserver answers and its ``expected_locations`` code locations have loaded."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"dagster dev exited early:\n{log.read_text()[-4000:]}")
        try:
            urllib.request.urlopen(f"{url}/server_info", timeout=2).close()
            locations = graphql(
                url, "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"
            )
            entries = locations["workspaceOrError"]["locationEntries"]
            if len(entries) == expected_locations and all(e["loadStatus"] == "LOADED" for e in entries):
                return
        except OSError:
            pass
        time.sleep(1)
    raise RuntimeError(f"dagster dev did not load in {STARTUP_SECONDS} s:\n{log.read_text()[-4000:]}")


def _stop_queries_sensor(url: str) -> None:
    selector = {**repository_selector(url), "sensorName": "queries_sensor"}
    sensor = graphql(
        url,
        "query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { ... on Sensor { sensorState { id } } } }",
        {"s": selector},
    )["sensorOrError"]
    result = graphql(
        url,
        "mutation($id: String) { stopSensor(id: $id) { __typename ... on StopSensorMutationResult { instigationState { status } } } }",
        {"id": sensor["sensorState"]["id"]},
    )["stopSensor"]
    assert result["instigationState"]["status"] == "STOPPED", result


def stop(process: subprocess.Popen) -> None:
    """SIGTERM to the whole group (webserver, daemon, code servers, runs), then SIGKILL."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="session")
def dagster_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DagsterServer]:
    root = tmp_path_factory.mktemp("dagster_ui")
    home, config = root / "hysem", root / "config"
    dagster_home = home / "dagster"
    shutil.copytree(PROJECT_ROOT / "config", config)
    dagster_home.mkdir(parents=True)
    shutil.copyfile(config / "dagster.yaml", dagster_home / "dagster.yaml")
    _register_sample(dagster_home)
    workspace = root / "workspace.yaml"
    _write_workspace(workspace)

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HYSEM_", "DAGSTER_"))}
    env.update(
        HYSEM_HOME=str(home), DAGSTER_HOME=str(dagster_home), HYSEM_CONFIG_DIR=str(config), HYSEM_PROFILE="local"
    )
    log = root / "dagster-dev.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "dagster", "dev", "-h", "127.0.0.1", "-p", str(port), "-w", str(workspace)],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until_loaded(url, process, log)
        _stop_queries_sensor(url)
        yield DagsterServer(url, home, config, log)
    finally:
        stop(process)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, ARTIFACTS / "dagster-dev.log")


def materialized_partitions(url: str, asset: str, partitions: list[str]) -> set[str]:
    """Which of ``partitions`` of ``asset`` have a materialization, as the UI's API reports."""
    data = graphql(
        url,
        """query($path: [String!]!, $partitions: [String!]) { assetOrError(assetKey: {path: $path}) {
        ... on Asset { assetMaterializations(partitions: $partitions) { partition } } } }""",
        {"path": asset.split("/"), "partitions": partitions},
    )
    return {event["partition"] for event in data["assetOrError"]["assetMaterializations"]}


def wait_for(condition, timeout: float, message: str, poll: float = 1.0):
    """Poll ``condition`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(poll)
    raise AssertionError(f"Timed out after {timeout:.0f} s: {message}")


def runs(url: str, **run_filter) -> list[dict]:
    data = graphql(
        url,
        """query($filter: RunsFilter) { runsOrError(filter: $filter) { ... on Runs { results {
        runId status jobName tags { key value } stepStats { stepKey status startTime endTime } } } } }""",
        {"filter": run_filter},
    )
    return data["runsOrError"]["results"]


LAUNCH_RUN = """mutation($params: ExecutionParams!) { launchRun(executionParams: $params) {
  __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } ... on RunConfigValidationInvalid { errors { message } } } }"""


def launch_run(url: str, selector: dict[str, str], run_config: dict | None = None) -> str:
    """Launch one run of a job through the webserver, as the launchpad does; its run id."""
    launched = graphql(url, LAUNCH_RUN, {"params": {"selector": selector, "runConfigData": run_config or {}}})[
        "launchRun"
    ]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return launched["run"]["runId"]


def wait_for_run(url: str, run_id: str, timeout: float) -> dict:
    """The run once it has finished (whatever its status)."""

    def finished():
        run = next(r for r in runs(url, runIds=[run_id]))
        return run if run["status"] in {"SUCCESS", "FAILURE", "CANCELED"} else None

    return wait_for(finished, timeout=timeout, message=f"run {run_id}")
