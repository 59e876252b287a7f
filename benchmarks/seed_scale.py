"""Seed-scale workload: the whole asset graph on ~2,000 works and ~1,000 PDFs, then a 50-record update.

Generates (``benchmarks/seedgen.py``, seeded) a snapshot of 3,400 records across PubMed,
OpenAlex and Scopus with realistic overlap (2,000 unique works) and 1,000 open-access PDFs of
10-15 pages, serves it with the local mirror (``hysem_assets.mirror``), adds a query for it
with the ``generic`` protocol in a fresh ``HYSEM_HOME`` and config folder, and runs
``hysem materialize --query seed-scale`` on the embedded default profile: every asset of the
partition, as a user would. It prints the wall time, CPU time and peak memory of each step,
then adds 50 new records (new works across the sources, a few with PDFs) to the snapshot,
restarts the mirror on the same port, runs the same command again and prints the same table
and the ratio of the re-run's time to the full run's. A verdict line per target ends the
report:

    whole graph <= 45 min, peak RSS <= 6 GiB, 50-record re-run <= 10% of the full run (on 2 cores)

Below scale 1 the verdicts are about the smaller workload; ``--extrapolate`` fits each step's
time as ``a + b * scale`` through the JSON results of two scales (``--json``) and predicts
scale 1, which says which asset dominates before anyone spends 45 minutes finding out.

How it measures. The command runs as a child process (Dagster's in-process executor: the
steps run one after the other in that process; ``parsed_docs`` spawns parse workers and
``topics`` a forkserver pool). A sampler thread walks the child's process tree through
``/proc`` every ``--interval`` seconds (0.5 by default) and records the sum of the tree's
resident set sizes (VmRSS; an upper bound, since pages shared between processes count once
per process), the sum of its proportional set sizes (Pss from ``smaps_rollup``: shared pages
split between their users, the tree's real footprint) and its CPU time (the latest user +
system time of every process ever seen in the tree, so pool workers that exited still
count). After the run, the step timings come from the run's Dagster event log (STEP_START to
STEP_SUCCESS or STEP_FAILURE, with the assets each step materialized); each step's peak is
the highest sample between its start and end, and its CPU time the growth of the tree's CPU
time over the same window (``cpu/wall`` near 2 means both cores were busy; far below 1 on a
machine others share means the step waited for a core). A spike shorter than the interval
can slip between samples, so the run's line also shows the largest VmHWM (the kernel's own
peak of each process) seen in the tree, and the kernel's ``ru_maxrss`` of the waited-for
processes when it grew during the run. The mirror runs in this script's own process and
counts in none of the figures: it stands in for the remote APIs.

    python benchmarks/seed_scale.py                        # full scale (up to 45 min of both cores)
    python benchmarks/seed_scale.py --scale 0.03           # ~100 records, 30 PDFs: a quick check
    python benchmarks/seed_scale.py --scale 0.03 --json a.json && python benchmarks/seed_scale.py --scale 0.06 --json b.json
    python benchmarks/seed_scale.py --extrapolate a.json b.json
    options: [--seed 7] [--keep DIR] [--workers N] [--interval 0.5] [--no-rerun] [--generate-only]

``--keep DIR`` keeps the snapshot, HYSEM_HOME, config and logs in DIR (a later run with the
same scale and seed reuses the snapshot); without it everything lives in a temporary folder
removed at the end. ``--workers N`` sets the processes that render PDFs and, in a copy of the
local profile, the parse and topic workers (by default the profile is used as it is).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import seedgen  # noqa: E402

from hysem_assets.mirror.server import MirrorServer  # noqa: E402
from hysem_assets.settings.environment import BUNDLED  # noqa: E402
from hysem_assets.settings.profile import bundled_profiles  # noqa: E402

TARGET_WALL_S = 45 * 60
TARGET_RSS_BYTES = 6 * 2**30
TARGET_RERUN_RATIO = 0.10
MIRRORED = ("pubmed", "openalex", "scopus", "crossref", "unpaywall")
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")
GIB = 2**30


# ----------------------------------------------------------------------------- process tree sampling


@dataclass
class Sample:
    t: float  # time.time(), the clock Dagster's event timestamps use
    rss: int  # bytes, summed over the tree
    pss: int  # bytes, summed over the tree (0 where smaps_rollup is unreadable)
    cpu: float  # seconds of user + system time of every process of the tree seen so far
    processes: int


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _stat_fields(pid: int) -> list[str] | None:
    text = _read(f"/proc/{pid}/stat")
    if text is None:
        return None
    return text[text.rindex(")") + 2 :].split()  # fields after "pid (comm) "; [0] is the state


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
        text = _read(f"/proc/{pid}/task/{task}/children")
        if text:
            found += [int(child) for child in text.split()]
    return found


def _tree(root: int) -> list[int]:
    seen, stack = [], [root]
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.append(pid)
        stack += _children(pid)
    return seen


def _memory(pid: int) -> tuple[int, int, int]:
    """VmRSS, VmHWM (the process's own peak so far) and Pss of one process, in bytes."""
    rss = hwm = pss = 0
    status = _read(f"/proc/{pid}/status") or ""
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) * 1024
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) * 1024
    rollup = _read(f"/proc/{pid}/smaps_rollup") or ""
    for line in rollup.splitlines():
        if line.startswith("Pss:"):
            pss = int(line.split()[1]) * 1024
    return rss, hwm, pss


