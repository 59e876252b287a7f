"""A second code location for the pool test: cheap stand-ins for hysem's GPU assets.

The real GPU assets need the whole upstream graph materialized (a minute of CPU); these
sleep instead, so the test measures only what it is about: whether pool ``gpu`` holds.
"""

import time

from dagster import Definitions, asset, define_asset_job, multiprocess_executor

STEP_SECONDS = 4.0


def _work() -> None:
    time.sleep(STEP_SECONDS)


@asset(pool="gpu")
def gpu_a() -> None:
    _work()


@asset(pool="gpu")
def gpu_b() -> None:
    _work()


@asset
def free_a() -> None:
    """No pool: shows that the executor does run steps side by side."""
    _work()


@asset
def free_b() -> None:
    _work()


defs = Definitions(
    assets=[gpu_a, gpu_b, free_a, free_b],
    jobs=[define_asset_job("pool_job", selection=["gpu_a", "gpu_b", "free_a", "free_b"])],
    executor=multiprocess_executor.configured({"max_concurrent": 4}),
)
