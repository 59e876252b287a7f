"""A ``map`` over worker processes, or in this process when one worker is asked for."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

ListMap = Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]


@contextmanager
def worker_map(workers: int) -> Iterator[ListMap]:
    """One pool for every stage of a run, so workers start once.

    Workers are spawned, not forked: the calling process may hold threads (torch, Dagster)
    that a fork would copy in an undefined state.
    """
    if workers <= 1:
        yield lambda function, items: [function(item) for item in items]
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield lambda function, items: list(pool.map(function, items))
