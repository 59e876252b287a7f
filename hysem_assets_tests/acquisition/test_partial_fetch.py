"""A partial upstream failure never silently replaces complete data (the real `hysem`, real HTTP).

The sample mirror runs on loopback with faults switched on between runs: one PubMed efetch
batch cut off mid-XML and one OpenAlex search page that is not JSON. Each run is the
installed `hysem` command in its own process against one HYSEM_HOME.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from aiohttp import web
from dagster import AssetCheckSeverity, AssetKey, AssetRecordsFilter, DagsterInstance, materialize

from hysem_assets.defs.acquisition import deduped_corpus, raw_metadata_assets
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import build_resources
from hysem_assets.mirror.server import MirrorServer, default_snapshot_dir
from hysem_assets.settings.environment import asset_file
from hysem_assets_tests.acquisition.helpers import (
    SAMPLE,
    check_result,
    metadata_value,
    run_raw_metadata,
    write_profile,
)
from hysem_assets_tests.paths import HYSEM

COUNTS = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))["expected_counts"]


def _faults(switches: dict[str, int], seen: Counter):
    """Cut efetch batch retstart=10 and break the OpenAlex search pages after the first, ``switches[...]`` times."""

    @web.middleware
    async def inject(request: web.Request, handler):
        form = await request.post() if request.method == "POST" else {}
        if request.path.endswith("/efetch.fcgi") and form.get("retstart") == "10":
            seen["efetch retstart=10"] += 1
            if switches["efetch"] > 0:
                switches["efetch"] -= 1
                return web.Response(text="<PubmedArticleSet><PubmedArticle><MedlineCit", content_type="text/xml")
        if request.path.endswith("/works") and "search" in request.query and request.query.get("cursor") != "*":
            seen["openalex later pages"] += 1
            if switches["openalex"] > 0:
                switches["openalex"] -= 1
                return web.Response(text='{"meta": {"count": 36}, "results": [', content_type="application/json")
        return await handler(request)

    return inject


@pytest.fixture
def faulty_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: Path):
    """The mirror with switchable faults; the `hysem` runs of a test share one home and profile."""
    monkeypatch.setenv("HYSEM_PROFILE", str(write_profile(tmp_path / "profile.yaml", page_size=10, max_retries=1)))
    monkeypatch.setenv("SCOPUS_API_KEY", "sample-snapshot")
    switches = {"efetch": 0, "openalex": 0}
    seen: Counter = Counter()
    with MirrorServer(middlewares=[_faults(switches, seen)]) as mirror:
        for source, url in mirror.base_urls.items():
            monkeypatch.setenv(f"HYSEM_{source.upper()}_URL", url)
        yield switches, seen


def hysem(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(HYSEM), *args], capture_output=True, text=True, timeout=600)


def rows(source: str) -> int:
    return len(pd.read_parquet(asset_file(f"raw_metadata/{source}", SAMPLE)))


def latest(home: Path, asset: str):
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        records = instance.fetch_materializations(
            AssetRecordsFilter(asset_key=AssetKey.from_user_string(asset), asset_partitions=[SAMPLE]), limit=1
        ).records
        return records[0] if records else None


ACQUISITION = ("materialize", "--query", SAMPLE, "--select", "group:acquisition")


def test_a_partial_fetch_keeps_the_complete_data_and_fails_in_one_line(faulty_mirror, isolated_home: Path):
    switches, seen = faulty_mirror
    complete = hysem(*ACQUISITION)
    assert complete.returncode == 0, complete.stderr[-3000:]
    assert (rows("pubmed"), rows("openalex")) == (COUNTS["pubmed"], COUNTS["openalex"])
    corpus_before = latest(isolated_home, "deduped_corpus")

    switches.update(efetch=10, openalex=10)  # every attempt fails, the retry round included
    partial = hysem(*ACQUISITION)
    assert partial.returncode == 1
    error_lines = [line for line in partial.stderr.splitlines() if line.startswith("Error:")]
    assert error_lines == [f"Error: Materialization of '{SAMPLE}' failed (2 step(s), listed above)."]
    failed = [line for line in partial.stderr.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 2 and "Traceback" not in partial.stderr
    assert failed[0].startswith("failed: raw_metadata/openalex: openalex fetch is partial") or failed[1].startswith(
        "failed: raw_metadata/openalex: openalex fetch is partial"
    )
    pubmed_line = next(line for line in failed if "raw_metadata/pubmed" in line)
    assert "efetch retstart=10" in pubmed_line and "not valid XML" in pubmed_line
    assert f"Kept the earlier complete materialization ({COUNTS['pubmed']} records)" in pubmed_line
    assert "--allow-partial" in pubmed_line
    assert seen["efetch retstart=10"] == 1 + 2  # the complete run, then the first try and the retry round
    # Nothing was replaced and nothing downstream ran: deduped_corpus (and so the graph) kept its data.
    assert (rows("pubmed"), rows("openalex")) == (COUNTS["pubmed"], COUNTS["openalex"])
    assert latest(isolated_home, "deduped_corpus").run_id == corpus_before.run_id
    assert latest(isolated_home, "raw_metadata/pubmed").run_id == corpus_before.run_id

    allowed = hysem(*ACQUISITION, "--allow-partial")
    assert allowed.returncode == 0, allowed.stderr[-3000:]
    assert rows("pubmed") == COUNTS["pubmed"] - 10 and rows("openalex") < COUNTS["openalex"]
    pubmed = latest(isolated_home, "raw_metadata/pubmed").asset_materialization.metadata
    assert pubmed["partial"].value is True and pubmed["failures"].value == 1
    assert latest(isolated_home, "deduped_corpus").run_id != corpus_before.run_id  # allowed: it flows on


def test_a_page_that_fails_once_is_fetched_again_and_the_fetch_is_complete(faulty_mirror):
    switches, seen = faulty_mirror
    switches.update(efetch=1, openalex=1)  # a body cut off once: the retry round fetches it again
    with DagsterInstance.ephemeral() as instance:
        result = run_raw_metadata(instance)
    assert result.success
    assert (rows("pubmed"), rows("openalex")) == (COUNTS["pubmed"], COUNTS["openalex"])
    assert seen["efetch retstart=10"] == 2 and switches == {"efetch": 0, "openalex": 0}
    for source in ("pubmed", "openalex"):
        assert metadata_value(result, source, "partial") is False and metadata_value(result, source, "failures") == 0
        assert check_result(result, source).passed


def test_a_first_partial_fetch_is_stored_marked_and_blocks_what_is_downstream(faulty_mirror):
    switches, _ = faulty_mirror
    switches.update(efetch=10)
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        result = materialize(
            [*raw_metadata_assets, deduped_corpus],
            instance=instance,
            resources=build_resources(),
            partition_key=SAMPLE,
            raise_on_error=False,
        )
    assert not result.success
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert failure.step_key == "raw_metadata__pubmed"
    assert "blocking asset check failed" in failure.event_specific_data.error.message
    assert rows("pubmed") == COUNTS["pubmed"] - 10  # there was nothing complete to keep: stored, marked
    assert metadata_value(result, "pubmed", "partial") is True
    check = check_result(result, "pubmed")
    assert not check.passed and check.severity == AssetCheckSeverity.ERROR
    materialized = {event.asset_key for event in result.get_asset_materialization_events()}
    assert AssetKey("deduped_corpus") not in materialized and not asset_file("deduped_corpus", SAMPLE).exists()
