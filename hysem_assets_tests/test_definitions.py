"""The code location loads, validates with Dagster's own CLI, and has the documented shape."""

from __future__ import annotations

import os
import subprocess
import sys

from dagster import AssetKey

from hysem_assets.definitions import defs
from hysem_assets_tests.paths import PROJECT_ROOT


def test_dagster_definitions_validate_passes(isolated_home):
    env = {**os.environ, "DAGSTER_HOME": str(isolated_home)}
    completed = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Validation successful" in completed.stdout + completed.stderr


def test_raw_metadata_assets_are_partitioned_by_queries_in_acquisition_group():
    graph = defs.resolve_asset_graph()
    for source in ("pubmed", "openalex", "scopus"):
        node = graph.get(AssetKey(["raw_metadata", source]))
        assert node.partitions_def.name == "queries"
        assert node.group_name == "acquisition"
        assert node.description
    assert defs.resolve_job_def("query_job") is not None
    assert defs.resolve_sensor_def("queries_sensor") is not None
