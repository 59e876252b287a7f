"""Embedded stores across processes: a second opener waits its turn instead of failing."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from dagster import DagsterInstance, materialize

from hysem_assets.cli import SAMPLE_QUERY, main
from hysem_assets.definitions import defs
from hysem_assets.defs.knowledge import report_assets
from hysem_assets.stores.chunks import DamagedStoreError, VectorStoreError
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.graph import GraphStoreError
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets.stores.locking import lock_path
from hysem_assets_tests.paths import PROJECT_ROOT

#: Opens the store, says so, closes it when a line arrives on stdin, then waits for EOF.
HOLDER = """
import sys
from pathlib import Path
from hysem_assets.stores.graph_schema import graph_schema
from hysem_assets.settings.protocols import load_protocols
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets.stores.locking import lock_path
from hysem_assets.stores.edge_chunks import EdgeChunkStore
kind, path = sys.argv[1], Path(sys.argv[2])
if kind == "graph":
    store = LadybugGraphStore(path)
    store.ensure_schema(graph_schema(load_protocols()))
else:
    store = EdgeChunkStore(path)
print("holding", flush=True)
sys.stdin.readline()
store.close()
print("closed", flush=True)
sys.stdin.read()
"""

#: opener, folder or file name, error, and the path whose lock the opener takes
STORES = {
    "graph": (
        lambda path, timeout: LadybugGraphStore(path, lock_timeout=timeout),
        "kg.lbug",
        GraphStoreError,
        lambda path: path,
    ),
    "qdrant": (
        lambda path, timeout: EdgeChunkStore(path, lock_timeout=timeout),
        "qdrant",
        VectorStoreError,
        lambda path: path / "chunks",
    ),
}


@pytest.fixture(params=sorted(STORES))
def store_kind(request: pytest.FixtureRequest) -> str:
    return request.param


def _holder(kind: str, path: Path) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, kind, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    return holder


def test_a_second_process_waits_until_the_store_is_closed(
    store_kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    open_store, name, _, locked = STORES[store_kind]
    path = tmp_path / name
    holder = _holder(store_kind, path)
    opened: list = []
    try:
        with caplog.at_level(logging.WARNING, logger="hysem_assets.stores.locking"):
            opener = threading.Thread(target=lambda: opened.append((open_store(path, 60), time.monotonic())))
            opener.start()
            time.sleep(1.5)
            assert opener.is_alive() and not opened, "the second opener did not wait"
            assert holder.stdin is not None and holder.stdout is not None
            holder.stdin.write("close\n")
            holder.stdin.flush()
            assert holder.stdout.readline().strip() == "closed"
            released = time.monotonic()
            opener.join(timeout=30)
        assert opened, "the store never opened after the holder closed it"
        store, opened_at = opened[0]
        assert opened_at >= released - 0.5
        store.close()
        assert f"{locked(path)} is open in another process; waiting" in caplog.text
    finally:
        holder.communicate("")


def test_a_store_held_past_the_timeout_is_a_clear_error(store_kind: str, tmp_path: Path) -> None:
    open_store, name, error, locked = STORES[store_kind]
    path = tmp_path / name
    holder = _holder(store_kind, path)
    try:
        with pytest.raises(error, match=f"{locked(path)} was still open in another process after 0 s.*lock_timeout_s"):
            open_store(path, 0.3)
    finally:
        holder.communicate("\n")


def test_closing_releases_the_store_within_one_process(store_kind: str, tmp_path: Path) -> None:
    open_store, name, _, _ = STORES[store_kind]
    for _ in range(2):
        open_store(tmp_path / name, 0).close()


def test_a_run_waits_for_the_graph_another_process_holds_and_says_so_in_its_log(isolated_home: Path) -> None:
    holder = _holder("graph", isolated_home / "graph" / "kg.lbug")
    dagster_home = isolated_home / "dagster"
    dagster_home.mkdir()
    (dagster_home / "dagster.yaml").write_text((PROJECT_ROOT / "config" / "dagster.yaml").read_text())
    release = threading.Timer(3, lambda: (holder.stdin.write("close\n"), holder.stdin.flush()))
    try:
        with DagsterInstance.from_config(str(dagster_home)) as instance:
            instance.add_dynamic_partitions("queries", [SAMPLE_QUERY])  # a query whose protocol has the report
            release.start()
            result = materialize(
                report_assets[:1], instance=instance, partition_key=SAMPLE_QUERY, resources=defs.resources
            )
            assert result.success
            messages = [event.user_message for event in instance.all_logs(result.run_id)]
        assert any("is open in another process; waiting" in message for message in messages), messages
    finally:
        release.cancel()
        holder.communicate("")


def test_a_shard_open_elsewhere_whose_lock_file_was_removed_is_busy_not_damaged(tmp_path: Path) -> None:
    folder = tmp_path / "qdrant"
    first = EdgeChunkStore(folder, lock_timeout=0)
    first.ensure_collection(4)
    first.close()
    holder = _holder("qdrant", folder)  # holds the shard's write-ahead log
    try:
        for lock in folder.glob("chunks.lock*"):
            lock.unlink()
        with pytest.raises(VectorStoreError, match=r"open in another process \(whose lock file was removed\)") as error:
            EdgeChunkStore(folder, lock_timeout=0)
        assert not isinstance(error.value, DamagedStoreError)  # doctor --fix must not rebuild it under its holder
    finally:
        holder.communicate("\n")


def test_a_graph_open_elsewhere_whose_lock_file_was_deleted_is_named_and_not_opened_twice(
    isolated_home: Path,
) -> None:
    store = isolated_home / "graph" / "kg.lbug"
    store.parent.mkdir(parents=True)
    holder = _holder("graph", store)
    try:
        lock_path(store).unlink()  # the lock now looks free: a second opener would get in
        with pytest.raises(GraphStoreError, match="whose lock file was deleted while it held it; wait for that"):
            LadybugGraphStore(store, lock_timeout=0)
        doctor = CliRunner().invoke(main, ["doctor"])
        assert doctor.exit_code == 1
        assert (
            f"! store lock   graph store {store}: open in " in doctor.output and f"pid {holder.pid} on" in doctor.output
        )
        assert "Error: 1 problem(s) --fix cannot fix: store lock (see above)." in doctor.output
    finally:
        holder.communicate("\n")
    assert CliRunner().invoke(main, ["doctor"]).exit_code == 0  # ended, its lock went with it
