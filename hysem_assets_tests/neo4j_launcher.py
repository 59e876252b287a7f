"""Start the project's own Neo4j 5 (``tools/neo4j-launcher``) for tests and benchmarks.

The launcher is a small Maven project that runs Neo4j Community embedded with a Bolt
connector on 127.0.0.1; it prints ``NEO4J READY <uri>`` once the database answers and
shuts down cleanly on SIGTERM. Nothing here is used in production, where Neo4j is a server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hysem_assets_tests.paths import PROJECT_ROOT

LAUNCHER_DIR = PROJECT_ROOT / "tools" / "neo4j-launcher"
LAUNCHER_JAR = LAUNCHER_DIR / "target" / "neo4j-launcher.jar"
READY = "NEO4J READY "


class LauncherError(RuntimeError):
    pass


def build_launcher() -> Path:
    """The launcher jar, built with Maven first if it is not there yet."""
    if not LAUNCHER_JAR.is_file():
        completed = subprocess.run(
            ["mvn", "-q", "-B", "-f", str(LAUNCHER_DIR / "pom.xml"), "package"],
            capture_output=True,
            text=True,
        )
        if completed.returncode != 0 or not LAUNCHER_JAR.is_file():
            raise LauncherError(f"Building {LAUNCHER_DIR} failed:\n{completed.stdout}{completed.stderr}")
    return LAUNCHER_JAR


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_neo4j(
    data_dir: Path, *, port: int | None = None, heap_mb: int = 1024, timeout_s: float = 120.0
) -> Iterator[str]:
    """A Neo4j 5 with auth off on 127.0.0.1, for the ``with`` block; yields its bolt URI."""
    jar = build_launcher()
    port = port or free_port()
    process = subprocess.Popen(
        ["java", f"-Xmx{heap_mb}m", "-jar", str(jar), "--port", str(port), "--data", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "NEO4J_LAUNCHER_PASSWORD": ""},
    )
    ready = threading.Event()
    output: list[str] = []

    def drain() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            if line.startswith(READY):
                ready.set()
        ready.set()  # the process ended: stop waiting

    threading.Thread(target=drain, daemon=True).start()
    try:
        ready.wait(timeout_s)
        if not any(line.startswith(READY) for line in output):
            process.kill()
            raise LauncherError(f"Neo4j did not start on port {port} within {timeout_s:.0f} s:\n{''.join(output)}")
        yield f"bolt://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
