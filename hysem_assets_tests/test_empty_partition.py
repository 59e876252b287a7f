"""A query that matches nothing: the whole graph materializes empty partitions, and nothing fails.

The sources are the real HTTP clients against the mirror serving an empty snapshot, so
every API answers in its real format with zero results.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner
from dagster import DagsterEventType, DagsterInstance

from hysem_assets.cli import main
from hysem_assets.definitions import defs
from hysem_assets.mirror.server import MirrorServer
from hysem_assets.qa.answer import NO_ARTICLES
from hysem_assets.settings.environment import asset_file

SLUG = "nothing-matches"
QUERY = f"""
  - slug: {SLUG}
    title: A search that finds nothing
    query: zzqx unmatched terms
    sources: [pubmed, openalex, scopus]
    protocol: pollution-cardio-ml
"""
#: Assets whose empty partition still holds rows: the flow's boxes (all zero), the Query node
#: loaded into the graph, one answer per question saying there is no evidence, and the search as an update.
NOT_ROW_FREE = {"prisma_flow", "knowledge_graph", "answers", "updates"}


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_a_query_that_matches_nothing_flows_through_every_asset(
    config: Path, isolated_home: Path, tmp_path: Path, monkeypatch
):
    with (config / "queries.yaml").open("a", encoding="utf-8") as queries:
        queries.write(QUERY)
    monkeypatch.setenv("SCOPUS_API_KEY", "any-key")  # the mirror wants one, as Scopus does; no mailto on purpose
    snapshot = tmp_path / "empty-snapshot"
    snapshot.mkdir()
    with MirrorServer(snapshot) as mirror:
        for source, url in mirror.base_urls.items():
            monkeypatch.setenv(f"HYSEM_{source.upper()}_URL", url)
        ran = invoke("materialize", "--query", SLUG)
        question = "Which machine-learning methods are used in these studies, and in how many articles?"
        asked = invoke("ask", "--query", SLUG, question)
    assert ran.exit_code == 0, ran.output

    with DagsterInstance.from_config(str(isolated_home / "dagster")) as instance:
        [run] = instance.get_runs()
        events = [entry.dagster_event for entry in instance.all_logs(run.run_id) if entry.dagster_event]
    started = {e.step_key for e in events if e.event_type == DagsterEventType.STEP_START}
    succeeded = {e.step_key for e in events if e.event_type == DagsterEventType.STEP_SUCCESS}
    assert started == succeeded and not [e for e in events if e.event_type == DagsterEventType.STEP_FAILURE]

    partitioned = {
        key.to_user_string() for assets in defs.assets if assets.partitions_def is not None for key in assets.keys
    }
    materialized = {
        e.asset_key.to_user_string(): {k: v.value for k, v in e.event_specific_data.materialization.metadata.items()}
        for e in events
        if e.event_type == DagsterEventType.ASSET_MATERIALIZATION
    }
    assert set(materialized) == partitioned
    for asset, metadata in materialized.items():
        assert metadata["empty_partition"] is True and metadata["empty_reason"], asset
        table = pd.read_parquet(asset_file(asset, SLUG))
        assert len(table.columns) > 0, f"{asset} lost its columns"
        assert metadata["dagster/row_count"] == len(table)
        if asset not in NOT_ROW_FREE:
            assert len(table) == 0, asset

    flow = pd.read_parquet(asset_file("prisma_flow", SLUG))
    assert {"identified", "screened", "included"} <= set(flow["box"]) and (flow["count"] == 0).all()
    graph = pd.read_parquet(asset_file("knowledge_graph", SLUG))
    assert set(zip(graph["kind"], graph["type"])) == {("node", "Query")}

    checks = [e.event_specific_data for e in events if e.event_type == DagsterEventType.ASSET_CHECK_EVALUATION]
    assert checks and all(check.passed for check in checks)
    corpus_checks = [c for c in checks if c.asset_key.to_user_string() == "deduped_corpus"]
    assert corpus_checks and all(c.description.startswith("Nothing to check") for c in corpus_checks)

    # No evidence, said plainly, and no citation made up.
    answers = pd.read_parquet(asset_file("answers", SLUG))
    assert len(answers) >= 1 and not answers["evidence_found"].any() and (answers["citations"] == 0).all()
    assert answers["markdown"].str.contains(NO_ARTICLES, regex=False).all()
    assert all(json.loads(details)["claims"] == [] for details in answers["json"])
    assert asked.exit_code == 0 and NO_ARTICLES in asked.output and "References" not in asked.output
