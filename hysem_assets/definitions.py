"""The Dagster code location: every asset, job, sensor and resource of hysem, loaded from ``defs/``."""

import warnings

from dagster import (
    Definitions,
    ExecutorDefinition,
    PreviewWarning,
    load_definitions_from_package_module,
    multiprocess_executor,
)

import hysem_assets.defs
from hysem_assets.defs.placement import TAG_CONCURRENCY_LIMITS
from hysem_assets.defs.resources import build_resources
from hysem_assets.defs.schedules import living_review_schedules
from hysem_assets.settings.environment import executor_kind
from hysem_assets.settings.protocols import load_protocols
from hysem_assets.settings.queries import QueryError, load_queries
from hysem_assets.stores.graph_schema import graph_schema


def executor() -> ExecutorDefinition:
    """Steps in subprocesses here; with HYSEM_EXECUTOR=k8s each step is its own pod (GPU tags apply)."""
    if executor_kind() == "k8s":
        from dagster_k8s import k8s_job_executor

        return k8s_job_executor.configured({"tag_concurrency_limits": TAG_CONCURRENCY_LIMITS})
    return multiprocess_executor.configured({"tag_concurrency_limits": TAG_CONCURRENCY_LIMITS})


# The graph schema the protocols make together is checked when the code location loads: two
# protocols that give one name two meanings stop it. A protocol file that cannot be read is left
# out with a warning and blocks only the queries that use it.
graph_schema(load_protocols())


def declared_queries() -> dict:
    """The queries file at load, for the living reviews' schedules; a file that cannot be read schedules
    nothing here, and the sensor that reads it again names the problem."""
    try:
        return load_queries()
    except QueryError as exc:
        warnings.warn(f"No living-review schedules: {exc}", stacklevel=1)
        return {}


def load_definitions() -> Definitions:
    """Every asset, check, job and sensor that a module of ``defs/`` declares, found by Dagster's loader, with
    the resources of the active profile, the executor and the living reviews' schedules."""
    with warnings.catch_warnings():  # the package loader is marked as a preview in this Dagster release
        warnings.simplefilter("ignore", PreviewWarning)
        declared = load_definitions_from_package_module(
            hysem_assets.defs, resources=build_resources(), executor=executor()
        )
    return Definitions.merge(declared, Definitions(schedules=living_review_schedules(declared_queries())))


defs = load_definitions()
