"""The process that owns a run: its pid, host and start, recorded as run tags and in lock files.

A run started in process by the ``hysem`` command has no run worker for Dagster's
daemon to watch, so nothing notices when its process dies. With these tags any later
command can tell a dead run from a live one: the pid must exist on the same host and
must be the same process (its start time since boot, and the boot, must match, so a pid
reused by another program does not keep a dead run alive).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

PID_TAG = "hysem/pid"
HOST_TAG = "hysem/host"
PROCESS_TAG = "hysem/process"
COMMAND_TAG = "hysem/command"
INVOCATION_TAG = "hysem/invocation"

State = Literal["alive", "gone", "elsewhere"]


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def process_start(pid: int) -> str:
    """An identity of process ``pid`` that survives pid reuse ("" where the OS does not say)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    start_ticks = stat.rpartition(")")[2].split()[19]  # field 22 of proc(5): start time since boot
    return f"{_boot_id()}:{start_ticks}"


def pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return True
    return state != "Z"  # a zombie has ended; it only waits for its parent to read its status


def command_line(limit: int = 200) -> str:
    """This process's command line, program name first, for telling a user who holds something."""
    words = [Path(sys.argv[0]).name if sys.argv and sys.argv[0] else sys.executable, *sys.argv[1:]]
    text = " ".join(words)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ProcessOwner:
    """Who runs something: process id, host, process identity and the command line."""

    pid: int
    host: str
    process: str
    command: str = ""

    @classmethod
    def current(cls, command: str | None = None) -> ProcessOwner:
        pid = os.getpid()
        return cls(pid=pid, host=socket.gethostname(), process=process_start(pid), command=command or command_line())

    def tags(self) -> dict[str, str]:
        return {PID_TAG: str(self.pid), HOST_TAG: self.host, PROCESS_TAG: self.process, COMMAND_TAG: self.command}

    @classmethod
    def from_tags(cls, tags: Mapping[str, str]) -> ProcessOwner | None:
        """The owner recorded on a run, or None for a run the ``hysem`` command did not start."""
        if PID_TAG not in tags or HOST_TAG not in tags:
            return None
        try:
            pid = int(tags[PID_TAG])
        except ValueError:
            return None
        return cls(pid=pid, host=tags[HOST_TAG], process=tags.get(PROCESS_TAG, ""), command=tags.get(COMMAND_TAG, ""))

    def state(self) -> State:
        """``alive``, ``gone``, or ``elsewhere`` (another host: this machine cannot tell)."""
        if self.host != socket.gethostname():
            return "elsewhere"
        if not pid_exists(self.pid):
            return "gone"
        if self.process and process_start(self.pid) not in ("", self.process):
            return "gone"  # the pid now belongs to another process
        return "alive"

    def describe(self) -> str:
        return (
            f"{self.command}, pid {self.pid} on {self.host}" if self.command else f"process {self.pid} on {self.host}"
        )

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> ProcessOwner | None:
        try:
            return cls(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None
