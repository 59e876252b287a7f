"""Which process ``hysem shared status`` and ``down`` take for a service: the very one ``start`` recorded.

After a crash the recorded pid may be taken by another process, even another ``hysem`` one; that
process is neither reported as the service nor stopped with it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from hysem_assets.core.owner import ProcessOwner, process_start
from hysem_assets.runs import shared


@pytest.fixture
def other_hysem_process() -> Iterator[subprocess.Popen]:
    """A live process whose command line names hysem and the daemon, as a reused pid's might; in a session
    of its own, as ``start`` runs a service."""
    command = [sys.executable, "-c", "import time; time.sleep(120)", "hysem", "daemon"]
    process = subprocess.Popen(command, start_new_session=True)
    yield process
    process.kill()
    process.wait()


def _record(pid: int, start: str) -> None:
    ProcessOwner(pid, socket.gethostname(), start, "daemon").write(shared._pid_file("daemon"))


def _running(service: str) -> int | None:
    return next(found.pid for found in shared.status() if found.name == service)


def test_the_recorded_process_is_the_service(other_hysem_process: subprocess.Popen) -> None:
    _record(other_hysem_process.pid, process_start(other_hysem_process.pid))
    assert _running("daemon") == other_hysem_process.pid
    assert shared.stop("daemon")
    assert other_hysem_process.wait(timeout=30) is not None


def test_a_pid_taken_by_another_process_is_not_the_service(other_hysem_process: subprocess.Popen) -> None:
    _record(other_hysem_process.pid, "an-earlier-boot:12345")
    assert _running("daemon") is None
    assert not shared.stop("daemon")
    assert other_hysem_process.poll() is None
    assert not shared._pid_file("daemon").exists()


def test_a_pid_file_of_another_format_is_no_service(other_hysem_process: subprocess.Popen) -> None:
    shared._pid_file("daemon").write_text(str(other_hysem_process.pid))
    assert _running("daemon") is None
