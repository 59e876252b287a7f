"""Parse many PDFs in worker processes, each worker pinned to one device.

Workers are spawned (never forked: Docling and torch start threads) and pinned once, in
the pool's initializer, to the next device of the list in turn, so N devices get N or
more workers and models load once per worker. The initializer runs before the worker
imports Docling (this module does not), so CUDA only ever sees the worker's own GPU and
Hugging Face's offline switches are in place before it loads. A worker that dies (killed for memory, a
crash in a native library) costs only the document it held: when several documents were
in flight, each is retried alone in a fresh pool, and the one that kills its worker again
is recorded with that error.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

from hysem_assets.parsing.offline import go_offline
from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.result import ParsedDocument

Parse = Callable[[Path, ParseOptions], ParsedDocument]
Progress = Callable[[int, int | None], None]

#: This worker's device: as named in the device list, and as the worker itself sees it.
_pinned, _local = "cpu", "cpu"


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


def _init_worker(counter: Synchronized, devices: tuple[str, ...], threads: int) -> None:
    global _pinned, _local
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    _pinned = devices[index % len(devices)] if devices else "cpu"
    os.environ["OMP_NUM_THREADS"] = str(threads)
    go_offline()
    _local = pin_device(_pinned)


def _parse_in_worker(parse: Parse, path: Path, options: ParseOptions) -> ParsedDocument:
    return replace(parse(path, replace(options, device=_local)), device=_pinned)


def _failed(path: Path, options: ParseOptions, error: str) -> ParsedDocument:
    return ParsedDocument(path=str(path), parser=options.parser, device="", error=error)


def parse_many(
    paths: Sequence[str | Path],
    options: ParseOptions = ParseOptions(),
    devices: Sequence[str] = (),
    workers: int = 1,
    progress: Progress | None = None,
    parse: Parse | None = None,
) -> list[ParsedDocument]:
    """Parse every path in a pool of ``max(workers, len(devices))`` processes; results in input order.

    ``parse`` is the per-document function run in the workers (a module-level callable,
    ``parse_pdf`` by default); it should not raise, and a document for which it does gets
    the exception as its error.
    """
    if parse is None:
        from hysem_assets.parsing.parse import parse_pdf as parse
    paths = [Path(p) for p in paths]
    results: list[ParsedDocument | None] = [None] * len(paths)
    size = max(workers, len(devices), 1)
    waiting: deque[int] = deque(range(len(paths)))
    suspects: deque[int] = deque()
    context = multiprocessing.get_context("spawn")
    done = 0

    def record(index: int, result: ParsedDocument) -> None:
        nonlocal done
        results[index] = result
        done += 1
        if progress is not None:
            progress(done, len(paths))

    while waiting or suspects:
        counter = context.Value("i", 0)
        with ProcessPoolExecutor(
            max_workers=size,
            mp_context=context,
            initializer=_init_worker,
            initargs=(counter, tuple(devices), options.num_threads),
        ) as pool:
            running: dict[Future[ParsedDocument], int] = {}
            crashed: list[int] = []
            while (waiting or suspects or running) and not crashed:
                if suspects and not running:
                    index = suspects.popleft()
                    running[pool.submit(_parse_in_worker, parse, paths[index], options)] = index
                while waiting and not suspects and len(running) < size:
                    index = waiting.popleft()
                    running[pool.submit(_parse_in_worker, parse, paths[index], options)] = index
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    index = running.pop(future)
                    try:
                        record(index, future.result())
                    except BrokenProcessPool:
                        crashed.append(index)
                    except Exception as error:  # a custom ``parse`` raised, or its result did not pickle
                        record(index, _failed(paths[index], options, f"{type(error).__name__}: {error}"))
            if crashed:
                in_flight = [*crashed, *running.values()]
                if len(in_flight) == 1:
                    record(
                        in_flight[0],
                        _failed(
                            paths[in_flight[0]],
                            options,
                            "the parsing worker process died on this document "
                            "(killed for memory, or a crash in a native library)",
                        ),
                    )
                else:
                    suspects.extend(in_flight)
    return [result for result in results if result is not None]
