"""Fault injection: ``kill -9`` of ``hysem materialize`` while it parses, indexes vectors or loads the graph,
then the same command again: it must reclaim the dead run by itself and leave every store as a clean run did.
And a decompression bomb among a partition's PDFs is set aside within its limit while the others parse.

One home is materialized cleanly (up to the knowledge graph, the sample query capped at 12 records per
source) and shared by the three kill cases; each case kills a run of one asset in that home and re-runs
it, so the whole module costs a few minutes. The same home then has files and stores damaged (a truncated
Parquet table, a CSV written over one, a truncated Qdrant Edge segment, the graph gone): each is named by
``status``/``doctor``/``show``, repaired by ``doctor --fix`` back to the clean run's state, and a count
without its graph says so instead of answering from passages. Last, a copy of the home on a small disk
filled to the brim: ``status``, ``doctor`` and ``ask`` say so in one line, and ``ask`` answers once
there is room again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from dagster import DagsterInstance, DagsterRunStatus, RunsFilter, build_asset_context

from hysem_assets.core.filehash import file_sha256
from hysem_assets.core.owner import PID_TAG
from hysem_assets.defs.parsing import parsed_docs
from hysem_assets.defs.resources import PdfParser
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.runs.reclaim import pool_claims
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.profile import load_settings
from hysem_assets.stores.chunks import point_id, searchable_text
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets_tests.parsing.bombs import decompression_bomb
from hysem_assets_tests.paths import HYSEM, PROJECT_ROOT
from hysem_assets_tests.processes import children, wait_for_children, wait_gone

SAMPLE = "air-pollution-cardio-ml"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and sends SIGKILL")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYSEM_", "DAGSTER_"))}
    config = home.parent / "config"
    return {**env, "HYSEM_HOME": str(home), "HYSEM_CONFIG_DIR": str(config), "PYTHONUNBUFFERED": "1"}


def _small_config(folder: Path) -> None:
    """The project's config with the sample query capped at 12 records per source (27 works, 6 PDFs)."""
    shutil.copytree(PROJECT_ROOT / "config", folder)
    queries = yaml.safe_load((folder / "queries.yaml").read_text(encoding="utf-8"))
    for query in queries["queries"]:
        if query["slug"] == SAMPLE:
            query["max_records"] = 12
    (folder / "queries.yaml").write_text(yaml.safe_dump(queries, sort_keys=False), encoding="utf-8")


def _hysem(home: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        [HYSEM, *args], cwd=PROJECT_ROOT, env=_env(home), capture_output=True, text=True, timeout=timeout
    )


class _Running:
    """A ``hysem`` process whose output is collected line by line while it runs."""

    def __init__(self, home: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [HYSEM, *args],
            cwd=PROJECT_ROOT,
            env=_env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in self.lines):
                return
            if self.process.poll() is not None:  # ended: only what is still in the pipe can come
                deadline = min(deadline, time.monotonic() + 2)
            time.sleep(0.05)
        raise AssertionError(f"no line with {text!r} within {timeout} s:\n" + "".join(self.lines[-40:]))


def _instance(home: Path) -> DagsterInstance:
    return DagsterInstance.from_config(str(home / "dagster"))


