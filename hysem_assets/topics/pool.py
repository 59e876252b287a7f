"""A ``map`` over worker processes, or in this process when one worker is asked for."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any

from threadpoolctl import threadpool_limits

#: ``(done, total)``, as ``hysem_assets.core.progress.Progress`` takes it.
ProgressCallback = Callable[[int, int | None], None]
ListMap = Callable[..., list[Any]]


def _mapped(
    mapper: Callable[..., Iterable[Any]],
    function: Callable[[Any], Any],
    items: Sequence[Any],
    progress: ProgressCallback | None = None,
) -> list[Any]:
    collected = []
    for result in mapper(function, items):
        collected.append(result)
        if progress:
            progress(len(collected), len(items))
    return collected


def _one_thread_each() -> None:
    """Workers already fill the cores; BLAS and OpenMP threads inside each would only contend."""
    threadpool_limits(limits=1)


def _worker_context() -> multiprocessing.context.BaseContext:
    """A fork server where there is one: it imports the training code once, then forks workers cheaply."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["hysem_assets.topics.model"])
    return context


@contextmanager
def worker_map(workers: int) -> Iterator[ListMap]:
    """``parallel(function, items, progress=None) -> list``, one pool for every stage of a run.

    Workers never fork the calling process, which may hold threads (torch, Dagster) that a
    fork would copy in an undefined state; they fork from a single-threaded server instead.
    """
    if workers <= 1:
        yield partial(_mapped, map)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=_worker_context(), initializer=_one_thread_each) as pool:
        yield partial(_mapped, pool.map)
