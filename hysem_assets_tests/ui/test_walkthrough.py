"""The README's walkthrough, run command by command exactly as it is written.

The commands run in a scratch folder that links to the project's files, so the files
they write (``pubmed.csv``, ``dpo.jsonl``) land there; ``HYSEM_HOME``,
``HYSEM_CONFIG_DIR`` and the UI's port (``HYSEM_UI_PORT``, ``HYSEM_DAGSTER_URL``) keep the
run apart from a user's own state and UI. ``make ui`` runs in the background until the
end; every other command must finish with status 0.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.qa.preferences import DPO_KEYS
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.protocols import load_protocol
from hysem_assets_tests.neo4j_launcher import free_port
from hysem_assets_tests.paths import PROJECT_ROOT
from hysem_assets_tests.ui.server import stop, wait_until_loaded

SECOND_SNAPSHOT = PROJECT_ROOT / "hysem_assets" / "snapshots" / "statins_dementia"
SECTION = "## From the demo to the UI, new queries and a preference dataset"
SERVER_COMMAND = "make ui"
COMMAND_TIMEOUT = 1800
ARTIFACTS = PROJECT_ROOT / "test-artifacts" / "walkthrough"


def walkthrough_commands(readme: str) -> list[str]:
    """The indented command lines of the walkthrough section, in order."""
    section = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ") and line.strip()]


def _scratch_checkout(folder: Path) -> None:
    """Links to every top-level entry of the project, so relative outputs stay in ``folder``."""
    for entry in PROJECT_ROOT.iterdir():
        if entry.name not in {".git", ".hysem", "test-artifacts"}:
            (folder / entry.name).symlink_to(entry)


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str], list[str]]]:
    root = tmp_path_factory.mktemp("walkthrough")
    work, home, config = root / "work", root / "hysem", root / "config"
    work.mkdir()
    shutil.copytree(PROJECT_ROOT / "config", config)
    # A stale install would re-point the editable package at the scratch folder: refresh it here first.
    subprocess.run(["make", "install"], cwd=PROJECT_ROOT, check=True, timeout=COMMAND_TIMEOUT)
    _scratch_checkout(work)
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HYSEM_", "DAGSTER_"))}
    env.update(
        HYSEM_HOME=str(home),
        HYSEM_CONFIG_DIR=str(config),
        HYSEM_UI_PORT=str(port),
        HYSEM_DAGSTER_URL=f"http://127.0.0.1:{port}",
    )
    yield work, env, walkthrough_commands((PROJECT_ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_walkthrough_lists_every_step_the_readme_promises() -> None:
    commands = walkthrough_commands((PROJECT_ROOT / "README.md").read_text(encoding="utf-8"))
    steps = ["make demo", SERVER_COMMAND, "hysem query add", "hysem backfill", "hysem ask", "hysem export-preferences"]
    positions = [next(i for i, command in enumerate(commands) if step in command) for step in steps]
    assert positions == sorted(positions), commands
    assert sum("hysem query add" in command for command in commands) == 2


def test_every_walkthrough_command_works_as_written(walkthrough) -> None:
    work, env, commands = walkthrough
    log = work.parent / "make-ui.log"
    server: subprocess.Popen | None = None
    outputs: dict[str, str] = {}
    try:
        for command in commands:
            if command.startswith(SERVER_COMMAND):
                with log.open("wb") as out:
                    server = subprocess.Popen(
                        ["bash", "-c", command],
                        cwd=work,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                wait_until_loaded(env["HYSEM_DAGSTER_URL"], server, log, expected_locations=1)
                continue
            done = subprocess.run(
                ["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT
            )
            assert done.returncode == 0, (
                f"`{command}` failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
            )
            outputs[command] = done.stdout
        assert server is not None and server.poll() is None, "make ui is not running any more"
        _check_results(work, env, outputs)
    finally:
        if server is not None:
            stop(server)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log, ARTIFACTS / "make-ui.log")


def _check_second_subject(work: Path, outputs: dict[str, str]) -> None:
    """The query on the second bundled subject: generic fields filled from its abstracts, counted from the graph.

    The truth is the snapshot's hand-labelled file (written with the abstracts, not from any
    extractor's output); a field counts as filled where the abstract states it.
    """
    truth = json.loads((SECOND_SNAPSHOT / "fields_truth.json").read_text(encoding="utf-8"))["works"]
    by_doi = {work["doi"].lower(): work for work in truth.values() if work.get("doi")}
    rows = json.loads((work / "fields.json").read_text(encoding="utf-8"))
    fields = [field.name for field in load_protocol("generic").fields]
    assert rows and all(set(fields) <= set(row) and "evidence" in row for row in rows)
    corpus = pd.read_parquet(asset_file("deduped_corpus", "statins-dementia", work.parent / "hysem" / "assets"))
    doi_of = corpus.set_index("cluster_id")["doi"].fillna("").str.lower().to_dict()
    for name in ("study_design", "population", "sample_size"):
        stated = filled = 0
        for row in rows:
            expected = by_doi.get(doi_of.get(row["cluster_id"], ""), {}).get(name)
            if expected is not None:
                stated += 1
                filled += row[name] not in (None, "", [])
        assert stated and filled / stated >= 0.8, f"{name}: {filled} of {stated} stated values extracted"
    counting = json.loads(next(out for command, out in outputs.items() if "statins-dementia --json" in command))
    assert counting["route"] in ("symbolic", "counting") and counting["claims"], counting


def _check_results(work: Path, env: dict[str, str], outputs: dict[str, str]) -> None:
    """What the commands left behind is what the README says they do."""
    status_json = next(out for command, out in outputs.items() if "status" in command and "--json" in command)
    assert all(row["materialized"] for row in json.loads(status_json)), "make demo left assets unmaterialized"
    truth = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))
    assert len(pd.read_csv(work / "pubmed.csv")) == truth["expected_counts"]["pubmed"]

    added = re.findall(r"--slug (\S+)", "\n".join(command for command in outputs if "query add" in command))
    done = subprocess.run(
        [str(PROJECT_ROOT / ".venv" / "bin" / "hysem"), "status", "--json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"hysem status --json failed ({done.returncode}):\n{done.stderr[-6000:]}"
    everything = done.stdout
    rows = [row for row in json.loads(everything) if row["query"] in added]
    assert {row["query"] for row in rows} == set(added)
    missing = [f"{row['query']}:{row['asset']}" for row in rows if not row["materialized"]]
    assert not missing, f"the backfill left assets unmaterialized: {missing}"
    answers = [row for row in rows if row["asset"] == "answers"]
    assert all(row["rows"] for row in answers), f"new queries got no answers (default questions): {answers}"

    _check_second_subject(work, outputs)
    answer = next(out for command, out in outputs.items() if "hysem ask" in command)
    assert "References:" in answer and "https://doi.org/10." in answer, f"the answer cites nothing:\n{answer}"
    pairs = [json.loads(line) for line in (work / "dpo.jsonl").read_text(encoding="utf-8").splitlines()]
    assert pairs and all(tuple(pair) == DPO_KEYS for pair in pairs)
