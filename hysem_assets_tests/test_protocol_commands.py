"""Protocols from the user's side: choosing one for a query, checking them, and switching one on a query."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from dagster import DagsterInstance, build_asset_context

from hysem_assets.cli import SAMPLE_QUERY, main
from hysem_assets.defs.enrichment import canonical_terms
from hysem_assets.defs.resources import ReviewConfig, TermUnifier
from hysem_assets.settings.protocols import StaleProtocolError, load_protocol


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_query_add_takes_a_protocol_and_refuses_an_unknown_one(config: Path) -> None:
    before = (config / "queries.yaml").read_text(encoding="utf-8")
    refused = invoke("query", "add", "statins and dementia", "--protocol", "nope", "--mailto", "me@example.org")
    assert refused.exit_code == 2 and "No protocol 'nope'" in refused.output and "generic" in refused.output
    assert (config / "queries.yaml").read_text(encoding="utf-8") == before

    added = invoke(
        "query",
        "add",
        "statins and dementia",
        "--protocol",
        "generic",
        "--mailto",
        "me@example.org",
        "--schedule",
        "weekly",
    )
    assert added.exit_code == 0 and "searched again on the schedule '0 6 * * 1'" in added.output, added.output
    listed = invoke("query", "list").output.splitlines()
    assert any(line.startswith("statins-and-dementia\tgeneric\t") and "\tweekly\t" in line for line in listed)
    assert any(line.startswith(f"{SAMPLE_QUERY}\tpollution-cardio-ml\t") for line in listed)


def test_protocol_check_names_the_file_and_field_of_a_bad_protocol(config: Path) -> None:
    assert invoke("protocol", "check").exit_code == 0
    listed = invoke("protocol", "list").output
    assert "generic\t" in listed and "pollution-cardio-ml\t" in listed
    bad = config / "protocols" / "broken.yaml"
    bad.write_text(yaml.safe_dump({"fields": {"drugs": {"type": "terms", "description": "d", "graph": {}}}}))
    checked = invoke("protocol", "check")
    assert checked.exit_code == 1
    assert f"Protocol file {bad}, field 'drugs'" in checked.output and "`node` label" in checked.output


def test_materialize_stops_before_any_run_when_the_querys_protocol_is_bad(config: Path, isolated_home: Path) -> None:
    path = config / "protocols" / "pollution-cardio-ml.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("type: terms", "type: entities", 1), encoding="utf-8")
    ran = invoke("materialize", "--query", SAMPLE_QUERY, "--select", "raw_metadata/pubmed")
    assert ran.exit_code == 1 and "field 'ml_methods_used': type" in ran.output
    dagster_home = isolated_home / "dagster"
    if dagster_home.is_dir():
        with DagsterInstance.from_config(str(dagster_home)) as instance:
            assert not instance.get_runs()


def test_switching_a_querys_protocol_asks_for_re_materialization(config: Path) -> None:
    extracted = pd.DataFrame(
        {
            "cluster_id": ["c1"],
            "protocol": [load_protocol("pollution-cardio-ml").fingerprint],
            "ml_methods_used": ["[]"],
        }
    )
    queries = config / "queries.yaml"
    queries.write_text(
        queries.read_text(encoding="utf-8").replace("protocol: pollution-cardio-ml", "protocol: generic"),
        encoding="utf-8",
    )
    context = build_asset_context(partition_key=SAMPLE_QUERY)
    with pytest.raises(StaleProtocolError, match=rf"{SAMPLE_QUERY}.*extracted with pollution-cardio-ml@.*generic@"):
        canonical_terms(
            context=context, term_unifier=TermUnifier(), review_config=ReviewConfig(), extracted_fields=extracted
        )