def sample_tree(root: int, cpu_seen: dict[tuple[int, str], float], hwm_seen: dict[tuple[int, str], int]) -> Sample:
    """One sample of the tree under ``root``.

    CPU time is the sum over every process ever seen of its latest user + system time (keyed
    by pid and start time, so a reused pid is a new process): workers of a pool that
    outlives them (a forkserver's) count too, and none counts twice through a parent's
    ``cutime``. Each process's VmHWM is kept the same way.
    """
    rss = pss = 0
    pids = _tree(root)
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is None:
            continue
        key = (pid, fields[19])  # starttime
        cpu_seen[key] = (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime
        r, hwm, p = _memory(pid)
        hwm_seen[key] = max(hwm_seen.get(key, 0), hwm)
        rss, pss = rss + r, pss + p
    return Sample(time.time(), rss, pss, sum(cpu_seen.values()), len(pids))


class Sampler(threading.Thread):
    """Samples a process tree until stopped; prints a heartbeat now and then."""

    def __init__(self, root: int, interval: float, label: str, heartbeat_s: float = 60.0) -> None:
        super().__init__(daemon=True, name="seed-scale-sampler")
        self.root, self.interval, self.label, self.heartbeat_s = root, interval, label, heartbeat_s
        self.samples: list[Sample] = []
        self.cpu_seen: dict[tuple[int, str], float] = {}
        self.hwm_seen: dict[tuple[int, str], int] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        started = last_beat = time.monotonic()
        while not self._halt.is_set():
            sample = sample_tree(self.root, self.cpu_seen, self.hwm_seen)
            self.samples.append(sample)
            now = time.monotonic()
            if now - last_beat >= self.heartbeat_s:
                last_beat = now
                print(
                    f"  [{self.label} {now - started:6.0f} s] tree RSS {sample.rss / GIB:.2f} GiB, "
                    f"PSS {sample.pss / GIB:.2f} GiB, {sample.processes} processes, CPU {sample.cpu:.0f} s",
                    flush=True,
                )
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()


# ----------------------------------------------------------------------------- one measured run


@dataclass
class StepResult:
    step: str
    assets: list[str]
    status: str
    start: float
    end: float
    peak_rss: int = 0
    peak_pss: int = 0
    start_rss: int = 0  # the tree's RSS in the last sample before the step: what earlier steps left
    cpu_s: float = 0.0

    @property
    def wall_s(self) -> float:
        return self.end - self.start

    @property
    def label(self) -> str:
        return ", ".join(self.assets) if self.assets else self.step


@dataclass
class RunResult:
    label: str
    returncode: int
    wall_s: float
    cpu_s: float
    peak_rss: int
    peak_pss: int
    max_process_hwm: int
    ru_maxrss: int | None
    startup_s: float
    steps: list[StepResult] = field(default_factory=list)
    log: str = ""
    code_changed: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.returncode == 0 and all(step.status == "success" for step in self.steps)


def _step_events(dagster_home: Path, slug: str, after: float) -> list[StepResult]:
    """Steps of the newest run of partition ``slug`` started after ``after``, from its event log."""
    from dagster import DagsterInstance, RunsFilter

    instance = DagsterInstance.from_config(str(dagster_home))
    try:
        records = instance.get_run_records(filters=RunsFilter(tags={"dagster/partition": slug}), limit=5)
        records = [record for record in records if record.create_timestamp.timestamp() >= after]
        if not records:
            return []
        steps: dict[str, StepResult] = {}
        for entry in instance.all_logs(records[0].dagster_run.run_id):
            event = entry.dagster_event
            if event is None or not event.step_key:
                continue
            kind = event.event_type_value
            step = steps.setdefault(event.step_key, StepResult(event.step_key, [], "not started", 0.0, 0.0))
            if kind == "STEP_START":
                step.start, step.status = entry.timestamp, "running"
            elif kind in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_SKIPPED", "STEP_UP_FOR_RETRY"):
                step.end, step.status = entry.timestamp, kind.removeprefix("STEP_").lower()
            elif kind == "ASSET_MATERIALIZATION" and event.asset_key is not None:
                name = event.asset_key.to_user_string()
                if name not in step.assets:
                    step.assets.append(name)
        return sorted((s for s in steps.values() if s.start), key=lambda s: s.start)
    finally:
        instance.dispose()


def code_state() -> dict[str, tuple[int, int]]:
    """(mtime, size) of hysem's code, profiles and the scripts it renders with: a run whose code changed
    half-way (a checkout shared with others) measured a mix of versions, and says so."""
    root = Path(__file__).resolve().parents[1]
    state: dict[str, tuple[int, int]] = {}
    for folder, pattern in (("hysem_assets", "**/*.py"), ("resources", "*.yaml"), ("hysem_assets", "**/*.yaml")):
        for path in (root / folder).glob(pattern):
            if path.is_file():
                stat = path.stat()
                state[str(path.relative_to(root))] = (stat.st_mtime_ns, stat.st_size)
    return state


def measured_run(
    label: str, command: list[str], env: dict[str, str], log_path: Path, dagster_home: Path, interval: float
) -> RunResult:
    """Run ``command`` under the sampler; attribute samples to the steps of the run's event log."""
    print(f"\n{label}: {' '.join(command)} (log: {log_path})", flush=True)
    code_before = code_state()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    with log_path.open("wb") as log:
        child = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        sampler = Sampler(child.pid, interval, label)
        sampler.start()
        returncode = child.wait()
        sampler.stop()
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    samples = sampler.samples
    steps = _step_events(dagster_home, seedgen.SLUG, started - 1)
    for step in steps:
        end = step.end or ended
        inside = [s for s in samples if step.start <= s.t <= end]
        # the sample just before the step is the baseline of its CPU time, the one just after bounds its end
        before_step = [s for s in samples if s.t < step.start][-1:] or inside[:1]
        after_step = [s for s in samples if s.t > end][:1] or inside[-1:]
        window = inside or after_step
        step.peak_rss = max((s.rss for s in window), default=0)
        step.peak_pss = max((s.pss for s in window), default=0)
        step.start_rss = before_step[0].rss if before_step else 0
        if before_step and after_step:
            step.cpu_s = max(0.0, after_step[0].cpu - before_step[0].cpu)
    first = min((step.start for step in steps), default=ended)
    return RunResult(
        label=label,
        returncode=returncode,
        wall_s=ended - started,
        cpu_s=max(
            samples[-1].cpu if samples else 0.0, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        ),
        peak_rss=max((s.rss for s in samples), default=0),
        peak_pss=max((s.pss for s in samples), default=0),
        max_process_hwm=max(sampler.hwm_seen.values(), default=0),
        # kilobytes on Linux; the maximum over every child ever waited for, so it says something only when it grew
        ru_maxrss=after.ru_maxrss * 1024 if after.ru_maxrss > before.ru_maxrss else None,
        startup_s=first - started,
        steps=steps,
        log=str(log_path),
        code_changed=sorted(path for path, stamp in code_state().items() if code_before.get(path) != stamp),
    )


def print_run(run: RunResult, interval: float) -> None:
    width = max([len(step.label) for step in run.steps] + [34])
    print(f"\n{run.label}: {'succeeded' if run.success else 'FAILED (exit ' + str(run.returncode) + ')'}")
    print(f"  {'step (assets)':<{width}} {'status':<9} {'wall s':>8} {'share':>6} {'cpu s':>8} {'cpu/wall':>8} "
          f"{'peak RSS':>9} {'growth':>8} {'peak PSS':>9}")  # fmt: skip
    for step in run.steps:
        # a step shorter than a few samples has no meaningful CPU share
        ratio = f"{step.cpu_s / step.wall_s:8.2f}" if step.wall_s >= 10 * interval else f"{'-':>8}"
        print(
            f"  {step.label:<{width}} {step.status:<9} {step.wall_s:8.1f} {step.wall_s / run.wall_s:6.1%} "
            f"{step.cpu_s:8.1f} {ratio} {step.peak_rss / GIB:8.2f}G {(step.peak_rss - step.start_rss) / GIB:+7.2f}G "
            f"{step.peak_pss / GIB:8.2f}G"
        )
    print(f"  {'startup (process start to first step)':<{width}} {'':<9} {run.startup_s:8.1f} "
          f"{run.startup_s / run.wall_s:6.1%}")  # fmt: skip
    print(
        f"  {'whole run (process wall)':<{width}} {'':<9} {run.wall_s:8.1f} {1:6.1%} {run.cpu_s:8.1f} "
        f"{run.cpu_s / run.wall_s:8.2f} {run.peak_rss / GIB:8.2f}G {'':>8} {run.peak_pss / GIB:8.2f}G"
    )
    exact = f"; kernel ru_maxrss {run.ru_maxrss / GIB:.2f} GiB" if run.ru_maxrss else ""
    print(f"  largest peak of one process (VmHWM): {run.max_process_hwm / GIB:.2f} GiB{exact}")
    if run.code_changed:
        shown = ", ".join(run.code_changed[:8]) + (" ..." if len(run.code_changed) > 8 else "")
        print(f"  WARNING: {len(run.code_changed)} file(s) of hysem changed during this run: {shown}")
    failed = [step for step in run.steps if step.status != "success"]
    if failed or run.returncode:
        print(f"  failed steps: {', '.join(step.label for step in failed) or 'none recorded'}; see {run.log}")
        tail = Path(run.log).read_text(encoding="utf-8", errors="replace").splitlines()[-40:]
        print("  " + "\n  ".join(tail))


# ----------------------------------------------------------------------------- setup


def hysem_command() -> list[str]:
    script = Path(sys.executable).with_name("hysem")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from hysem_assets.cli import main; main()"]


def environment(root: Path, urls: dict[str, str], profile: str) -> dict[str, str]:
    """The user's environment without hysem or Dagster settings, pointed at this run's folders and mirror."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HYSEM_", "DAGSTER_"))}
    env.update(
        HYSEM_HOME=str(root / "home"),
        HYSEM_CONFIG_DIR=str(root / "config"),
        HYSEM_PROFILE=profile,
        HYSEM_MAILTO="seed-scale@example.org",
        SCOPUS_API_KEY="seed-scale",  # the mirror checks that a key is sent, as Scopus does
        PYTHONUNBUFFERED="1",
    )
    for source in MIRRORED:
        env[f"HYSEM_{source.upper()}_URL"] = urls[source]
    return env


def profile_for(root: Path, workers: int | None) -> str:
    """The local profile, or a copy of it whose parse and topic workers are ``workers``."""
    if workers is None:
        return "local"
    data = yaml.safe_load((bundled_profiles() / "local.yaml").read_text(encoding="utf-8"))
    data["assets"]["parsed_docs"]["workers"] = workers
    data["assets"].setdefault("topics", {})["workers"] = workers
    path = root / "profile-local-workers.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


def prepare_snapshot(folder: Path, spec: seedgen.SeedSpec, workers: int) -> None:
    manifest = seedgen.read_manifest(folder)
    if manifest and manifest["spec"] == asdict(spec) and manifest["generator"] == seedgen.GENERATOR_VERSION:
        if not manifest["with_increment"]:
            print(f"reusing the snapshot in {folder}")
            return
    if folder.exists():
        shutil.rmtree(folder)
    print(f"generating the snapshot (scale {spec.scale}, seed {spec.seed}) in {folder} ...", flush=True)
    stats = seedgen.write_snapshot(folder, spec, workers=workers)
    print(f"  {stats.describe()}")


def verdicts(full: RunResult, rerun: RunResult | None, scale: float) -> list[str]:
    note = "" if scale == 1 else f" [measured at scale {scale}, not the target's workload]"
    runs = [full, *([rerun] if rerun else [])]
    peak = max(max(run.peak_rss, run.max_process_hwm, run.ru_maxrss or 0) for run in runs)
    lines = [
        f"whole graph <= 45 min: {'PASS' if full.success and full.wall_s <= TARGET_WALL_S else 'FAIL'} "
        f"({full.wall_s / 60:.1f} min){note}",
        f"peak RSS <= 6 GiB:     {'PASS' if peak <= TARGET_RSS_BYTES else 'FAIL'} "
        f"({peak / GIB:.2f} GiB tree RSS; PSS {max(full.peak_pss, rerun.peak_pss if rerun else 0) / GIB:.2f} GiB){note}",
    ]
    if rerun is not None:
        ratio = rerun.wall_s / full.wall_s
        ok = rerun.success and ratio <= TARGET_RERUN_RATIO
        lines.append(
            f"re-run <= 10% of full: {'PASS' if ok else 'FAIL'} ({rerun.wall_s:.1f} s / {full.wall_s:.1f} s = {ratio:.1%}){note}"
        )
    return lines


# ----------------------------------------------------------------------------- extrapolation


def extrapolate(paths: list[Path]) -> None:
    """Predict scale 1 from result files of two (or more) scales: CPU time, time on two idle cores, peak RSS.

    Each column is fitted as ``a + b * scale`` by least squares with both terms kept
    non-negative (a step does not get faster or smaller with more data; where noise says
    otherwise it counts as constant). Wall times measured on a shared machine include waiting
    for a core, so the prediction works from CPU time: ``idle@1`` is ``cpu@1`` divided by the
    most cores the step was seen to keep busy (its best cpu/wall over the runs, between 1 and
    2), the time to expect on two idle cores. A step's peak RSS includes what earlier steps
    left in the process, so the whole run's line is the one to read against the 6 GiB target;
    two points make that line a rough guide only.
    """
    results = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    results.sort(key=lambda r: r["scale"])
    if len({r["scale"] for r in results}) < 2:
        raise SystemExit("--extrapolate needs results of at least two different scales")
    cpus = sorted({describe_processor(r["processor"]) for r in results if "processor" in r})
    print(f"processor: {' / '.join(cpus) or 'not recorded'}" + (" (the runs differ)" if len(cpus) > 1 else ""))
    for which in ("full", "rerun"):
        rows: dict[str, list[tuple[float, float, float, float]]] = {}
        for result in results:
            run = result.get(which)
            if not run:
                continue
            for step in run["steps"]:
                label = ", ".join(step["assets"]) or step["step"]
                point = (result["scale"], step["end"] - step["start"], step["cpu_s"], step["peak_rss"] / GIB)
                rows.setdefault(label, []).append(point)
            whole = (result["scale"], run["wall_s"], run["cpu_s"], run["peak_rss"] / GIB)
            rows.setdefault("whole run", []).append(whole)
        if not rows:
            continue
        scales = ", ".join(str(r["scale"]) for r in results)
        print(f"\n{which} run: measured at scales {scales}; each column fitted as a + b * scale, predicted at scale 1")
        print(f"  {'step (assets)':<34} {'wall s measured':>22} {'cpu s measured':>22} {'cpu@1':>8} {'cores':>5} "
              f"{'idle@1':>8} {'share':>6} {'RSS@1':>7}")  # fmt: skip
        predicted: dict[str, tuple[float, float, float, float]] = {}
        for label, points in rows.items():
            cpu = sum(_fit([(p[0], p[2]) for p in points]))
            rss = sum(_fit([(p[0], p[3]) for p in points]))
            busy = [p[2] / p[1] for p in points if p[1] >= 5 and p[2] > 0]
            cores = min(2.0, max([1.0, *busy]))
            idle = cpu / cores if busy else sum(_fit([(p[0], p[1]) for p in points]))
            predicted[label] = (cpu, cores, idle, rss)
        steps = [label for label in predicted if label != "whole run"]
        total = sum(predicted[label][2] for label in steps)
        for label in sorted(steps, key=lambda name: -predicted[name][2]) + ["whole run"]:
            cpu, cores, idle, rss = predicted[label]
            if label == "whole run":
                idle = total
            walls = " ".join(f"{p[1]:7.1f}" for p in rows[label])
            cpus = " ".join(f"{p[2]:7.1f}" for p in rows[label])
            rss_text = f"{rss:6.1f}G" if label == "whole run" else ""  # a step's own peak includes earlier steps'
            print(
                f"  {label:<34} {walls:>22} {cpus:>22} {cpu:8.0f} {cores:5.2f} {idle:8.0f} "
                f"{idle / total if total else 0:6.1%} {rss_text}"
            )
        print(f"  predicted on two idle cores at scale 1: {total / 60:.1f} min (sum of the steps' idle@1)")


def _fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares line through (scale, value) with a non-negative intercept and slope."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread if spread else 0.0
    if slope <= 0:
        return max(mean_y, 0.0), 0.0
    intercept = mean_y - slope * mean_x
    if intercept < 0:  # through the origin instead
        return 0.0, max(sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs), 0.0)
    return intercept, slope


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full workload (default 1)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="keep snapshot, HYSEM_HOME, config and logs in this folder")
    parser.add_argument("--workers", type=int, help="PDF rendering processes, and parse/topic workers of the profile")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between memory samples")
    parser.add_argument("--no-rerun", action="store_true", help="skip the 50-record update and its re-run")
    parser.add_argument("--generate-only", action="store_true", help="write the snapshot and stop")
    parser.add_argument("--json", type=Path, help="write the measurements to this file")
    parser.add_argument("--extrapolate", type=Path, nargs="+", metavar="JSON", help="predict scale 1 from --json files")
    args = parser.parse_args(argv)
    if args.extrapolate:
        extrapolate(args.extrapolate)
        return 0
    if not 0 < args.scale <= 1.5:
        parser.error("--scale must be in (0, 1.5]")
    spec = seedgen.SeedSpec(scale=args.scale, seed=args.seed)
    root = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="hysem-seed-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    render_workers = args.workers or min(2, os.cpu_count() or 1)
    try:
        return _run(args, spec, root, render_workers)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


#: CPU flags of the int8 dot-product instructions ONNX Runtime's int8 kernels use.
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")


def processor() -> dict[str, Any]:
    """The CPU a run measured: its model and int8 dot-product instructions. Predictions differ by machine
    mostly there: on two 2-core machines the same code's ``vector_index`` (int8 matrix products) differed
    1.7x, its other steps by 2%."""
    cpuinfo = Path("/proc/cpuinfo")
    text = cpuinfo.read_text(encoding="utf-8") if cpuinfo.is_file() else ""
    model = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    flags = re.search(r"^flags\s*:\s*(.+)$", text, re.MULTILINE)
    present = set(flags.group(1).split()) if flags else set()
    return {
        "model": model.group(1).strip() if model else platform.processor() or platform.machine(),
        "int8": [flag for flag in INT8_FLAGS if flag in present],
    }


def describe_processor(cpu: dict[str, Any]) -> str:
    return f"{cpu['model']}, int8 instructions: {', '.join(cpu['int8']) or 'none of ' + ', '.join(INT8_FLAGS)}"


def _run(args: argparse.Namespace, spec: seedgen.SeedSpec, root: Path, render_workers: int) -> int:
    snapshot = root / "snapshot"
    print(
        f"seed-scale workload: scale {spec.scale}, {spec.works:,} works, "
        f"{sum(spec.records.values()):,} records {spec.records}, {spec.pdfs:,} PDFs; "
        f"then +{spec.increment_records} records; folder {root}"
    )
    print(f"processor: {describe_processor(processor())}")
    prepare_snapshot(snapshot, spec, render_workers)
    if args.generate_only:
        return 0
    for folder in ("home", "config", "logs"):
        shutil.rmtree(root / folder, ignore_errors=True)
    shutil.copytree(BUNDLED / "config", root / "config")
    (root / "logs").mkdir()
    profile = profile_for(root, args.workers)
    mirror = MirrorServer(snapshot).start()
    port = mirror.port
    env = environment(root, mirror.base_urls, profile)
    hysem = hysem_command()
    dagster_home = root / "home" / "dagster"
    full = rerun = None
    try:
        query = seedgen.QUERY
        add = [*hysem, "query", "add", "--slug", seedgen.SLUG, "--title", "Seed-scale benchmark", "--protocol",
               "generic", "--pubmed", query["pubmed"], "--openalex", query["openalex"], "--scopus", query["scopus"]]  # fmt: skip
        subprocess.run(add, env=env, check=True)
        full = measured_run("full run", [*hysem, "materialize", "--query", seedgen.SLUG], env,
                            root / "logs" / "full.log", dagster_home, args.interval)  # fmt: skip
        print_run(full, args.interval)
        if not args.no_rerun:
            mirror.stop()
            added = seedgen.add_increment(snapshot, spec, workers=render_workers)
            print(f"\nadded to the snapshot: {added.describe()}")
            mirror = MirrorServer(snapshot, port=port).start()
            rerun = measured_run("re-run after the update", [*hysem, "materialize", "--query", seedgen.SLUG], env,
                                 root / "logs" / "rerun.log", dagster_home, args.interval)  # fmt: skip
            print_run(rerun, args.interval)
            print(f"\nre-run / full run: {rerun.wall_s:.1f} s / {full.wall_s:.1f} s = {rerun.wall_s / full.wall_s:.1%}")
    finally:
        mirror.stop()
    print()
    for line in verdicts(full, rerun, spec.scale):
        print(line)
    if args.json:
        result = {
            "scale": spec.scale,
            "seed": spec.seed,
            "processor": processor(),
            "full": asdict(full),
            "rerun": asdict(rerun) if rerun else None,
        }
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(f"measurements written to {args.json}")
    return 0 if full.success and (rerun is None or rerun.success) else 1


if __name__ == "__main__":
    sys.exit(main())
