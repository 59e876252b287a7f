"""Processes seen through /proc (Linux): children of a process, and whether a pid still runs."""

from __future__ import annotations

import time
from pathlib import Path


def _stat(pid: int | str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()  # state, ppid, ...


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def children(pid: int, marker: str = "") -> list[int]:
    """Live child processes of ``pid`` whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(entry.name)
            if stat and int(stat[1]) == pid and stat[0] != "Z" and marker in cmdline(int(entry.name)):
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def wait_for_children(pid: int, marker: str, count: int = 1, timeout: float = 120) -> list[int]:
    """Wait until ``pid`` has ``count`` children matching ``marker``; return them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = children(pid, marker)
        if len(found) >= count:
            return found
        if not alive(pid):
            break
        time.sleep(0.2)
    raise AssertionError(f"process {pid} did not start {count} process(es) matching {marker!r}")


def wait_gone(pids: list[int], timeout: float = 10) -> list[int]:
    """Wait up to ``timeout`` s for the processes to end; return those still running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.2)
    return [pid for pid in pids if alive(pid)]
