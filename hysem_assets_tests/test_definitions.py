"""The code location loads, validates with Dagster's own CLI, and has the documented shape."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


def definitions_shape(definitions) -> dict:
    """What the UI shows of the code location: each asset's group, partitioning, inputs, kinds and pool, and
    every check, job, sensor and resource."""
    graph = definitions.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "partitioned": node.partitions_def is not None,
            "deps": sorted(parent.to_user_string() for parent in node.parent_keys),
            "kinds": sorted(node.kinds),
            "pool": definitions.resolve_assets_def(key).op.pool,
        }
    return {
        "assets": assets,
        "checks": sorted(f"{check.asset_key.to_user_string()}:{check.name}" for check in graph.asset_check_keys),
        "jobs": sorted(job.name for job in definitions.resolve_all_job_defs()),
        "sensors": sorted(sensor.name for sensor in definitions.sensors or []),
        "resources": sorted(definitions.resources or {}),
    }


def test_the_definitions_loaded_from_defs_are_the_declared_ones():
    """Dagster's package loader finds every asset, check, job and sensor of ``defs/``: the code location is
    the one recorded in ``definitions_shape.json`` (update it with an asset, and review the diff)."""
    expected = json.loads((Path(__file__).parent / "definitions_shape.json").read_text(encoding="utf-8"))
    assert definitions_shape(defs) == expected
