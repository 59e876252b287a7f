"""Reclaim what dead runs hold: their in-progress status and their pool slots.

A run whose process is gone keeps the ``gpu`` slot it claimed, and the next run waits for
it for ever. Every ``hysem`` command that starts a run first looks for such runs (recorded
owner on this host, process gone), marks them failed and frees their slots, and says so;
it also frees slots still held or awaited by runs that have already ended. Runs of other
hosts, and runs the Dagster daemon launched, are left to their owners and to Dagster's
own run monitoring.
"""

from __future__ import annotations

import socket
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus, RunsFilter

from hysem_assets.core.owner import ProcessOwner

IN_PROGRESS = [
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
    DagsterRunStatus.CANCELING,
]


@dataclass(frozen=True)
class PoolClaim:
    """A step of a run holding (``held``) or waiting for a slot of a concurrency pool."""

    pool: str
    run_id: str
    step_key: str
    held: bool


@dataclass(frozen=True)
class StaleRun:
    """A run still marked in progress whose process is gone."""

    run_id: str
    status: str
    owner: ProcessOwner
    claims: tuple[PoolClaim, ...]

    def describe(self) -> str:
        return f"run {self.run_id[:8]} ({self.status} by {self.owner.describe()}, now gone)"


def pool_claims(instance: DagsterInstance) -> list[PoolClaim]:
    """Every slot held and every step waiting, in every pool of the instance."""
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return []
    claims = []
    for pool in sorted(storage.get_concurrency_keys()):
        info = storage.get_concurrency_info(pool)
        claims += [PoolClaim(pool, slot.run_id, slot.step_key, True) for slot in info.claimed_slots]
        claims += [  # a pending step with a slot assigned is the claimed slot above
            PoolClaim(pool, step.run_id, step.step_key, False)
            for step in info.pending_steps
            if step.assigned_timestamp is None
        ]
    return claims


def describe_claims(claims: list[PoolClaim] | tuple[PoolClaim, ...]) -> str:
    """``pool gpu (parsed_docs, vector_index waiting)``: what steps hold or await, per pool."""
    by_pool: dict[str, list[str]] = defaultdict(list)
    for claim in claims:
        step = claim.step_key if claim.held else f"{claim.step_key} waiting"
        if step not in by_pool[claim.pool]:
            by_pool[claim.pool].append(step)
    return "; ".join(f"pool {pool} ({', '.join(steps)})" for pool, steps in sorted(by_pool.items()))


def event_log_owner(instance: DagsterInstance, run_id: str) -> ProcessOwner | None:
    """The process Dagster logged as executing a run ("Executing steps in process (pid: N)"), host unknown.

    Runs started before their owner was recorded as tags (or by other tools) have only this.
    """
    for record in instance.all_logs(run_id, of_type=DagsterEventType.ENGINE_EVENT):
        data = record.dagster_event.engine_event_data if record.dagster_event else None
        pid = data.metadata.get("pid") if data else None
        if pid is not None and str(pid.value).isdigit():
            return ProcessOwner(pid=int(pid.value), host=socket.gethostname(), process="")
    return None


def stale_runs(instance: DagsterInstance, *, untagged: bool = False) -> list[StaleRun]:
    """Runs marked in progress whose recorded owner ran on this host and is gone.

    ``untagged`` also judges runs without a recorded owner by the pid in their event log,
    which assumes they ran on this machine (true of a local instance): ``hysem doctor``
    does so on request, a starting run never does.
    """
    claims = pool_claims(instance)
    stale = []
    for record in instance.get_run_records(RunsFilter(statuses=IN_PROGRESS)):
        run = record.dagster_run
        owner = ProcessOwner.from_tags(run.tags)
        if owner is None and untagged:
            owner = event_log_owner(instance, run.run_id)
        if owner is not None and owner.state() == "gone":
            held = tuple(c for c in claims if c.run_id == run.run_id)
            stale.append(StaleRun(run.run_id, run.status.value, owner, held))
    return stale


def ended_run_claims(instance: DagsterInstance) -> list[PoolClaim]:
    """Slots held or awaited by runs that have ended or no longer exist."""
    claims = pool_claims(instance)
    run_ids = sorted({c.run_id for c in claims})
    if not run_ids:
        return []
    live = {r.dagster_run.run_id for r in instance.get_run_records(RunsFilter(run_ids=run_ids, statuses=IN_PROGRESS))}
    return [c for c in claims if c.run_id not in live]


def reclaim_run(instance: DagsterInstance, stale: StaleRun) -> str:
    """Mark ``stale`` failed and free its slots; returns what was done, in one line."""
    run = instance.get_run_by_id(stale.run_id)
    if run is not None and run.status in IN_PROGRESS:
        instance.report_run_failed(
            run,
            f"Marked failed by hysem: its process, {stale.owner.describe()}, is gone "
            "(killed, or its machine restarted) and the run cannot finish.",
        )
    instance.event_log_storage.free_concurrency_slots_for_run(stale.run_id)
    freed = f"; freed {describe_claims(stale.claims)}" if stale.claims else ""
    return f"Reclaimed {stale.describe()}: marked failed{freed}."


def free_ended_claims(instance: DagsterInstance, claims: list[PoolClaim]) -> list[str]:
    messages = []
    by_run: dict[str, list[PoolClaim]] = defaultdict(list)
    for claim in claims:
        by_run[claim.run_id].append(claim)
    for run_id, held in by_run.items():
        instance.event_log_storage.free_concurrency_slots_for_run(run_id)
        messages.append(f"Freed {describe_claims(held)} of run {run_id[:8]}, which has ended.")
    return messages


def reclaim_dead_runs(instance: DagsterInstance, say: Callable[[str], None]) -> int:
    """Reclaim every stale run and every slot of an ended run, saying what; returns how many."""
    messages = [reclaim_run(instance, stale) for stale in stale_runs(instance)]
    messages += free_ended_claims(instance, ended_run_claims(instance))
    for message in messages:
        say(message)
    return len(messages)
