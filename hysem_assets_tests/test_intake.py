"""The add_query job (a query from the launchpad) and the sensor that runs its graph."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterEventType, DagsterInstance, RunRequest, SkipReason, build_run_status_sensor_context

from hysem_assets.definitions import defs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.sensors import added_query_sensor
from hysem_assets.settings.queries import QueryError, load_queries, new_query_spec
from hysem_assets.sources.registry import query_sources


def _add(instance: DagsterInstance, **fields):
    """As the code location runs it: with hysem's resources (its Parquet IO manager among them)."""
    return defs.resolve_job_def("add_query_job").execute_in_process(
        run_config={"ops": {"add_query": {"config": fields}}}, instance=instance, raise_on_error=False
    )


def _sensor_on(instance: DagsterInstance, result):
    success = next(e for e in result.all_events if e.event_type == DagsterEventType.RUN_SUCCESS)
    context = build_run_status_sensor_context(
        sensor_name="added_query_sensor",
        dagster_event=success,
        dagster_instance=instance,
        dagster_run=result.dagster_run,
    )
    return added_query_sensor(context)


def test_a_launchpad_query_is_appended_registered_and_its_graph_requested(config: Path) -> None:
    with DagsterInstance.ephemeral() as instance:
        result = _add(
            instance,
            text="Ozone & Heart Failure",
            per_source={"pubmed": 'ozone[tiab] AND "heart failure"[tiab]'},
            sources=["pubmed", "openalex"],
            date_to="2024-12-31",
        )
        assert result.success
        spec = load_queries(config / "queries.yaml")["ozone-heart-failure"]
        assert spec.query == {"pubmed": 'ozone[tiab] AND "heart failure"[tiab]', "openalex": "Ozone & Heart Failure"}
        assert str(spec.date_to) == "2024-12-31"
        assert "ozone-heart-failure" in instance.get_dynamic_partitions(queries_partitions.name)
        (output,) = [e for e in result.all_events if e.event_type == DagsterEventType.STEP_OUTPUT]
        assert output.step_output_data.metadata["slug"].value == "ozone-heart-failure"

        request = _sensor_on(instance, result)
        assert isinstance(request, RunRequest) and request.partition_key == "ozone-heart-failure"


def test_materialize_false_adds_the_query_without_a_run(config: Path) -> None:
    with DagsterInstance.ephemeral() as instance:
        result = _add(instance, text="ozone stroke", slug="later", materialize=False)
        assert result.success and "later" in load_queries(config / "queries.yaml")
        assert isinstance(_sensor_on(instance, result), SkipReason)


def test_a_bad_launchpad_query_fails_with_the_reason_and_changes_nothing(config: Path) -> None:
    before = (config / "queries.yaml").read_text()
    with DagsterInstance.ephemeral() as instance:
        for fields, reason in [
            ({"slug": "empty"}, "Give the query text"),
            ({"text": "x", "slug": "Bad Slug"}, "slug"),
            ({"text": "x", "slug": "dates", "date_from": "2024-01-01", "date_to": "2020-01-01"}, "after date_to"),
            ({"text": "x", "slug": "air-pollution-cardio-ml"}, "already exists"),
        ]:
            result = _add(instance, **fields)
            assert not result.success
            failure = next(e for e in result.all_events if e.event_type == DagsterEventType.STEP_FAILURE)
            assert reason in failure.step_failure_data.user_failure_data.description, fields
        assert instance.get_dynamic_partitions(queries_partitions.name) == []
    assert (config / "queries.yaml").read_text() == before


def test_the_spec_builder_shared_with_the_cli_names_the_problem() -> None:
    assert new_query_spec("Air pollution: ML!").slug == "air-pollution-ml"
    with pytest.raises(QueryError, match=r"query 'x' \(.*\): unknown sources \['embase'\]; choose from"):
        query_sources(new_query_spec("t", slug="x", sources=["embase"]))
    with pytest.raises(QueryError, match=r"Query 'x' is invalid: sources: source names \['Embase'\] must be"):
        new_query_spec("t", slug="x", sources=["Embase"])