def snapshot(home: Path) -> dict:
    """What a run leaves: the parsed documents, the chunk stores and the graph, compared as values."""
    parsed = pd.read_parquet(asset_file("parsed_docs", SAMPLE, home / "assets"))
    chunks = pd.read_parquet(asset_file("vector_index", SAMPLE, home / "assets"))
    store = EdgeChunkStore(home / "qdrant", lock_timeout=60)
    try:
        points = sorted((pid, p.payload.get("content_hash")) for pid, p in store.points(SAMPLE, with_vectors=False))
    finally:
        store.close()
    graph = LadybugGraphStore(home / "graph" / "kg.lbug", lock_timeout=60)
    try:
        nodes = graph.query("MATCH (n) RETURN label(n) AS label, count(*) AS n ORDER BY label")
        edges = graph.query("MATCH ()-[r]->() RETURN label(r) AS type, count(*) AS n ORDER BY type")
    finally:
        graph.close()
    loaded = pd.read_parquet(asset_file("knowledge_graph", SAMPLE, home / "assets"))
    with _instance(home) as instance:
        in_progress = instance.get_runs_count(RunsFilter(statuses=[DagsterRunStatus.STARTED]))
        claims = pool_claims(instance)
    return {
        "parsed": sorted(
            zip(
                parsed["cluster_id"],
                parsed["status"],
                parsed["token_count"],
                parsed["markdown"].map(lambda text: hashlib.sha256(text.encode()).hexdigest()),
                strict=True,
            )
        ),
        "chunks": len(chunks),
        "points": points,
        "graph": (nodes.to_dict("records"), edges.to_dict("records")),
        "graph_loaded": sorted(map(tuple, loaded[["kind", "type", "count"]].to_numpy().tolist())),
        "runs_in_progress": in_progress,
        "pool_claims": claims,
    }


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A home materialized cleanly up to the knowledge graph, and what that run left."""
    home = tmp_path_factory.mktemp("faults") / "home"
    _small_config(home.parent / "config")
    done = _hysem(home, "materialize", "--query", SAMPLE, "--select", "*knowledge_graph", timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    state = snapshot(home)
    assert state["chunks"] > 0 and len(state["points"]) == state["chunks"] and state["runs_in_progress"] == 0
    return home, state


def _forget_the_partition_index(home: Path) -> None:
    """As before the first indexing: no points for the partition."""
    store = EdgeChunkStore(home / "qdrant", lock_timeout=60)
    try:
        store.delete([pid for pid, _ in store.points(SAMPLE, with_vectors=False)])
        assert store.count(SAMPLE) == 0
    finally:
        store.close()


def _forget_the_parses(home: Path) -> None:
    """As before the first parse: a re-run would read every document from the work cache, starting no worker."""
    shutil.rmtree(home / "work_cache" / "parsed_docs")


def _parse_workers_running(run: _Running) -> None:
    wait_for_children(run.process.pid, "spawn_main", count=1, timeout=300)
    time.sleep(2.0)  # into the parse, past each worker arming its parent-death signal


CASES: dict[str, tuple[Callable[[Path], None] | None, Callable[[_Running], None]]] = {
    "parsed_docs": (_forget_the_parses, _parse_workers_running),
    "vector_index": (_forget_the_partition_index, lambda run: run.wait_for("chunks embedded")),
    "knowledge_graph": (None, lambda run: run.wait_for("knowledge_graph: ")),
}


@pytest.mark.parametrize("asset", list(CASES))
def test_kill_9_then_a_plain_rerun_equals_a_clean_run(clean: tuple[Path, dict], asset: str):
    home, expected = clean
    prepare, ready = CASES[asset]
    if prepare is not None:
        prepare(home)
    command = ("materialize", "--query", SAMPLE, "--select", asset)
    run = _Running(home, *command)
    try:
        ready(run)
        helpers = children(run.process.pid)
    finally:
        run.process.kill()
        run.process.wait()

    with _instance(home) as instance:
        [dead] = instance.get_runs(RunsFilter(tags={PID_TAG: str(run.process.pid)}))
        assert dead.status == DagsterRunStatus.STARTED  # killed mid-run: nothing could mark it
    assert not wait_gone(helpers), f"processes of the killed run outlived it: {helpers}"

    again = _hysem(home, *command, timeout=300)  # must not wait for the dead run's pool slot
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"Reclaimed run {dead.run_id[:8]}" in again.stderr, again.stderr[-2000:]
    with _instance(home) as instance:
        assert instance.get_run_by_id(dead.run_id).status == DagsterRunStatus.FAILURE
    assert snapshot(home) == expected


def test_ctrl_c_stops_a_parsing_run_at_once_and_marks_it_failed(clean: tuple[Path, dict]):
    home, expected = clean
    _forget_the_parses(home)
    run = _Running(home, "materialize", "--query", SAMPLE, "--select", "parsed_docs")
    try:
        _parse_workers_running(run)
        workers = children(run.process.pid, "spawn_main")
        run.process.send_signal(signal.SIGINT)
        started = time.monotonic()
        assert run.process.wait(timeout=30) == 128 + signal.SIGINT
        assert time.monotonic() - started < 10
    finally:
        run.process.kill()
    assert not wait_gone(workers, timeout=5)
    run.wait_for("Stopped by SIGINT")
    with _instance(home) as instance:
        [stopped] = instance.get_runs(RunsFilter(tags={PID_TAG: str(run.process.pid)}))
        assert stopped.status == DagsterRunStatus.FAILURE and not pool_claims(instance)
    assert snapshot(home) == expected  # nothing half-written


def test_a_decompression_bomb_is_set_aside_while_the_other_documents_parse(tmp_path: Path):
    paper = default_snapshot_dir() / "files" / "10.5555_ahi.2019.0203.pdf"
    bomb = decompression_bomb(tmp_path / "bomb.pdf", inflated_mb=40)
    pdfs = pd.DataFrame(
        {
            "cluster_id": ["bomb", "paper"],
            "doi": ["10.1/bomb", "10.1/paper"],
            "status": ["saved", "saved"],
            "path": [str(bomb), str(paper)],
            "sha256": [file_sha256(bomb), file_sha256(paper)],
        }
    )
    parser = PdfParser(settings=load_settings("local").profile.assets.parsed_docs)  # the embedded default's limits
    started = time.monotonic()
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("queries", ["sample"])
        with build_asset_context(partition_key="sample", instance=instance) as context:
            output = parsed_docs(context, parser, pdfs)
    table = output.value.set_index("cluster_id")
    assert table.loc["bomb", "status"] == "too_large" and "inflates past 16 MB" in table.loc["bomb", "error"]
    assert table.loc["paper", "status"] == "native" and table.loc["paper", "token_count"] > 0
    assert output.metadata["too_large"].value == 1 and output.metadata["parsed"].value == 1
    assert time.monotonic() - started < 120


# --- damage: files and stores broken after a clean run --------------------------------------------------


def test_a_damaged_asset_file_is_named_by_status_doctor_and_show_and_doctor_fix_repairs_it(
    clean: tuple[Path, dict],
):
    home, expected = clean
    corpus, library, chunks = (
        asset_file("deduped_corpus", SAMPLE, home / "assets"),
        asset_file("library", SAMPLE, home / "assets"),
        asset_file("vector_index", SAMPLE, home / "assets"),
    )
    with corpus.open("r+b") as handle:
        handle.truncate(corpus.stat().st_size // 2)
    citations = pd.read_parquet(library)  # the same rows, one column gone: readable, but not what was recorded
    citations.drop(columns=[citations.columns[-1]]).to_parquet(library, index=False)
    chunks.write_text("chunk_id,text\nc1,a CSV written over the table\n", encoding="utf-8")

    status = _hysem(home, "status", "--query", SAMPLE, timeout=120)
    damaged = [line for line in status.stdout.splitlines() if " damaged " in line]
    assert [line.split()[1] for line in damaged] == ["deduped_corpus", "library", "vector_index"], status.stdout
    shown = _hysem(home, "show", "deduped_corpus", "--query", SAMPLE, timeout=120)
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    assert shown.stderr.startswith(f"Error: deduped_corpus of '{SAMPLE}' is damaged: its file cannot be read (")
    assert f"({corpus}); `hysem doctor --fix` materializes it again" in shown.stderr
    doctor = _hysem(home, "doctor", timeout=120)
    assert doctor.returncode == 1 and str(corpus) in doctor.stdout and str(chunks) in doctor.stdout, doctor.stdout
    assert f"{library}: its file's columns are not those its materialization recorded (missing: " in doctor.stdout

    fixed = _hysem(home, "doctor", "--fix", timeout=600)
    assert fixed.returncode == 0, fixed.stdout[-3000:] + fixed.stderr[-3000:]
    assert f"materialized deduped_corpus, library, vector_index of '{SAMPLE}' again: done" in fixed.stdout
    assert _hysem(home, "doctor", timeout=120).stdout.rstrip().endswith("Nothing to fix.")
    assert snapshot(home) == expected


def _copy_partition(home: Path, query: str) -> int:
    """Another query holding the sample's chunks (same texts, same vectors), as a second review would."""
    source = pd.read_parquet(asset_file("vector_index", SAMPLE, home / "assets"))
    source.to_parquet(asset_file("vector_index", query, home / "assets"), index=False)
    with _instance(home) as instance:
        instance.add_dynamic_partitions("queries", [query])
    store = EdgeChunkStore(home / "qdrant", lock_timeout=60)
    try:
        points = dict(store.points(SAMPLE))
        rows = source.to_dict("records")
        ids = [point_id(SAMPLE, str(row["chunk_id"])) for row in rows]
        store.upsert(
            [point_id(query, str(row["chunk_id"])) for row in rows],
            np.array([points[pid].vector for pid in ids], dtype=np.float32),
            [searchable_text(row["section"] or "", row["text"]) for row in rows],
            [{**points[pid].payload, "query": query} for pid in ids],
        )
        return store.count(query)
    finally:
        store.close()


