"""Progress for long steps: periodic log lines in Dagster, a bar on a terminal."""

from __future__ import annotations

import logging
import math
import sys
import time

from tqdm import tqdm


class StderrLines:
    """Where a command's progress lines go: the ``sys.stderr`` of the moment, so its results can go to stdout
    (a logging handler would keep the stream it was made with)."""

    def info(self, line: str) -> None:
        print(line, file=sys.stderr, flush=True)


class Progress:
    """Callable ``(done, total)`` that logs at most every ``interval_s`` seconds with a rate."""

    def __init__(
        self,
        log: logging.Logger | logging.LoggerAdapter | StderrLines,
        label: str,
        unit: str = "records",
        interval_s: float = 2.0,
    ):
        self.log = log
        self.label = label
        self.unit = unit
        self.interval_s = interval_s
        self.started = time.monotonic()
        self._last_log = -math.inf  # the first call always logs, however long the machine has been up
        self._bar = tqdm(desc=label, unit=f" {unit}", leave=False) if sys.stderr.isatty() else None

    def __call__(self, done: int, total: int | None) -> None:
        if self._bar is not None:
            self._bar.total = total
            self._bar.n = done
            self._bar.refresh()
        now = time.monotonic()
        if now - self._last_log >= self.interval_s or (total is not None and done >= total):
            self._last_log = now
            elapsed = max(now - self.started, 1e-9)
            of_total = f"/{total:,}" if total is not None else ""
            self.log.info(f"{self.label}: {done:,}{of_total} {self.unit} ({done / elapsed:,.1f} {self.unit}/s)")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
