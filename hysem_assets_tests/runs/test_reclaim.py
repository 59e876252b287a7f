"""Dead runs are told from live ones by their recorded process, and their status and pool slots reclaimed."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from click.testing import CliRunner
from dagster import DagsterInstance, DagsterRun, DagsterRunStatus

from hysem_assets.cli import main
from hysem_assets.core.owner import ProcessOwner, process_start
from hysem_assets.runs.instance import get_instance
from hysem_assets.runs.reclaim import pool_claims, reclaim_dead_runs, stale_runs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process identity from /proc")


def dead_owner(command: str = "hysem materialize --query q") -> ProcessOwner:
    """The owner record of a process that has since ended."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    owner = ProcessOwner(
        pid=child.pid, host=ProcessOwner.current().host, process=process_start(child.pid), command=command
    )
    child.kill()
    child.wait()
    return owner


def add_run(instance: DagsterInstance, owner: ProcessOwner | None, *slots: str, status=DagsterRunStatus.STARTED) -> str:
    """A run record as ``hysem materialize`` leaves it, holding a ``gpu`` slot per step in ``slots``."""
    run_id = str(uuid.uuid4())
    tags = owner.tags() if owner else {}
    instance.add_run(DagsterRun(job_name="__ephemeral_asset_job__", run_id=run_id, status=status, tags=tags))
    for step in slots:
        assert instance.event_log_storage.claim_concurrency_slot("gpu", run_id, step).is_claimed
    return run_id


@pytest.fixture
def instance() -> DagsterInstance:
    instance = get_instance()
    instance.event_log_storage.set_concurrency_slots("gpu", 2)
    return instance


def test_the_owner_is_alive_gone_or_elsewhere():
    me = ProcessOwner.current("test")
    assert me.state() == "alive" and ProcessOwner.from_tags(me.tags()) == me
    assert dead_owner().state() == "gone"
    assert ProcessOwner(pid=os.getpid(), host=me.host, process="another-boot:1").state() == "gone"  # pid reused
    assert ProcessOwner(pid=os.getpid(), host="another-host", process="").state() == "elsewhere"
    assert ProcessOwner.from_tags({"dagster/partition": "q"}) is None


def test_a_dead_run_is_marked_failed_and_its_slot_freed_and_live_runs_are_left(instance: DagsterInstance):
    dead = add_run(instance, dead_owner(), "parsed_docs")
    live = add_run(instance, ProcessOwner.current("hysem materialize --query other"), "vector_index")
    remote = add_run(instance, ProcessOwner(pid=1, host="another-host", process=""))
    said: list[str] = []
    assert reclaim_dead_runs(instance, said.append) == 1
    assert said == [
        f"Reclaimed run {dead[:8]} (STARTED by hysem materialize --query q, pid {instance.get_run_by_id(dead).tags['hysem/pid']} "
        f"on {ProcessOwner.current().host}, now gone): marked failed; freed pool gpu (parsed_docs)."
    ]
    assert instance.get_run_by_id(dead).status == DagsterRunStatus.FAILURE
    assert {instance.get_run_by_id(r).status for r in (live, remote)} == {DagsterRunStatus.STARTED}
    assert [(c.run_id, c.step_key) for c in pool_claims(instance)] == [(live, "vector_index")]
    assert reclaim_dead_runs(instance, said.append) == 0  # nothing left to do


def test_slots_of_runs_that_ended_are_freed(instance: DagsterInstance):
    ended = add_run(instance, ProcessOwner.current(), "parsed_docs", status=DagsterRunStatus.CANCELED)
    said: list[str] = []
    reclaim_dead_runs(instance, said.append)
    assert said == [f"Freed pool gpu (parsed_docs) of run {ended[:8]}, which has ended."] and not pool_claims(instance)


def test_doctor_lists_then_fixes_and_status_hints(instance: DagsterInstance):
    dead = add_run(instance, dead_owner(), "parsed_docs")
    untagged = add_run(instance, None)  # started before owners were recorded: no pid to judge it by
    runner = CliRunner()
    listed = runner.invoke(main, ["doctor"])
    assert listed.exit_code == 1, listed.output
    assert f"! stale run    run {dead[:8]} (STARTED by hysem materialize --query q" in listed.output
    assert (
        "claims pool gpu (parsed_docs)" in listed.output
        and "problem(s); `hysem doctor --fix` fixes them" in listed.output
    )
    assert f"  run          run {untagged[:8]} STARTED: launched by the Dagster daemon or UI" in listed.output
    assert "store lock   graph store" not in listed.output  # no store was ever opened in this home
    hint = runner.invoke(main, ["status", "--query", "air-pollution-cardio-ml"])
    assert f"run {dead[:8]}" in hint.output and "hysem doctor --fix" in hint.output
    fixed = runner.invoke(main, ["doctor", "--fix"])
    assert fixed.exit_code == 0 and f"fixed: Reclaimed run {dead[:8]}" in fixed.output, fixed.output
    assert [s.run_id for s in stale_runs(instance)] == [] and not pool_claims(instance)
    again = runner.invoke(main, ["doctor"])
    assert again.exit_code == 0 and "Nothing to fix." in again.output
