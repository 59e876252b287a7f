from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance, SkipReason, build_sensor_context

from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.sensors import new_query_slugs, queries_sensor, screening_decisions_sensor
from hysem_assets.screening.decisions import Decision, DecisionLog, decisions_path


def test_new_query_slugs_keeps_file_order():
    assert new_query_slugs(["c", "a", "b"], ["a"]) == ["c", "b"]


def test_sensor_registers_added_queries_and_requests_their_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HYSEM_CONFIG_DIR", str(tmp_path))
    (tmp_path / "queries.yaml").write_text(
        "queries:\n  - slug: ozone-stroke\n    query: ozone stroke\n  - slug: no2-heart\n    query: no2 heart\n"
    )
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, ["ozone-stroke"])
        result = queries_sensor(build_sensor_context(instance=instance))
        assert [r.partition_key for r in result.run_requests] == ["no2-heart"]
        assert result.run_requests[0].run_key == "query:no2-heart"
        [add_request] = result.dynamic_partitions_requests
        assert add_request.partitions_def_name == "queries" and list(add_request.partition_keys) == ["no2-heart"]

        instance.add_dynamic_partitions(queries_partitions.name, ["no2-heart"])
        assert isinstance(queries_sensor(build_sensor_context(instance=instance)), SkipReason)


def test_a_grown_decision_log_requests_its_screening_once_per_state():
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, ["ozone-stroke", "no2-heart"])
        assert isinstance(screening_decisions_sensor(build_sensor_context(instance=instance)), SkipReason)
        log = DecisionLog(decisions_path("no2-heart"))
        log.append([Decision("w1", "included")])
        [first] = screening_decisions_sensor(build_sensor_context(instance=instance)).run_requests
        assert first.partition_key == "no2-heart" and first.job_name in (None, "screening_job")
        log.append([Decision("w2", "excluded", "other")])
        [second] = screening_decisions_sensor(build_sensor_context(instance=instance)).run_requests
        assert second.run_key != first.run_key  # a new state of the log: a new run
