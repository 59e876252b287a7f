"""The Dagster UI as a researcher uses it, in headless Chromium: lineage, partitions, and a
materialization launched by clicking. Screenshots land in test-artifacts/ui/."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest

from hysem_assets_tests.ui.server import ARTIFACTS, SAMPLE, DagsterServer, materialized_partitions, runs, wait_for

CHROMIUM = Path("/usr/bin/chromium")
ASSET = "raw_metadata/pubmed"

# On a workstation without the browser these tests skip; in CI (.ci/run installs it) they must run.
pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and not CHROMIUM.exists() and not shutil.which("chromium"),
    reason="Debian's chromium is not installed (apt-get install chromium)",
)


@pytest.fixture(scope="module")
def browser() -> Iterator:
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")), args=["--no-sandbox"]
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, dagster_server: DagsterServer):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=dagster_server.url)
    context.set_default_timeout(30_000)
    yield context.new_page()
    context.close()


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}.png")


def test_lineage_page_shows_the_acquisition_group(page) -> None:
    page.set_viewport_size({"width": 1400, "height": 2000})  # the group's every source and deduped_corpus in view
    page.goto("/locations/hysem_assets.definitions/asset-groups/acquisition/lineage")
    for node in ("pubmed", "openalex", "scopus", "europepmc", "imported", "citations", "deduped_corpus"):
        page.get_by_text(node, exact=True).first.wait_for()
    page.get_by_text("Materialize all").wait_for()
    screenshot(page, "lineage-acquisition")


def test_partitions_page_lists_the_sample_query(page) -> None:
    page.goto(f"/assets/{ASSET}?view=partitions")
    page.get_by_text(SAMPLE, exact=True).first.wait_for()
    page.get_by_text("Missing (").wait_for()
    screenshot(page, "partitions-before")


def test_materialize_one_asset_by_clicking(page, dagster_server: DagsterServer) -> None:
    page.goto(f"/assets/{ASSET}?view=partitions")
    page.locator("button", has_text="Materialize…").click()
    dialog = page.get_by_role("dialog").filter(has_text="Launch runs to materialize")
    dialog.get_by_text("Select a partition or create one").click()
    page.get_by_role("menuitem").filter(has_text=SAMPLE).last.click()
    dialog.get_by_text("Launch runs to materialize").click()  # closes the partition picker
    screenshot(page, "launch-dialog")
    dialog.locator("button", has_text="Launch 1 run").click()

    def finished_run():
        found = runs(dagster_server.url, tags=[{"key": "dagster/partition", "value": SAMPLE}])
        return next((run for run in found if run["status"] in {"SUCCESS", "FAILURE", "CANCELED"}), None)

    run = wait_for(finished_run, timeout=180, message=f"a run materializing {ASSET} for {SAMPLE}")
    assert run["status"] == "SUCCESS", run
    assert [s["stepKey"] for s in run["stepStats"]] == ["raw_metadata__pubmed"]
    assert materialized_partitions(dagster_server.url, ASSET, [SAMPLE]) == {SAMPLE}

    page.goto(f"/assets/{ASSET}?view=partitions")
    page.get_by_text(SAMPLE, exact=True).first.click()
    page.get_by_text("Latest materialization").wait_for()
    wait_for(lambda: run["runId"][:8] in page.inner_text("body"), timeout=30, message="the run id on the asset page")
    page.get_by_text("Materialized", exact=True).wait_for()  # the badge of the selected partition
    screenshot(page, "materialized-asset")


def test_resources_page_lists_every_resource_with_its_config(page) -> None:
    page.goto("/locations/hysem_assets.definitions/resources")
    for name in (
        "scholarly_apis",
        "pdf_fetcher",
        "pdf_parser",
        "field_extractor",
        "topic_modeller",
        "term_unifier",
        "chunk_store",
        "graph_database",
        "answer_models",
        "review_config",
        "io_manager",
    ):
        page.get_by_text(name, exact=True).first.wait_for()
    screenshot(page, "resources")
    page.get_by_text("chunk_store", exact=True).first.click()
    page.get_by_text("settings").first.wait_for()
    screenshot(page, "resource-chunk-store")
