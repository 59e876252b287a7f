"""A team server under load and faults, end to end: ``hysem shared up`` starts PostgreSQL, a code server,
the webserver and the daemon as separate processes; four clients launch runs and backfills at once through
the GraphQL API for three queries; the daemon is killed with SIGKILL in the middle of a backfill, the code
server restarted while runs are queued, the webserver restarted while a user watches a run, and PostgreSQL
restarted after one of its steps. Afterwards every run has ended; every asset partition the clients built
was materialized once, and the watched run's at most once per run of its retry chain (a step in flight while
PostgreSQL was away may have stored its materialization but not its success); each query's tables equal a
clean single-user run's, and ``hysem doctor`` against the shared instance finds nothing. Last, the refusals: a second webserver on the port, a run for an undeclared query (the
command line's line), and ``hysem doctor`` with PostgreSQL down (one line, in seconds).

One test, because each step builds on the state the one before left; it costs a few minutes.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance, DagsterRunStatus, RunsFilter
from dagster._core.storage.tags import AUTO_RETRY_RUN_ID_TAG, PARTITION_NAME_TAG, ROOT_RUN_ID_TAG, WILL_RETRY_TAG

from hysem_assets.runs import shared
from hysem_assets.runs.backfill import GraphQLError, graphql, launch_backfill, repository_selector
from hysem_assets.runs.launch import materialize_query
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.queries import QueryError, get_query
from hysem_assets_tests.neo4j_launcher import free_port
from hysem_assets_tests.paths import HYSEM, PROJECT_ROOT
from hysem_assets_tests.ui.server import runs, wait_for

SAMPLE = "air-pollution-cardio-ml"
QUERIES = {"team-a": 12, "team-b": 16, "team-c": 20}  # the sample's search, each capped at its own size
FIRST = ["raw_metadata/pubmed", "raw_metadata/openalex"]
MORE = ["raw_metadata/scopus", "raw_metadata/europepmc", "raw_metadata/imported", "raw_metadata/citations"]
#: What the four clients build, then the run a user watches through the webserver and PostgreSQL restarts.
CLIENTS = {"team-a": FIRST + MORE, "team-b": FIRST + MORE[:2], "team-c": FIRST + MORE}
WATCHED = ("team-b", [*MORE[2:], "deduped_corpus"])
#: What each query ends with.
EXPECTED = {**CLIENTS, WATCHED[0]: CLIENTS[WATCHED[0]] + WATCHED[1]}
ENDED = {"SUCCESS", "FAILURE", "CANCELED"}

LAUNCH_ASSETS = """mutation($params: ExecutionParams!) { launchRun(executionParams: $params) {
  __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }"""


def _declare(config: Path) -> None:
    document = yaml.safe_load((config / "queries.yaml").read_text(encoding="utf-8"))
    sample = next(query for query in document["queries"] if query["slug"] == SAMPLE)
    document["queries"] = [{**sample, "slug": slug, "max_records": size} for slug, size in QUERIES.items()]
    (config / "queries.yaml").write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


def _launch_run(url: str, slug: str, assets: list[str]) -> dict:
    selector = {**repository_selector(url), "jobName": "query_job"}
    selector["assetSelection"] = [{"path": key.split("/")} for key in assets]
    tags = [{"key": "dagster/partition", "value": slug}]
    params = {"selector": selector, "executionMetadata": {"tags": tags}, "runConfigData": {}}
    return graphql(url, LAUNCH_ASSETS, {"params": params})["launchRun"]


def _run_id(url: str, slug: str, assets: list[str]) -> str:
    launched = _launch_run(url, slug, assets)
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return launched["run"]["runId"]


def _settled(url: str) -> bool:
    """Every run has ended, and every failed one has its retry launched or is marked as not retried.

    A failed run's ``will_retry`` tag comes just after its status, and the daemon launches the retry a
    moment later: between the two, every run has ended but the work has not.
    """
    for run in runs(url):
        tags = {tag["key"]: tag["value"] for tag in run["tags"]}
        if run["status"] not in ENDED:
            return False
        if run["status"] == "FAILURE" and (
            WILL_RETRY_TAG not in tags or (tags[WILL_RETRY_TAG] == "true" and AUTO_RETRY_RUN_ID_TAG not in tags)
        ):
            return False
    return True


def _summary(url: str) -> list[tuple[str, str, str]]:
    """Each run's id, status and partition: what a failed assertion shows."""
    return [
        (run["runId"][:8], run["status"], next((t["value"] for t in run["tags"] if t["key"] == PARTITION_NAME_TAG), ""))
        for run in runs(url)
    ]


def _materializations(slug: str, asset: str) -> int:
    with DagsterInstance.get() as instance:
        filtered = AssetRecordsFilter(asset_key=AssetKey.from_user_string(asset), asset_partitions=[slug])
        return len(instance.fetch_materializations(filtered, limit=5).records)


def _retry_chain(url: str, run_id: str) -> list[dict]:
    """The run and the retries the daemon launched of it."""
    return [
        run
        for run in runs(url)
        if run["runId"] == run_id or any(t["key"] == ROOT_RUN_ID_TAG and t["value"] == run_id for t in run["tags"])
    ]


def _pid(service: str) -> int:
    found = next(s for s in shared.status() if s.name == service)
    assert found.running, f"{service} is not running"
    return found.pid


def _watch(url: str, run_id: str, seen: list[str]) -> None:
    """A user with the run's page open: polls its status, and keeps polling while the webserver is away."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            status = next(run["status"] for run in runs(url, runIds=[run_id]))
        except (GraphQLError, StopIteration):
            status = "unreachable"
        if not seen or seen[-1] != status:
            seen.append(status)
        if status in ENDED:
            return
        time.sleep(0.5)


def _steps_done(url: str, run_id: str) -> int:
    run = next(run for run in runs(url, runIds=[run_id]))
    return sum(step["status"] == "SUCCESS" for step in run["stepStats"])


#: Each run serves the bundled snapshot from a mirror on a port of its own, which links to files carry.
MIRROR = re.compile(r"http://127\.0\.0\.1:\d+/")


def _tables(home: Path) -> dict[tuple[str, str], pd.DataFrame]:
    def read(asset: str, slug: str) -> pd.DataFrame:
        table = pd.read_parquet(asset_file(asset, slug, home / "assets"))
        return table.map(lambda value: MIRROR.sub("http://mirror/", value) if isinstance(value, str) else value)

    return {(slug, asset): read(asset, slug) for slug, assets in EXPECTED.items() for asset in assets}


def _clean_run(home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, str], pd.DataFrame]:
    """The same assets materialized by one user in process, in a home of their own."""
    with monkeypatch.context() as local:
        local.setenv("HYSEM_HOME", str(home))
        for variable in [name for name in os.environ if name.startswith(("HYSEM_POSTGRES", "DAGSTER_"))]:
            local.delenv(variable)
        for slug, assets in EXPECTED.items():
            assert materialize_query(slug, keys=assets).success, slug
        return _tables(home)


def _hysem(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([HYSEM, *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=timeout)


def test_a_team_server_holds_up_under_load_and_faults(
    isolated_home: Path, config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _declare(config)
    for variable in ("HYSEM_POSTGRES_PORT", "HYSEM_CODE_SERVER_PORT", "HYSEM_UI_PORT"):
        monkeypatch.setenv(variable, str(free_port()))
    url = f"http://127.0.0.1:{os.environ['HYSEM_UI_PORT']}"
    monkeypatch.setenv("DAGSTER_HOME", str(isolated_home / "dagster"))
    for name, value in shared.connection().items():  # what `up` puts in this process's environment, undone after
        monkeypatch.setenv(name, value)
    said: list[str] = []
    try:
        for service in shared.SERVICES[:3]:  # the daemon once the queries are partitions: its sensor runs new ones
            shared.start(service)
        launch_backfill(url, list(QUERIES), assets=FIRST[:1], title="registering")  # registers the partitions
        shared.up(said.append)
        assert [s.name for s in shared.status() if s.running] == list(shared.SERVICES)

        # four clients at once
        launched: dict[str, object] = {}
        clients = {
            "backfill a+b": lambda: launch_backfill(url, ["team-a", "team-b"], assets=FIRST[1:]),
            "backfill c": lambda: launch_backfill(url, ["team-c"], assets=FIRST[1:]),
            "run a": lambda: _run_id(url, "team-a", MORE),
            "run b": lambda: _run_id(url, "team-b", MORE[:2]),
        }
        threads = [
            threading.Thread(target=lambda n=name, c=client: launched.__setitem__(n, c()))
            for name, client in clients.items()
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert set(launched) == set(clients), launched

        # the daemon killed in the middle of a backfill, then the code server restarted while runs are queued
        wait_for(lambda: any(r["status"] == "STARTED" for r in runs(url)), 300, "a run to start")
        os.kill(_pid("daemon"), signal.SIGKILL)
        queued = _run_id(url, "team-c", MORE)
        wait_for(lambda: not any(r["status"] in {"STARTED", "STARTING"} for r in runs(url)), 600, "runs in flight")
        assert next(run["status"] for run in runs(url, runIds=[queued])) == "QUEUED"
        assert shared.stop("code-server")
        shared.up(said.append)
        wait_for(lambda: len(runs(url)) >= 9 and _settled(url), 900, "every run of the four clients and their retries")
        for slug, assets in CLIENTS.items():  # runs resumed or retried from their failure: nothing twice
            for asset in assets:
                assert _materializations(slug, asset) == 1, (slug, asset, _summary(url))

        # the webserver restarted while a user watches a run, PostgreSQL restarted after one of its steps
        watched = _run_id(url, *WATCHED)
        seen: list[str] = []
        watcher = threading.Thread(target=_watch, args=(url, watched, seen))
        watcher.start()
        wait_for(lambda: "STARTED" in seen, 300, "the watched run to start")
        assert shared.stop("webserver")
        shared.up(said.append)
        wait_for(lambda: _steps_done(url, watched) >= 1 or seen[-1] in ENDED, 600, "a step of the watched run")
        assert shared.stop("postgres")
        shared.up(said.append)
        watcher.join(timeout=900)
        assert "unreachable" in seen and seen[-1] in ENDED, seen
        wait_for(lambda: _settled(url), 900, "the watched run and its retries")

        with DagsterInstance.get() as instance:
            assert not instance.get_runs(RunsFilter(statuses=[s for s in DagsterRunStatus if s.value not in ENDED]))
            assert all(backfill.status.value.startswith("COMPLETED") for backfill in instance.get_backfills())
        # A step in flight while PostgreSQL was away may have stored its materialization but not its success,
        # so the retry runs it again: at most once per run of the chain, and the chain ends in success.
        chain = _retry_chain(url, watched)
        assert any(run["status"] == "SUCCESS" for run in chain), _summary(url)
        for asset in WATCHED[1]:
            assert 1 <= _materializations(WATCHED[0], asset) <= len(chain), (asset, _summary(url))
        for slug, assets in CLIENTS.items():
            for asset in assets:
                assert _materializations(slug, asset) == 1, (slug, asset, _summary(url))
        shared_tables = _tables(isolated_home)
        for key, table in _clean_run(tmp_path / "clean", monkeypatch).items():
            pd.testing.assert_frame_equal(shared_tables[key], table, obj=str(key))

        doctor = _hysem("doctor")
        assert doctor.returncode == 0 and "Nothing to fix." in doctor.stdout, doctor.stdout + doctor.stderr

        # refusals
        second = _hysem("shared", "run", "webserver")
        assert second.returncode == 1 and f"port {os.environ['HYSEM_UI_PORT']}" in second.stderr, second.stderr
        assert len(second.stderr.strip().splitlines()) == 1
        refused = _launch_run(url, "not-declared", FIRST)
        with pytest.raises(QueryError) as expected:
            get_query("not-declared")
        assert refused["__typename"] == "PythonError" and str(expected.value) in refused["message"], refused
        command = _hysem("materialize", "--query", "not-declared")
        assert command.returncode == 1 and command.stderr.strip() == f"Error: {expected.value}"
        assert shared.stop("postgres")
        started = time.monotonic()
        down = _hysem("doctor", timeout=60)
        assert down.returncode == 1 and time.monotonic() - started < 45
        assert down.stderr.strip().splitlines() == [
            next(line for line in down.stderr.splitlines() if "PostgreSQL does not answer" in line)
        ]
    finally:
        shared.down(said.append)
        shutil.rmtree(shared.postgres_data(), ignore_errors=True)
