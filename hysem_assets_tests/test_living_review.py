"""A living review: weekly ticks of a query's schedule against successive replays of the sources.

Two snapshots are made from the bundled ``statins_dementia`` one: the first lacks three works
(their PubMed, OpenAlex and Scopus records); the second has them, added to PubMed and OpenAlex
on 2026-01-08, and OpenAlex now flags an older work as retracted. The schedule ticks on
Monday 2026-01-05 against the first and on 2026-01-12 against the second, each time through
the mirror on loopback and the whole query job, then once more a week later with nothing new.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
import yaml
from dagster import build_schedule_context

from hysem_assets.definitions import defs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.schedules import living_review_schedules, schedule_name
from hysem_assets.mirror.server import MirrorServer
from hysem_assets.review.updates import cited_works
from hysem_assets.runs.instance import get_instance
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.queries import load_queries
from hysem_assets_tests.paths import HYSEM, PROJECT_ROOT
from hysem_assets_tests.test_incremental import SLUG, counts, declare_query

SNAPSHOT = PROJECT_ROOT / "hysem_assets" / "snapshots" / "statins_dementia"
NEW_DOIS = {"10.5555/dce.2024.100318", "10.5555/ggr.2020.0733", "10.5555/fpc.2019.0702"}
RETRACTED_DOI = "10.5555/ggr.2019.0112"
ADDED_ON = dt.date(2026, 1, 8)
TICKS = (dt.date(2026, 1, 5), dt.date(2026, 1, 12), dt.date(2026, 1, 19))


def _doi(value: object) -> str:
    return str(value or "").lower().removeprefix("https://doi.org/")


def _pubmed_doi(article: ET.Element) -> str:
    return _doi(article.findtext("PubmedData/ArticleIdList/ArticleId[@IdType='doi']"))


def replay_snapshots(folder: Path) -> tuple[Path, Path]:
    """The sources before and after three works were added and one was retracted."""
    before, after = folder / "before", folder / "after"
    for target in (before, after):
        shutil.copytree(SNAPSHOT, target)
    tree = ET.parse(SNAPSHOT / "pubmed" / "efetch.xml")
    for article in tree.getroot():
        if _pubmed_doi(article) in NEW_DOIS:
            for status in ("entrez", "pubmed"):
                day = article.find(f"PubmedData/History/PubMedPubDate[@PubStatus='{status}']")
                for part, value in zip(("Year", "Month", "Day"), (ADDED_ON.year, ADDED_ON.month, ADDED_ON.day)):
                    day.find(part).text = str(value)
    tree.write(after / "pubmed" / "efetch.xml", encoding="unicode")
    for article in [a for a in tree.getroot() if _pubmed_doi(a) in NEW_DOIS]:
        tree.getroot().remove(article)
    tree.write(before / "pubmed" / "efetch.xml", encoding="unicode")

    works = json.loads((SNAPSHOT / "openalex" / "works.json").read_text(encoding="utf-8"))
    for work in works:
        if _doi(work["doi"]) in NEW_DOIS:
            work["created_date"] = ADDED_ON.isoformat()
    old = [work for work in works if _doi(work["doi"]) not in NEW_DOIS]
    (before / "openalex" / "works.json").write_text(json.dumps(old), encoding="utf-8")
    for work in works:
        if _doi(work["doi"]) == RETRACTED_DOI:
            work["is_retracted"] = True
    (after / "openalex" / "works.json").write_text(json.dumps(works), encoding="utf-8")

    entries = json.loads((SNAPSHOT / "scopus" / "entries.json").read_text(encoding="utf-8"))
    kept = [entry for entry in entries if _doi(entry.get("prism:doi")) not in NEW_DOIS]
    assert len(kept) < len(entries)
    (before / "scopus" / "entries.json").write_text(json.dumps(kept), encoding="utf-8")
    return before, after


def table(asset: str) -> pd.DataFrame:
    return pd.read_parquet(asset_file(asset, SLUG))


def test_weekly_ticks_list_exactly_the_new_works_and_the_changed_answers(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = replay_snapshots(tmp_path)
    monkeypatch.setenv("SCOPUS_API_KEY", "replay-key")  # the mirror takes any key
    declare_query(config, max_records=None)
    queries = config / "queries.yaml"
    document = yaml.safe_load(queries.read_text(encoding="utf-8"))
    next(q for q in document["queries"] if q["slug"] == SLUG)["schedule"] = "weekly"
    queries.write_text(yaml.safe_dump(document), encoding="utf-8")
    [schedule] = [s for s in living_review_schedules(load_queries()) if s.name == schedule_name(SLUG)]
    assert schedule.cron_schedule == "0 6 * * 1"
    job = defs.resolve_job_def("query_job")

    # The instance `hysem` itself opens, so its status and report commands read what the ticks made.
    with get_instance() as instance:
        context = build_schedule_context(instance=instance, scheduled_execution_time=dt.datetime(2026, 1, 5, 6))
        assert "no partition yet" in str(schedule.evaluate_tick(context).skip_message)
        instance.add_dynamic_partitions(queries_partitions.name, [SLUG])

        def tick(day: dt.date, snapshot: Path) -> dict[str, dict]:
            with MirrorServer(snapshot) as mirror:
                for source, url in mirror.base_urls.items():
                    monkeypatch.setenv(f"HYSEM_{source.upper()}_URL", url)
                moment = dt.datetime.combine(day, dt.time(6), tzinfo=dt.UTC)
                [request] = schedule.evaluate_tick(
                    build_schedule_context(
                        instance=instance, scheduled_execution_time=moment, repository_def=defs.get_repository_def()
                    )
                ).run_requests
                result = job.execute_in_process(
                    instance=instance, partition_key=request.partition_key, run_config=request.run_config
                )
            assert result.success
            return {
                event.asset_key.to_user_string(): {k: v.value for k, v in event.materialization.metadata.items()}
                for event in result.get_asset_materialization_events()
            }

        first = tick(TICKS[0], before)
        corpus = table("deduped_corpus")
        assert not set(corpus["doi"].dropna().str.lower()) & NEW_DOIS
        answers_before = table("answers")
        assert first["raw_metadata/pubmed"]["search"] == "every record"
        [baseline] = table("updates").to_dict("records")
        assert baseline["new_works"] == len(corpus) and baseline["dropped"] == 0

        second = tick(TICKS[1], after)
        assert second["raw_metadata/pubmed"]["search"] == "records added 2026-01-05 to 2026-01-12"
        assert second["raw_metadata/pubmed"]["records_found"] == second["raw_metadata/pubmed"]["records_new"] > 0
        assert second["raw_metadata/openalex"]["records_found"] == len(NEW_DOIS)
        update = table("updates").iloc[-1]
        assert {w["doi"].lower() for w in json.loads(update["new_works_json"])} == NEW_DOIS
        assert [w["doi"].lower() for w in json.loads(update["retracted_json"])] == [RETRACTED_DOI]
        assert update["dropped"] == 0 and update["searched_through"] == "2026-01-12"

        # Exactly the answers whose text or cited works differ between the two answer tables.
        answers_after = table("answers")
        expected = {
            question
            for question, text, details, old_text, old_details in zip(
                answers_after["question"],
                answers_after["markdown"],
                answers_after["json"],
                answers_before["markdown"],
                answers_before["json"],
                strict=True,
            )
            if text != old_text or cited_works(details) != cited_works(old_details)
        }
        changed = json.loads(update["changed_answers_json"])
        assert expected and {c["question"] for c in changed} == expected
        assert all(c["diff"].startswith("--- previous") or c["cited_added"] or c["cited_removed"] for c in changed)
        flow = {row["box"]: row["count"] for row in json.loads(update["flow_json"])}
        assert flow["previous"] == baseline["included_total"] and flow["screened"] == len(NEW_DOIS)
        assert flow["total"] == flow["previous"] - flow["withdrawn"] + flow["included_earlier"] + flow["included_new"]
        assert flow["withdrawn"] >= 0 and update["included_total"] == flow["total"]

        # Downstream, only the new works were computed.
        for asset in ("extracted_fields", "knowledge_graph"):
            found = counts(second[asset])
            assert found.new == len(NEW_DOIS) and found.dropped == 0, asset
        extracted = counts(second["extracted_fields"])
        assert extracted.processed <= extracted.new + extracted.changed and extracted.changed <= 1
        assert counts(second["parsed_docs"]).processed == 1  # the one new work with an open-access PDF

        # A week with nothing new: no new work, no changed answer, nothing recomputed.
        third = tick(TICKS[2], after)
        last = table("updates").iloc[-1]
        assert (last["update"], last["new_works"], last["retracted"], last["changed_answers"]) == (3, 0, 0, 0)
        assert counts(third["extracted_fields"]).processed == 0
        assert table("updates")["state_json"].notna().tolist() == [False, False, True]  # only the latest is kept

    # `hysem status` names the last update; `hysem report` says what changed.
    status = subprocess.run([HYSEM, "status", "--query", SLUG], capture_output=True, text=True, check=True).stdout
    assert f"{SLUG}: last update 3 (searched through 2026-01-19): 0 new works" in status
    report = tmp_path / "report.md"
    subprocess.run([HYSEM, "report", "--query", SLUG, "-o", str(report)], capture_output=True, check=True)
    changes = report.read_text(encoding="utf-8").split("## What changed", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"\|\s*2\s*\|\s*2026-01-12\s*\|\s*3\s*\|\s*1\s*\|", changes) and "### Update 3" in changes
