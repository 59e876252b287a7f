"""Parse many PDFs in worker processes, each worker pinned to one device and held to limits.

Workers are spawned (never forked: Docling and torch start threads) and pinned once, when
they start, to a device of the list in turn, so N devices get N or more workers and models
load once per worker. Pinning runs before the worker imports Docling (this module does
not), so CUDA only ever sees the worker's own GPU and Hugging Face's offline switches are in
place before it loads.

Each worker holds one document at a time, so whatever happens to a worker costs only that
document, and the rest of the partition goes on with a fresh worker in its place: a worker
that dies (a crash in a native library, the OS killing it) leaves its document that error;
one that runs out of its memory limit, or is stopped at the wall-time limit, leaves it status
``resource_limit``. Workers die with the process that started them (the kernel's parent-death
signal on Linux, and a thread watching the parent everywhere), so a killed run leaves no
worker behind holding a gigabyte each.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnContext
from pathlib import Path

from hysem_assets.parsing.limits import OUT_OF_MEMORY, RESOURCE_LIMIT, WorkerLimits, cap_memory
from hysem_assets.parsing.offline import go_offline
from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.result import ParsedDocument

Parse = Callable[[Path, ParseOptions], ParsedDocument]
Progress = Callable[[int, int | None], None]

_PR_SET_PDEATHSIG = 1
#: Seconds a worker gets to leave after being told to, before it is killed.
_GRACE_S = 5.0


def pin_device(device: str) -> str:
    """Make ``device`` the only accelerator this process sees; returns its name inside the process.

    Must run before any library initialises CUDA. "cuda:2" hides every GPU but the third,
    which the process then sees as "cuda"; "cpu" hides them all.
    """
    if device.startswith("cuda"):
        os.environ["CUDA_VISIBLE_DEVICES"] = device.partition(":")[2] or "0"
        return "cuda"
    if device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    return device


def device_for(slot: int, devices: Sequence[str]) -> str:
    """The device of worker slot ``slot``: the list in turn; a replacement keeps its slot's device."""
    return devices[slot % len(devices)] if devices else "cpu"


def die_with_parent(parent: int) -> None:
    """End this process when ``parent`` ends, however it ends (``kill -9`` included)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass  # no prctl: the watching thread below still ends the worker
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="hysem-parent-watch", daemon=True).start()


def prepare_worker(device: str, threads: int) -> str:
    """Thread count, offline switches and device, before anything imports Docling; returns the local device name."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    go_offline()
    return pin_device(device)


def _serve(connection: Connection, parent: int, device: str, threads: int, memory_mb: int | None) -> None:
    """A worker: parse what the pool sends, one document at a time, until told to stop."""
    die_with_parent(parent)
    local = prepare_worker(device, threads)
    cap_memory(memory_mb)
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        parse, path, options = task
        try:
            result = replace(parse(path, replace(options, device=local)), device=device)
        except MemoryError:
            result = _failed(path, options, OUT_OF_MEMORY, RESOURCE_LIMIT)
        except Exception as error:  # a custom ``parse`` raised
            result = _failed(path, options, f"{type(error).__name__}: {error}")
        try:
            connection.send(result)
        except Exception as error:  # the result did not pickle
            connection.send(_failed(path, options, f"{type(error).__name__}: {error}"))
        if result.status == RESOURCE_LIMIT:
            return  # memory may be fragmented or leaked after a failed allocation: a fresh worker takes over


def _failed(path: Path, options: ParseOptions, error: str, status: str = "failed") -> ParsedDocument:
    return ParsedDocument(path=str(path), parser=options.parser, device="", status=status, error=error)


