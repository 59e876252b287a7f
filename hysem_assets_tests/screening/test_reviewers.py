"""Two reviewers from the command line and in the `screening` asset: their decisions, conflicts and
resolutions, Cohen's kappa per stage, the full-text stage, and the bad input refused with nothing
written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from hysem_assets.cli import main
from hysem_assets.screening.decisions import FULLTEXT, DecisionLog, decisions_path
from hysem_assets.settings.environment import asset_file
from hysem_assets.stores.tables import write_parquet
from hysem_assets_tests.acquisition.helpers import SAMPLE
from hysem_assets_tests.screening.test_asset import materialize_screening
from hysem_assets_tests.screening.works import corpus

#: Works whose full text is in hand (w04's parse failed: it has none).
PARSED = {"w00": "# Methods\n\nA random forest on PM2.5 and stroke.", "w01": "# Results\n\nNo association."}


@pytest.fixture
def stored() -> None:
    write_parquet(corpus(), asset_file("deduped_corpus", SAMPLE))
    parsed = pd.DataFrame(
        {
            "cluster_id": [*PARSED, "w04"],
            "markdown": [*PARSED.values(), None],
            "error": [None, None, "not a PDF"],
        }
    )
    write_parquet(parsed, asset_file("parsed_docs", SAMPLE))


def screen(*arguments: str):
    return CliRunner().invoke(main, ["screen", *arguments])


def decide(record: str, action: str, *more: str):
    return screen("decide", record, action, "--query", SAMPLE, *more)


def log_text() -> str:
    path = decisions_path(SAMPLE)
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_two_reviewers_conflict_and_a_resolution_settles_it_in_the_cli_and_the_asset(stored):
    for record, action in [("w00", "included"), ("w01", "included"), ("w02", "maybe"), ("w07", "excluded")]:
        made = decide(record, action, "--reviewer", "Ann", *(["--reason", "wrong exposure"] * (action == "excluded")))
        assert made.exit_code == 0, made.output
    for record, action in [("w00", "included"), ("w01", "excluded"), ("w02", "included"), ("w07", "excluded")]:
        made = decide(record, action, "--reviewer", "Bo", "--reason", "wrong outcome", "--note", "no CVD outcome")
        assert made.exit_code == 0, made.output
    listed = screen("conflicts", "--query", SAMPLE)
    assert listed.exit_code == 0
    [line] = [line for line in listed.output.splitlines() if line.startswith("w01")]
    assert "Ann: included; Bo: excluded (wrong outcome)" in line and "1 unresolved conflict(s)" in listed.output
    said = "Cohen's kappa 0.5 between Ann and Bo over the 4 records both decided, 1 of them in disagreement"
    assert said in listed.output

    table, metadata = materialize_screening()
    by_id = table.set_index("cluster_id")
    assert by_id.loc["w01", "decision"] == "undecided"  # the conflict counts as undecided
    assert by_id.loc["w02", "decision"] == "included" and by_id.loc["w02", "proceeds"]  # maybe + included agree
    assert by_id.loc["w07", ["decision", "reason"]].tolist() == ["excluded", "wrong outcome"]
    assert metadata["kappa_title_abstract"].value == 0.5 and metadata["kappa_title_abstract_records"].value == 4
    assert metadata["conflicts_title_abstract"].value == 1 and metadata["agreement_title_abstract"].value == said
    assert "kappa_fulltext" in metadata and "agreement_fulltext" not in metadata
    assert metadata["kappa_fulltext_records"].value == 0  # one reviewer (nobody) at full text: no kappa

    resolved = decide("w01", "excluded", "--reviewer", "Cy", "--reason", "wrong outcome", "--resolve")
    assert resolved.exit_code == 0 and "Cy resolved w01" in resolved.output
    assert "0 unresolved conflict(s)" in screen("conflicts", "--query", SAMPLE).output
    assert "Undid Cy's w01" in screen("undo", "--query", SAMPLE, "--reviewer", "Cy").output
    assert "1 unresolved conflict(s)" in screen("conflicts", "--query", SAMPLE).output  # the resolution taken back
    assert "Cy has no decision standing" in screen("undo", "--query", SAMPLE, "--reviewer", "Cy").output
    decide("w01", "excluded", "--reviewer", "Cy", "--reason", "wrong outcome", "--resolve")
    table, metadata = materialize_screening()
    assert table.set_index("cluster_id").loc["w01", "decision"] == "excluded"
    assert metadata["kappa_title_abstract"].value == 0.5  # a resolution is no reviewer's vote


def test_full_text_decisions_go_to_their_own_columns_and_need_the_full_text(stored, config: Path):
    protocol = config / "protocols" / "pollution-cardio-ml.yaml"
    spec = yaml.safe_load(protocol.read_text(encoding="utf-8"))
    spec["eligibility"]["fulltext_reasons"] = ["no extractable estimate", "duplicate cohort"]
    protocol.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    decide("w00", "included")
    decide("w01", "included")
    refused = decide("w01", "excluded", "--stage", FULLTEXT, "--reason", "wrong exposure")
    assert refused.exit_code == 1 and "no extractable estimate, duplicate cohort" in refused.output
    made = decide("w01", "excluded", "--stage", FULLTEXT, "--reason", "duplicate cohort")
    assert made.exit_code == 0, made.output
    table, metadata = materialize_screening()
    by_id = table.set_index("cluster_id")
    assert by_id.loc["w01", ["fulltext_decision", "fulltext_reason"]].tolist() == ["excluded", "duplicate cohort"]
    assert by_id.loc["w00", "fulltext_decision"] == "undecided" and by_id.loc["w01", "decision"] == "included"
    assert by_id.loc["w00", "included"] and not by_id.loc["w01", "included"]  # excluded at full text
    assert metadata["fulltext_excluded"].value == 1


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (("w99", "included"), f"record 'w99' is not a work of query '{SAMPLE}'"),
        (("w00", "included", "--reviewer", "Ann\x07"), "holds a control character"),
        (("w00", "included", "--reviewer", ""), "the reviewer's name is empty"),
        (("w04", "included", "--stage", FULLTEXT), "record 'w04' has no full text in hand"),
        (("w05", "excluded", "--stage", FULLTEXT, "--reason", "other"), "record 'w05' has no full text in hand"),
        (("w00", "maybe", "--stage", FULLTEXT), "decide 'included' or 'excluded', not 'maybe'"),
        (("w00", "excluded"), "exclude with one of the protocol's reasons"),
    ],
)
def test_bad_decisions_are_refused_in_one_line_and_nothing_is_written(stored, arguments, says):
    refused = decide(*arguments)
    assert refused.exit_code == 1 and says in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    assert log_text() == ""


def test_the_full_text_page_needs_parsed_full_texts():
    write_parquet(corpus(), asset_file("deduped_corpus", SAMPLE))
    refused = screen("--query", SAMPLE, "--stage", FULLTEXT, "--no-open")
    assert refused.exit_code == 1 and "--select parsed_docs" in refused.output
    assert screen("--query", SAMPLE, "--reviewer", "A\x00", "--no-open").exit_code == 1


def test_exports_and_imports_carry_reviewer_maybe_note_stage_and_resolution(stored, tmp_path: Path):
    decide("w00", "maybe", "--reviewer", "Ann", "--note", "dose–response unclear")
    decide("w00", "excluded", "--reviewer", "Bo", "--reason", "wrong outcome")
    decide("w00", "maybe", "--reviewer", "Cy", "--resolve")
    decide("w01", "included", "--reviewer", "Ann")
    decide("w01", "included", "--reviewer", "Ann", "--stage", FULLTEXT, "--note", "see table 3")
    before = DecisionLog(decisions_path(SAMPLE)).read()
    for name in ("out.csv", "out.ris"):
        for who in ("Ann", "Bo", None):
            for stage in ("title_abstract", FULLTEXT):
                path = tmp_path / f"{who}-{stage}-{name}"
                chosen = ["--reviewer", who] if who else []
                done = screen("export", str(path), "--query", SAMPLE, "--stage", stage, *chosen)
                assert done.exit_code == 0, done.output
    ann = pd.read_csv(tmp_path / "Ann-title_abstract-out.csv").set_index("record_id")
    assert ann.loc["w00", ["included", "decision", "note", "reviewer"]].tolist() == [
        1,
        "maybe",
        "dose–response unclear",
        "Ann",
    ]
    resolved = pd.read_csv(tmp_path / "None-title_abstract-out.csv").set_index("record_id")
    assert resolved.loc["w00", ["decision", "reviewer", "resolution"]].tolist() == ["maybe", "Cy", 1]

    decisions_path(SAMPLE).unlink()
    for name in ("out.csv", "out.ris"):
        if decisions_path(SAMPLE).exists():
            decisions_path(SAMPLE).unlink()
        for path in sorted(tmp_path.glob(f"*-{name}")):
            done = screen("import", str(path), "--query", SAMPLE)
            assert done.exit_code == 0, done.output
        after = DecisionLog(decisions_path(SAMPLE)).read()
        kept = ("record_id", "action", "reason", "reviewer", "stage", "note", "resolution")
        assert sorted(tuple(getattr(d, k) or "" for k in kept) for d in after) == sorted(
            tuple(getattr(d, k) or "" for k in kept) for d in before
        )
    again = screen("import", str(tmp_path / "None-title_abstract-out.csv"), "--query", SAMPLE)
    assert "Imported 0 new and 0 changed decision(s); 2 already so" in again.output  # the resolution too


def test_a_full_text_import_for_a_work_without_its_full_text_is_refused_whole(stored, tmp_path: Path):
    rows = pd.DataFrame({"record_id": ["w00", "w05"], "included": [1, 0], "exclusion_reason": ["", "other"]})
    rows.to_csv(tmp_path / "fulltext.csv", index=False)
    refused = screen("import", str(tmp_path / "fulltext.csv"), "--query", SAMPLE, "--stage", FULLTEXT)
    assert refused.exit_code == 1 and "(first: 'w05')" in refused.output and log_text() == ""
    named = rows.assign(reviewer=["Ann", "Bo\x1b"])
    named.to_csv(tmp_path / "named.csv", index=False)
    refused = screen("import", str(tmp_path / "named.csv"), "--query", SAMPLE)
    assert refused.exit_code == 1 and "row 3 (record_id w05)" in refused.output and log_text() == ""