def test_a_damaged_chunk_store_is_rebuilt_from_every_querys_chunk_table_without_embedding(clean: tuple[Path, dict]):
    home, expected = clean
    other = _copy_partition(home, "second-review")
    [segment] = (home / "qdrant" / "chunks" / "segments").iterdir()
    vectors = next((segment / "vector_storage-dense" / "vectors").glob("chunk_*.mmap"))
    with vectors.open("r+b") as handle:
        handle.truncate(100)

    doctor = _hysem(home, "doctor", timeout=120)
    assert doctor.returncode == 1 and "chunk store  damaged: Qdrant Edge shard" in doctor.stdout, doctor.stdout
    fixed = _hysem(home, "doctor", "--fix", timeout=600)
    assert fixed.returncode == 0, fixed.stdout[-3000:] + fixed.stderr[-3000:]
    assert "rebuilt the chunk store from 2 queries' chunk tables" in fixed.stdout
    assert "0 vectors computed" in fixed.stdout  # every vector came from the vector cache
    assert snapshot(home) == expected
    store = EdgeChunkStore(home / "qdrant", lock_timeout=60)
    try:
        assert store.count("second-review") == other  # the other query's chunks are back too
    finally:
        store.close()


def test_a_count_without_the_partitions_graph_says_so_and_doctor_fix_loads_it_again(clean: tuple[Path, dict]):
    home, expected = clean
    shutil.rmtree(home / "graph")  # as after a kill -9 during the first load: no load of the partition
    question = ("ask", "--query", SAMPLE, "How many studies used random forest?")
    asked = _hysem(home, *question, timeout=300)
    assert asked.returncode == 0, asked.stderr[-2000:]
    assert "The knowledge graph holds no load of" in asked.stdout
    assert f"hysem materialize --query {SAMPLE} --select knowledge_graph" in asked.stdout
    assert "References:" not in asked.stdout  # no passages standing in for the count

    doctor = _hysem(home, "doctor", timeout=120)
    assert doctor.returncode == 1 and f"graph        {SAMPLE}: the graph store holds no load of it" in doctor.stdout
    fixed = _hysem(home, "doctor", "--fix", timeout=600)
    assert fixed.returncode == 0, fixed.stdout[-3000:] + fixed.stderr[-3000:]
    assert snapshot(home) == expected
    again = _hysem(home, *question, timeout=300)
    assert "included studies match" in again.stdout, again.stdout  # not the refusal, which was not cached


