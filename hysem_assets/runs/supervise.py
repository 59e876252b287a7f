"""Run a materialization from the command line so that it can be stopped, watched and recovered.

Dagster's in-process execution captures SIGINT and SIGTERM and only acts on them inside a
step's code, so a run waiting on a pool ignores both; and it reports a step blocked by a
pool only in the event log, once every five minutes. Here the run executes in a worker
thread while the main thread owns the signals: SIGINT or SIGTERM marks the run failed,
frees its slots and ends the process (its parse workers die with it) within a second or
two. Meanwhile the main thread says every few seconds which step waits for which pool and
who holds it, and reclaims a holder whose process has died while the run waited.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import TextIO, TypeVar

from dagster import DagsterInstance, RunsFilter

from hysem_assets.core.owner import INVOCATION_TAG, ProcessOwner
from hysem_assets.runs.reclaim import (
    IN_PROGRESS,
    describe_claims,
    event_log_owner,
    pool_claims,
    reclaim_dead_runs,
    reclaim_run,
    stale_runs,
)

R = TypeVar("R")
#: Seconds between two "waiting for pool" lines of one step.
WAIT_NOTICE_S = 5.0


class _Stop(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stop(signum: int, _frame: object) -> None:
    raise _Stop(signum)


def patch_pool_backoff() -> None:
    """Let Dagster's in-process executor sleep between claims of a pool slot instead of spinning.

    ``InstanceConcurrencyContext.interval_to_next_pending_claim_check`` returns
    ``min(0, ...)``, never a positive wait, so a step blocked on a pool polls without pause
    (three quarters of a core on the sample) until the slot frees. The replacement returns
    the time until the next claim is due (one to fifteen seconds, Dagster's own backoff).
    """
    from dagster._core.execution.plan.instance_concurrency_context import InstanceConcurrencyContext

    if getattr(InstanceConcurrencyContext, "_hysem_backoff", False):
        return

    def interval_to_next_pending_claim_check(self) -> float:
        due = [ready_at - time.time() for ready_at in self._pending_timeouts.values()]
        return max(0.0, min(due)) if self._pending_claims and due else 0.0

    InstanceConcurrencyContext.interval_to_next_pending_claim_check = interval_to_next_pending_claim_check
    InstanceConcurrencyContext._hysem_backoff = True


class _PoolWatch:
    """Says which steps of one run wait for a pool, who holds it, and reclaims dead holders."""

    def __init__(self, instance: DagsterInstance, invocation: str, say: Callable[[str], None]) -> None:
        self.instance = instance
        self.invocation = invocation
        self.say = say
        self.run_id: str | None = None
        self.last = 0.0

    def find_run(self) -> str | None:
        if self.run_id is None:
            runs = self.instance.get_run_records(RunsFilter(tags={INVOCATION_TAG: self.invocation}), limit=1)
            self.run_id = runs[0].dagster_run.run_id if runs else None
        return self.run_id

    def tick(self) -> None:
        if time.monotonic() - self.last < WAIT_NOTICE_S or self.find_run() is None:
            return
        self.last = time.monotonic()
        claims = pool_claims(self.instance)
        waiting = [c for c in claims if c.run_id == self.run_id and not c.held]
        if not waiting:
            return
        stale = {s.run_id: s for s in stale_runs(self.instance)}
        for claim in waiting:
            holders = [c for c in claims if c.pool == claim.pool and c.held and c.run_id != self.run_id]
            self.say(f"{claim.step_key} is waiting for pool {claim.pool}: {self._holders(holders) or 'no slot free'}.")
        for run_id in {c.run_id for c in claims if c.held} & set(stale):
            self.say(reclaim_run(self.instance, stale[run_id]) + " The waiting step takes its slot shortly.")

    def _holders(self, holders: list) -> str:
        parts = []
        for run_id in dict.fromkeys(c.run_id for c in holders):
            run = self.instance.get_run_by_id(run_id)
            owner = ProcessOwner.from_tags(run.tags) if run is not None else None
            logged = event_log_owner(self.instance, run_id) if owner is None else None
            if owner is not None:
                who = owner.describe()
            elif logged is not None and logged.state() == "gone":
                who = f"its process {logged.pid} is gone: `hysem doctor --fix` reclaims it"
            else:
                who = "a run launched by the Dagster daemon or UI"
            steps = describe_claims([c for c in holders if c.run_id == run_id])
            parts.append(f"held by run {run_id[:8]} ({steps}; {who})")
        return "; ".join(parts)


def _abort(instance: DagsterInstance, watch: _PoolWatch, signum: int, say: Callable[[str], None]) -> None:
    """Mark the run failed, free its slots and end the process now, its workers with it."""
    for sig in (signal.SIGINT, signal.SIGTERM):  # a second signal ends the process at once
        signal.signal(sig, lambda again, _frame: os._exit(128 + again))
    name = signal.Signals(signum).name
    run_id = watch.find_run()
    run = instance.get_run_by_id(run_id) if run_id else None
    freed = ""
    if run is not None:
        held = [c for c in pool_claims(instance) if c.run_id == run.run_id]
        if run.status in IN_PROGRESS:
            instance.report_run_failed(run, f"Stopped by {name} from the command line.")
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        freed = f"; freed {describe_claims(held)}" if held else ""
        say(f"Stopped by {name}: run {run.run_id[:8]} marked failed{freed}.")
    else:
        say(f"Stopped by {name} before the run started.")
    for child in multiprocessing.active_children():
        child.kill()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(128 + signum)


def _to_terminal(say: Callable[[str], None]) -> tuple[Callable[[str], None], Callable[[], None]]:
    """A ``say`` that writes to stderr as it is now, and a function closing it.

    During a run Dagster points the process's stderr at a log file and mirrors it with a
    helper process; a Ctrl-C ends that helper too, so what is said after it would be lost.
    """
    try:
        stream = os.fdopen(os.dup(sys.stderr.fileno()), "w", buffering=1, encoding="utf-8", errors="replace")
    except (AttributeError, OSError, ValueError):  # no file descriptor (a test runner's capture)
        return say, lambda: None

    def tell(line: str) -> None:
        stream.write(line + "\n")
        stream.flush()

    return tell, stream.close


#: How Dagster begins what it writes to stderr when it cannot store a log call in its event log; the SQL
#: statement, its parameters and a link follow on further lines of the same write.
EVENT_LOG_FAILURE = "Exception while writing logger call to event log:"


class StorageErrorsInOneLine:
    """A run's stderr, with Dagster's failures to write its event log cut to their first line: the SQL and
    parameters after it tell a user nothing, and the command's last line says what to do (a full disk, most
    often)."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        if text.startswith(EVENT_LOG_FAILURE):
            text = text.split("\n", 1)[0] + "\n"
        return self._stream.write(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def run_supervised(
    launch: Callable[[dict[str, str]], R],
    instance: DagsterInstance,
    *,
    command: str,
    say: Callable[[str], None],
) -> R:
    """Reclaim dead runs, then call ``launch(tags)`` (which runs one Dagster run with those tags) under watch."""
    reclaim_dead_runs(instance, say)
    patch_pool_backoff()
    invocation = uuid.uuid4().hex
    tags = {**ProcessOwner.current(command).tags(), INVOCATION_TAG: invocation}
    if threading.current_thread() is not threading.main_thread():
        return launch(tags)  # signals belong to the main thread; run without the watch
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            outcome["result"] = launch(tags)
        except BaseException as error:  # handed to the main thread as it is
            outcome["error"] = error

    say, close = _to_terminal(say)
    watch = _PoolWatch(instance, invocation, say)
    worker = threading.Thread(target=work, name="hysem-run", daemon=True)
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        worker.start()
        while worker.is_alive():
            worker.join(1.0)
            try:
                watch.tick()
            except Exception as error:  # the watch is a courtesy: a busy database must not stop the run
                say(f"(could not check the pools: {type(error).__name__}: {error})")
        if "error" in outcome:
            _fail_after_error(instance, watch, outcome["error"], say)  # type: ignore[arg-type]
    except _Stop as stop:
        _abort(instance, watch, stop.signum, say)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        close()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]


def _fail_after_error(
    instance: DagsterInstance, watch: _PoolWatch, error: BaseException, say: Callable[[str], None]
) -> None:
    """A run whose execution itself raised (its event log met a full disk, say) is marked failed now
    rather than left in progress; when that cannot be written either, the next command reclaims it."""
    try:
        run_id = watch.find_run()
        run = instance.get_run_by_id(run_id) if run_id else None
        if run is not None and run.status in IN_PROGRESS:
            instance.report_run_failed(run, f"The run stopped on an error: {type(error).__name__}: {error}")
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
            say(f"Run {run.run_id[:8]} marked failed.")
    except Exception:  # the storage is as broken as the run: leave it to the next command's reclaim
        say("The run could not be marked failed now; the next `hysem materialize` or `hysem doctor --fix` will.")