class _Worker:
    """One worker process and the document it holds."""

    def __init__(self, context: SpawnContext, device: str, threads: int, limits: WorkerLimits) -> None:
        self.connection, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child, os.getpid(), device, threads, limits.memory_mb), name="hysem-parse-worker"
        )
        self.process.start()
        child.close()
        self.index: int | None = None
        self.since = 0.0

    def give(self, index: int, task: tuple) -> None:
        self.index, self.since = index, time.monotonic()
        self.connection.send(task)

    def stop(self, *, now: bool = False) -> None:
        if not now and self.process.is_alive():
            try:
                self.connection.send(None)
            except OSError:
                pass
            self.process.join(_GRACE_S)
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()

    def death(self, limits: WorkerLimits) -> tuple[str, str]:
        """Status and reason for the document a dead worker held."""
        code = self.process.exitcode or 0
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        if limits.memory_mb and code in (-signal.SIGKILL, -signal.SIGABRT):
            return RESOURCE_LIMIT, (
                f"the parsing worker process died on this document ({how}): out of memory, "
                f"with the worker's limit at {limits.memory_mb:,} MB"
            )
        return "failed", (
            f"the parsing worker process died on this document ({how}: killed for memory, or a crash in a native library)"
        )


def parse_many(
    paths: Sequence[str | Path],
    options: ParseOptions = ParseOptions(),
    devices: Sequence[str] = (),
    workers: int = 1,
    progress: Progress | None = None,
    parse: Parse | None = None,
    limits: WorkerLimits = WorkerLimits(),
) -> list[ParsedDocument]:
    """Parse every path in ``max(workers, len(devices))`` processes; results in input order.

    ``parse`` is the per-document function run in the workers (a module-level callable,
    ``parse_pdf`` by default); it should not raise, and a document for which it does gets
    the exception as its error. ``limits`` bound each worker's memory and each document's time.
    """
    if parse is None:
        from hysem_assets.parsing.parse import parse_pdf as parse
    paths = [Path(p) for p in paths]
    results: list[ParsedDocument | None] = [None] * len(paths)
    waiting: deque[int] = deque(range(len(paths)))
    slots: list[_Worker | None] = [None] * min(max(workers, len(devices), 1), len(paths))
    context = multiprocessing.get_context("spawn")
    done = 0

    def record(index: int, result: ParsedDocument) -> None:
        nonlocal done
        results[index] = result
        done += 1
        if progress is not None:
            progress(done, len(paths))

    def retire(slot: int, *, now: bool) -> None:
        worker = slots[slot]
        if worker is not None:
            worker.stop(now=now)
        slots[slot] = None

    try:
        while True:
            for slot, worker in enumerate(slots):
                if waiting and (worker is None or worker.index is None):
                    if worker is None:
                        worker = slots[slot] = _Worker(context, device_for(slot, devices), options.num_threads, limits)
                    index = waiting.popleft()
                    worker.give(index, (parse, paths[index], options))
            busy = [(slot, w) for slot, w in enumerate(slots) if w is not None and w.index is not None]
            if not busy:
                break
            deadline = None
            if limits.seconds is not None:
                deadline = max(0.0, min(w.since + limits.seconds for _, w in busy) - time.monotonic())
            wait([handle for _, w in busy for handle in (w.connection, w.process.sentinel)], deadline)
            for slot, worker in busy:
                index = worker.index
                assert index is not None
                if worker.connection.poll():
                    try:
                        result = worker.connection.recv()
                    except (EOFError, OSError):
                        result = None
                    if result is not None:
                        worker.index = None
                        if result.status == RESOURCE_LIMIT:
                            if limits.memory_mb:
                                result = replace(
                                    result, error=f"{result.error} (the worker's limit is {limits.memory_mb:,} MB)"
                                )
                            retire(slot, now=False)
                        record(index, result)
                        continue
                if not worker.process.is_alive():
                    worker.process.join()
                    status, reason = worker.death(limits)
                    record(index, _failed(paths[index], options, reason, status))
                    retire(slot, now=True)
                elif limits.seconds is not None and time.monotonic() - worker.since > limits.seconds:
                    retire(slot, now=True)
                    reason = (
                        f"took longer than the limit of {limits.seconds:,.0f} s per document; "
                        "its worker was stopped and replaced"
                    )
                    record(index, _failed(paths[index], options, reason, RESOURCE_LIMIT))
    finally:
        for slot in range(len(slots)):
            retire(slot, now=any(r is None for r in results))
    return [result for result in results if result is not None]
