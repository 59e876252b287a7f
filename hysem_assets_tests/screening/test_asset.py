"""The `screening` asset from a stored corpus and the decision log, and `hysem screen import/export`
moving decisions through ASReview's files."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner
from dagster import AssetSelection, materialize

from hysem_assets.cli import main
from hysem_assets.definitions import defs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.runs.instance import get_instance
from hysem_assets.screening.decisions import Decision, DecisionLog, decisions_path
from hysem_assets.screening.session import review_criteria
from hysem_assets.settings.catalog import review_for
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.queries import append_query, new_query_spec
from hysem_assets.stores.tables import write_parquet
from hysem_assets_tests.acquisition.helpers import SAMPLE
from hysem_assets_tests.screening.works import corpus


def materialize_screening():
    instance = get_instance()
    instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
    partitioned = [a for a in defs.assets if a.partitions_def is not None]
    result = materialize(
        partitioned,
        selection=AssetSelection.assets("screening"),
        instance=instance,
        partition_key=SAMPLE,
        resources=defs.resources,
    )
    [event] = result.get_asset_materialization_events()
    return pd.read_parquet(asset_file("screening", SAMPLE)), event.materialization.metadata


def test_the_asset_ranks_every_work_records_decisions_and_reports_the_stopping_rule():
    write_parquet(corpus(), asset_file("deduped_corpus", SAMPLE))
    table, metadata = materialize_screening()
    assert metadata["ranked_by"].value == "eligibility criteria" and metadata["undecided"].value == 12
    assert set(table.nsmallest(6, "rank")["cluster_id"]) == {f"w{k:02d}" for k in range(6)}  # on-topic first
    assert table["proceeds"].all()  # the local profile lets every undecided work through

    DecisionLog(decisions_path(SAMPLE)).append(
        [
            Decision("w00", "included"),
            Decision("w07", "excluded", "wrong exposure"),
            Decision("w99", "included"),  # a work a re-search dropped: kept in the log, not in the table
        ]
    )
    table, metadata = materialize_screening()
    decided = table.set_index("cluster_id")
    assert decided.loc["w00", "decision"] == "included" and decided.loc["w07", "reason"] == "wrong exposure"
    assert not decided.loc["w07", "proceeds"] and "w99" not in decided.index and len(table) == 12
    assert metadata["ranked_by"].value == "active learning"
    assert (metadata["included"].value, metadata["excluded"].value) == (1, 1)
    assert not metadata["stopping_rule_met"].value and 0 < metadata["recall_at_least"].value < 0.95
    assert "wrong exposure" in metadata["exclusion_reasons"].value
    assert sorted(table["rank"]) == list(range(1, 13))


def test_decisions_go_out_to_asreview_files_and_come_back(tmp_path):
    write_parquet(corpus(), asset_file("deduped_corpus", SAMPLE))
    log = DecisionLog(decisions_path(SAMPLE))
    log.append([Decision("w00", "included"), Decision("w07", "excluded", "wrong outcome")])
    runner = CliRunner()
    for name in ("decisions.csv", "decisions.ris"):
        exported = runner.invoke(main, ["screen", "export", str(tmp_path / name), "--query", SAMPLE])
        assert exported.exit_code == 0 and "12 works (2 decided)" in exported.output
    exported = pd.read_csv(tmp_path / "decisions.csv")
    assert exported.set_index("record_id")["included"].dropna().to_dict() == {"w00": 1, "w07": 0}
    assert exported["authors"].iloc[0] == "Doe, Jane; Roe, Rick"  # a stored list of names, written as names

    decisions_path(SAMPLE).unlink()
    imported = runner.invoke(main, ["screen", "import", str(tmp_path / "decisions.ris"), "--query", SAMPLE])
    assert imported.exit_code == 0, imported.output
    assert "Imported 2 new and 0 changed" in imported.output
    assert {k: (d.action, d.reason) for k, d in log.current().items()} == {
        "w00": ("included", None),
        "w07": ("excluded", "wrong outcome"),
    }
    again = runner.invoke(main, ["screen", "import", str(tmp_path / "decisions.csv"), "--query", SAMPLE])
    assert "Imported 0 new and 0 changed decision(s); 2 already so" in again.output

    changed = tmp_path / "changed.csv"
    exported.assign(included=exported["included"].replace({1: 0, 0: 1})).to_csv(changed, index=False)
    refused = runner.invoke(main, ["screen", "import", str(changed), "--query", SAMPLE])
    assert refused.exit_code == 1 and "2 decision(s) differ from ones already made" in refused.output
    assert log.current()["w00"].action == "included"  # nothing was imported
    replaced = runner.invoke(main, ["screen", "import", str(changed), "--query", SAMPLE, "--replace"])
    assert replaced.exit_code == 0 and log.current()["w00"].action == "excluded"


def test_screening_before_the_corpus_exists_says_what_to_run():
    refused = CliRunner().invoke(main, ["screen", "--query", SAMPLE, "--no-open"])
    assert refused.exit_code == 1
    assert f"hysem materialize --query {SAMPLE} --select deduped_corpus" in refused.output


def test_a_protocol_without_eligibility_criteria_ranks_by_the_query_words_and_says_so(config):
    append_query(new_query_spec("nitrate in groundwater", slug="nitrate", protocol="generic"))
    criteria = review_criteria(review_for("nitrate"))
    assert criteria.inclusion[-1] == "nitrate in groundwater" and criteria.reasons == ["not relevant", "other"]
    assert "config/protocols/generic.yaml" in criteria.note