# --- a full disk --------------------------------------------------------------------------------------------


def _small_disk(folder: Path, megabytes: int) -> None:
    """A tmpfs of ``megabytes`` at ``folder``: a disk that can really fill up (mounting needs root, as CI has)."""
    folder.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        reason = f"mounting a small filesystem needs root: {mounted.stderr.strip()}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (.ci/run runs as root)")
        pytest.skip(reason)


def test_a_full_disk_is_said_in_one_line_by_status_doctor_and_ask_never_by_a_signal(
    clean: tuple[Path, dict], tmp_path: Path
):
    home, _ = clean
    disk = tmp_path / "disk"
    size = sum(f.stat().st_size for f in home.rglob("*") if f.is_file()) // 2**20 + 160
    _small_disk(disk, size)
    try:
        shutil.copytree(home, disk / "home", symlinks=True)
        shutil.copytree(home.parent / "config", disk / "config")
        free = shutil.disk_usage(disk).free
        subprocess.run(["fallocate", "-l", str(free - 2**20), str(disk / "filler")], check=True)
        question = "How many studies used random forest?"
        for args in (("status",), ("doctor",), ("ask", "--query", SAMPLE, question)):
            result = _hysem(disk / "home", *args, timeout=300)
            assert result.returncode == 1, (args, result.returncode, result.stderr[-2000:])  # not -7 (SIGBUS)
            last = result.stderr.strip().splitlines()[-1]
            assert last.startswith("Error: disk full: ") and f"MB free on the disk of {disk / 'home'}" in last
            assert "Traceback" not in result.stderr
        (disk / "filler").unlink()
        answered = _hysem(disk / "home", "ask", "--query", SAMPLE, question, timeout=300)
        assert answered.returncode == 0 and "random forest" in answered.stdout.lower(), answered.stderr[-2000:]

        # the disk fills in the middle of a run: its last line says so, with no SQL dumped above it
        running = _Running(disk / "home", "materialize", "--query", SAMPLE)
        running.wait_for(" - library - ")
        subprocess.run(["fallocate", "-l", str(shutil.disk_usage(disk).free), str(disk / "filler")], check=True)
        assert running.process.wait(timeout=600) == 1
        said = "".join(running.lines)
        assert said.strip().splitlines()[-1].startswith("Error: ") and "No space left" in said, said[-2000:]
        assert "[SQL:" not in said and "[parameters:" not in said and "Traceback" not in said
    finally:
        subprocess.run(["umount", str(disk)], check=False)
