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


def executor(start_method: str = "forkserver") -> ExecutorDefinition:
    """Steps in subprocesses here; with HYSEM_EXECUTOR=k8s each step is its own pod (GPU tags apply).

    Here each step forks from one fork server per run that has imported this module once, instead of a
    fresh interpreter importing it again (seconds of CPU a step, most of a small query's run);
    ``start_method="spawn"`` is Dagster's default, kept for comparison (``benchmarks/run_start.py``).
    """
    if executor_kind() == "k8s":
        from dagster_k8s import k8s_job_executor

        return k8s_job_executor.configured({"tag_concurrency_limits": TAG_CONCURRENCY_LIMITS})
    preload = {"preload_modules": [__name__]} if start_method == "forkserver" else {}
    return multiprocess_executor.configured(
        {"tag_concurrency_limits": TAG_CONCURRENCY_LIMITS, "start_method": {start_method: preload}}
    )


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


def load_definitions(start_method: str = "forkserver") -> Definitions:
    """Every asset, check, job and sensor that a module of ``defs/`` declares, found by Dagster's loader, with
    the resources of the active profile, the executor and the living reviews' schedules."""
    with warnings.catch_warnings():  # the package loader is marked as a preview in this Dagster release
        warnings.simplefilter("ignore", PreviewWarning)
        declared = load_definitions_from_package_module(
            hysem_assets.defs, resources=build_resources(), executor=executor(start_method)
        )
    return Definitions.merge(declared, Definitions(schedules=living_review_schedules(declared_queries())))


defs = load_definitions()
