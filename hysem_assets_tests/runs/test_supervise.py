"""A command-line run says what it waits for, sleeps while it waits, stops on SIGTERM, and takes over from a dead holder."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest
from dagster import DagsterInstance, DagsterRun, DagsterRunStatus, RunsFilter

from hysem_assets.core.owner import COMMAND_TAG, ProcessOwner, process_start
from hysem_assets.runs.instance import get_instance
from hysem_assets.runs.reclaim import pool_claims
from hysem_assets.runs.supervise import run_supervised
from hysem_assets_tests.paths import PROJECT_ROOT
from hysem_assets_tests.runs.test_reclaim import add_run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process identity from /proc")

#: One asset in the ``gpu`` pool, materialized the way ``hysem materialize`` does it.
RUN_ONE_GPU_STEP = textwrap.dedent(
    """
    import sys
    from dagster import asset, materialize
    from hysem_assets.runs.instance import get_instance
    from hysem_assets.runs.supervise import run_supervised

    @asset(pool="gpu")
    def gpu_step() -> int:
        return 1

    instance = get_instance()
    result = run_supervised(
        lambda tags: materialize([gpu_step], instance=instance, tags=tags, raise_on_error=False),
        instance,
        command="hysem materialize --select gpu_step",
        say=lambda line: print(line, file=sys.stderr, flush=True),
    )
    print("success" if result.success else "failure", flush=True)
    """
)


class Watched:
    """A subprocess whose output lines are collected as they come."""

    def __init__(self, *command: str) -> None:
        self.process = subprocess.Popen(
            command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True).start()

    def wait_for(self, text: str, timeout: float = 90) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if text in line:
                    return line
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} within {timeout} s:\n" + "".join(self.lines[-30:]))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def held_pool() -> tuple[DagsterInstance, subprocess.Popen, str]:
    """The one ``gpu`` slot held by a run whose process is alive."""
    instance = get_instance()
    instance.event_log_storage.set_concurrency_slots("gpu", 1)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    owner = ProcessOwner(
        pid=holder.pid,
        host=ProcessOwner.current().host,
        process=process_start(holder.pid),
        command="hysem materialize --query other",
    )
    run_id = add_run(instance, owner, "parsed_docs")
    yield instance, holder, run_id
    holder.kill()
    holder.wait()


def test_a_waiting_run_says_so_sleeps_and_stops_on_sigterm(held_pool):
    instance, _, holder_run = held_pool
    run = Watched(sys.executable, "-c", RUN_ONE_GPU_STEP)
    try:
        line = run.wait_for("gpu_step is waiting for pool gpu")
        assert f"held by run {holder_run[:8]} (pool gpu (parsed_docs); hysem materialize --query other, pid" in line
        before, since = cpu_seconds(run.process.pid), time.monotonic()
        while sum("is waiting for pool gpu" in line for line in run.lines) < 2:  # said again every few seconds
            assert time.monotonic() - since < 15, "".join(run.lines[-10:])
            time.sleep(0.2)
        time.sleep(max(0.0, 6 - (time.monotonic() - since)))
        spent = cpu_seconds(run.process.pid) - before
        assert spent < 0.06 * (time.monotonic() - since), f"the waiting run spins: {spent:.2f} s of CPU"
        run.process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        assert run.process.wait(timeout=20) == 128 + signal.SIGTERM
        assert time.monotonic() - started < 10
    finally:
        run.process.kill()
    stopped = run.wait_for("Stopped by SIGTERM")
    [record] = instance.get_run_records(RunsFilter(tags={COMMAND_TAG: "hysem materialize --select gpu_step"}))
    assert f"run {record.dagster_run.run_id[:8]} marked failed; freed pool gpu (gpu_step waiting)" in stopped
    assert record.dagster_run.status == DagsterRunStatus.FAILURE
    assert [c.run_id for c in pool_claims(instance)] == [holder_run]


def test_a_waiting_run_takes_over_when_the_holder_dies(held_pool):
    instance, holder, holder_run = held_pool
    run = Watched(sys.executable, "-c", RUN_ONE_GPU_STEP)
    try:
        run.wait_for("gpu_step is waiting for pool gpu")
        holder.kill()
        holder.wait()
        run.wait_for(f"Reclaimed run {holder_run[:8]}")
        assert run.process.wait(timeout=90) == 0
    finally:
        run.process.kill()
    assert run.wait_for("success")
    assert instance.get_run_by_id(holder_run).status == DagsterRunStatus.FAILURE and not pool_claims(instance)


def test_a_run_whose_execution_raises_is_marked_failed_not_left_in_progress():
    instance = get_instance()
    instance.event_log_storage.set_concurrency_slots("gpu", 1)
    started: list[str] = []

    def launch(tags: dict[str, str]):
        run_id = str(uuid.uuid4())
        instance.add_run(
            DagsterRun(job_name="__ephemeral_asset_job__", run_id=run_id, status=DagsterRunStatus.STARTED, tags=tags)
        )
        assert instance.event_log_storage.claim_concurrency_slot("gpu", run_id, "parsed_docs").is_claimed
        started.append(run_id)
        raise OSError(errno.ENOSPC, "No space left on device")  # as when the event log meets a full disk

    with pytest.raises(OSError, match="No space left"):
        run_supervised(launch, instance, command="hysem materialize --query q", say=print)
    run = instance.get_run_by_id(started[0])
    assert run.status == DagsterRunStatus.FAILURE
    assert not [claim for claim in pool_claims(instance) if claim.run_id == run.run_id]
