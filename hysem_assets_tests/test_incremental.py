"""Re-materializing a partition redoes only what changed, and its metadata says how much.

The pipeline test runs the second bundled snapshot's query (``statins_dementia``, 22 works,
3 PDFs) from the sources to the graph four times: capped at four records per source, the
same again, uncapped (new records arrive), and with a smaller vector-index chunk size. On the
whole partition, aggregation answers (a distribution of designs, a ranking of outcomes, sample
sizes by design, cohort studies by year) are checked against counts made from its tables. The
cache's own rules are checked without Dagster.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml
from dagster import DagsterInstance, materialize

from hysem_assets.definitions import defs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import ChunkStore
from hysem_assets.findings.schema import DIRECTIONS, NO_DIFFERENCE
from hysem_assets.knowledge.build import article_digests
from hysem_assets.qa.ask import ask
from hysem_assets.qa.synthesis import FOUND
from hysem_assets.review.report import render_markdown, stored_report
from hysem_assets.screening.decisions import Decision, DecisionLog, decisions_path
from hysem_assets.settings.environment import asset_file
from hysem_assets.sources.registry import record_sources
from hysem_assets.stores.work_cache import WorkCache, WorkChanges, compare, work_id
from hysem_assets_tests.aggregations import (
    canonical_terms_of,
    counted_works,
    per_year,
    per_year_in,
    ranking,
    summary,
    summary_in,
)
from hysem_assets_tests.knowledge.partition import ARTICLES, partition
from hysem_assets_tests.paths import PROJECT_ROOT

SLUG = "statins-dementia"
HARVEST = PROJECT_ROOT / "hysem_assets" / "snapshots" / "statins_dementia" / "harvest.yaml"
#: The assets up to the vector index, then those the graph adds.
INDEXED = (
    *(f"raw_metadata/{source}" for source in record_sources()),
    "deduped_corpus",
    "screening",
    "pdfs",
    "library",
    "parsed_docs",
    "extracted_fields",
    "vector_index",
)
ASSETS = (*INDEXED, "topics", "canonical_terms", "findings", "entities", "knowledge_graph")
PER_WORK = ("parsed_docs", "extracted_fields")


def declare_query(config: Path, max_records: int | None) -> None:
    """The snapshot's recommended search as a query of the test's config, with a cap per source or none."""
    path = config / "queries.yaml"
    queries = [q for q in yaml.safe_load(path.read_text(encoding="utf-8"))["queries"] if q["slug"] != SLUG]
    query = {
        "slug": SLUG,
        "title": "Statins and dementia",
        "query": yaml.safe_load(HARVEST.read_text(encoding="utf-8")),
        "sources": ["pubmed", "openalex", "scopus"],
        "mailto": "hysem@example.org",
        "protocol": "generic",
    }
    if max_records is not None:
        query["max_records"] = max_records
    path.write_text(yaml.safe_dump({"queries": [*queries, query]}), encoding="utf-8")


def works(asset: str) -> set[str]:
    table = pd.read_parquet(asset_file(asset, SLUG))
    return {work_id(doi, cluster) for doi, cluster in zip(table["doi"], table["cluster_id"])}


def table(asset: str) -> pd.DataFrame:
    return pd.read_parquet(asset_file(asset, SLUG))


def counts(metadata: dict) -> WorkChanges:
    return WorkChanges(**{name: metadata[f"works_{name}"] for name in WorkChanges.__dataclass_fields__})


def test_a_re_run_redoes_only_new_works_and_a_chunk_size_only_the_vector_index(config: Path) -> None:
    selected = {key.to_user_string(): a for a in defs.assets if a.partitions_def is not None for key in a.keys}

    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SLUG])

        def run(names: tuple[str, ...] = ASSETS, resources: dict = defs.resources) -> dict[str, dict]:
            chosen = list({id(selected[name]): selected[name] for name in names}.values())
            result = materialize(chosen, instance=instance, resources=resources, partition_key=SLUG)
            assert result.success
            return {
                event.asset_key.to_user_string(): {k: v.value for k, v in event.materialization.metadata.items()}
                for event in result.get_asset_materialization_events()
            }

        declare_query(config, max_records=4)
        first = run()
        parsed, extracted, corpus = table("parsed_docs"), table("extracted_fields"), works("deduped_corpus")
        assert len(parsed) == 3 and parsed["error"].isna().all() and len(corpus) < 22
        for asset in PER_WORK:
            rows = first[asset]["dagster/row_count"]
            assert counts(first[asset]) == WorkChanges(new=rows, processed=rows), asset

        # The same records again: nothing is parsed or extracted, and the tables are the same to the
        # parse times they recorded, which a second parse could not reproduce.
        again = run()
        for asset in PER_WORK:
            rows = again[asset]["dagster/row_count"]
            assert counts(again[asset]) == WorkChanges(unchanged=rows, reused=rows), asset
        pd.testing.assert_frame_equal(table("parsed_docs"), parsed)
        pd.testing.assert_frame_equal(table("extracted_fields"), extracted)
        saved = int((table("pdfs")["status"] == "saved").sum())
        assert counts(again["pdfs"]) == WorkChanges(unchanged=len(corpus), reused=saved, processed=len(corpus) - saved)
        assert counts(again["knowledge_graph"]) == WorkChanges(unchanged=len(corpus), processed=len(corpus))
        tagged = counts(again["entities"])  # the entity model reads no work twice
        assert tagged.processed == 0 and tagged.reused == tagged.unchanged > 0

        # New records arrive: the works they add are new, and only new or changed works are computed.
        declare_query(config, max_records=None)
        grown = run()
        now = works("deduped_corpus")
        assert len(now) == 22 and now - corpus
        for asset in ("pdfs", "extracted_fields", "knowledge_graph"):
            found = counts(grown[asset])
            assert (found.new, found.dropped) == (len(now - corpus), len(corpus - now)), asset
            assert found.new + found.changed + found.unchanged == len(now), asset
        found = counts(grown["extracted_fields"])
        assert found.processed <= found.new + found.changed and found.reused >= found.unchanged > 0
        assert counts(grown["parsed_docs"]) == WorkChanges(unchanged=3, reused=3)
        answers_equal_the_extracted_fields()
        synthesis_shows_the_null_results()

        # A reviewer excludes three works: every view counts the same smaller included set.
        excluded = works_to_exclude()
        DecisionLog(decisions_path(SLUG)).append([Decision(c, "excluded", reason="other") for c in excluded])
        run((*ASSETS, "prisma_flow", "evidence_table"))
        answers_equal_the_extracted_fields(excluded)
        every_view_counts_the_included_set(excluded)

        # A smaller chunk size: parsing and extraction reuse everything, the vector index re-embeds.
        chunking = defs.resources["chunk_store"].settings.model_copy(update={"max_tokens": 120})
        smaller = run(INDEXED, {**defs.resources, "chunk_store": ChunkStore(settings=chunking)})
        for asset in PER_WORK:
            rows = smaller[asset]["dagster/row_count"]
            assert counts(smaller[asset]) == WorkChanges(unchanged=rows, reused=rows), asset
        assert smaller["vector_index"]["embedded"] > 0


def works_to_exclude() -> set[str]:
    """Three works that state a design (so that the rankings and statistics change), none of the synthesis's."""
    corpus, extracted = table("deduped_corpus"), table("extracted_fields")
    kept = {c for c, doi in zip(corpus["cluster_id"], corpus["doi"]) if doi not in (META_ANALYSIS, NULL_TRIAL)}
    designed = extracted.loc[extracted["study_design"].notna(), "cluster_id"]
    return set(sorted(set(designed) & counted_works(corpus) & kept)[:3])


def answers_equal_the_extracted_fields(excluded: set[str] = frozenset()) -> None:
    """Aggregation answers on this subject (generic protocol) against counts made here from its tables: over the
    works neither retracted nor a notice, less those the reviewer ``excluded``."""
    corpus, extracted = table("deduped_corpus"), table("extracted_fields")
    counted = counted_works(corpus) - excluded
    rows = extracted[extracted["cluster_id"].isin(counted)]

    def claims(question: str, route: str) -> list[str]:
        answer, _ = ask(SLUG, question, use_cache=False)
        assert answer["route"] == route, (question, answer["route_reason"])
        return [claim["text"] for claim in answer["json"]["claims"]]

    designs = rows["study_design"].dropna()
    ranked = claims("What is the distribution of study designs?", "ranking")
    assert ranked[0].startswith(f"{len(designs)} of {len(counted)} included studies report study design")
    assert ranked_counts(ranked[1:]) == dict(Counter(designs))

    outcomes = canonical_terms_of(extracted, table("canonical_terms"), "outcomes")
    assert ranked_counts(claims("Which outcomes are most often measured?", "ranking")[1:]) == ranking(outcomes, counted)
    top = max(ranking(outcomes, counted).items(), key=lambda item: (item[1], item[0]))
    [matched] = claims(f"How many studies measured {top[0]}?", "counting")[:1]
    assert matched.startswith(f"{top[1]} of {len(counted)} included studies match"), matched
    everything = claims(f"How many studies measured {top[0]} across all records found?", "counting")[0]
    assert everything.startswith(f"{ranking(outcomes, counted_works(corpus))[top[0]]} of "
                                 f"{len(counted_works(corpus))} records found match"), everything  # fmt: skip

    sized = rows[rows["sample_size"].notna() & rows["study_design"].notna()]
    stated = claims("What is the median sample size by study design?", "statistics")
    assert summary_in(stated[0], "participants") == summary(sized["sample_size"].astype(float).tolist())
    for design, sizes in sized.groupby("study_design")["sample_size"]:
        [line] = [text for text in stated[1:] if text.startswith(f"{design}: ")]
        assert line.startswith(f"{design}: {len(sizes)} work")

    years = dict(zip(corpus["cluster_id"], corpus["year"].astype(int), strict=True))
    cohorts = rows.loc[rows["study_design"].eq("cohort study"), "cluster_id"]
    trend = claims("How has the number of cohort studies changed over time?", "trend")
    assert per_year_in(trend) == per_year(years, cohorts, counted)


#: The meta-analysis of trials (RR 1.02) and the trial whose atorvastatin did not slow progression to dementia.
META_ANALYSIS, NULL_TRIAL = "10.5555/cvn.2017.0201", "10.5555/bcm.2022.0114"
FOUND_WORDS = {words: direction for direction, words in FOUND.items()}
_VERDICT_PART = re.compile(
    r"(\d+|none) (?:stud(?:y|ies) found )?(a significant decrease|no significant difference|a significant increase)"
)


def synthesis_shows_the_null_results() -> None:
    """ "Do statins reduce the risk of dementia?": the meta-analysis and the null trial are shown as no significant
    difference, the meta-analysis apart from the studies, and the verdict's counts are the table's."""
    corpus = table("deduped_corpus")
    cluster = dict(zip(corpus["doi"].str.lower(), corpus["cluster_id"], strict=True))
    answer, _ = ask(SLUG, "Do statins reduce the risk of dementia?", use_cache=False)
    assert answer["route"] == "synthesis", answer["route_reason"]
    synthesis = answer["json"]["synthesis"]
    lines = {(group["group"], line["cluster_id"]): line for group in synthesis["groups"] for line in group["lines"]}
    assert lines[("review", cluster[META_ANALYSIS])]["direction"] == NO_DIFFERENCE
    assert ("review", cluster[NULL_TRIAL]) not in lines
    assert lines[(NO_DIFFERENCE, cluster[NULL_TRIAL])]["study_kind"] == "primary"
    counted = {group["group"]: len({line["cluster_id"] for line in group["lines"]}) for group in synthesis["groups"]}
    assert all(group["studies"] == counted[group["group"]] for group in synthesis["groups"])
    said = {
        FOUND_WORDS[found]: 0 if n == "none" else int(n) for n, found in _VERDICT_PART.findall(synthesis["verdict"])
    }
    assert said == {direction: counted.get(direction, 0) for direction in DIRECTIONS}


def every_view_counts_the_included_set(excluded: set[str]) -> None:
    """PRISMA, the evidence table and the report count the works neither retracted nor a notice nor ``excluded``."""
    counted = counted_works(table("deduped_corpus")) - excluded
    flow = dict(zip(table("prisma_flow")["box"], table("prisma_flow")["count"]))
    assert flow["included"] == len(counted) and flow["excluded:other"] == len(excluded)
    assert set(table("evidence_table")["cluster_id"]) == counted

    def stored(key: str) -> pd.DataFrame | None:
        return table(key) if asset_file(key, SLUG).is_file() else None

    markdown = render_markdown(stored_report(SLUG, "Statins and dementia", stored))
    assert f"{len(counted)} studies included" in markdown
    assert re.search(rf"\|\s*Studies included in review\s*\|\s*{len(counted)}\s*\|", markdown)


def ranked_counts(claims: list[str]) -> dict[str, int]:
    return {m[1]: int(m[2]) for text in claims if (m := re.fullmatch(r"(.+): (\d+) of \d+ works \([\d.]+%\)\.", text))}


def test_counts_compare_work_ids_and_their_keys() -> None:
    previous = {"a": "1", "b": "2", "c": "3"}
    changes = compare(previous, {"a": "1", "b": "20", "d": "4"}, reused=2)
    assert changes == WorkChanges(new=1, changed=1, unchanged=1, dropped=1, reused=2, processed=1)
    assert changes.as_metadata()["works_dropped"] == 1


def test_results_are_reused_by_key_and_unkept_ones_computed_again(tmp_path: Path) -> None:
    cache = WorkCache("step", tmp_path)
    computed: list[list[int]] = []

    def compute(positions: list[int]) -> list[dict]:
        computed.append(positions)
        return [{"value": p, "ok": p != 1} for p in positions]

    def keep(position: int, row: dict) -> str | None:
        return f"key-{position}" if row["ok"] else None

    candidates = [("key-0",), ("key-1",), ("key-2",)]
    first = cache.reuse_or_compute("query", ["w0", "w1", "w2"], candidates, compute, keep)
    second = cache.reuse_or_compute("query", ["w0", "w1", "w2"], candidates, compute, keep)
    assert computed == [[0, 1, 2], [1]] and first.rows == second.rows
    assert second.reused == [True, False, True]
    assert second.changes == WorkChanges(unchanged=3, reused=2, processed=1)

    (tmp_path / "step" / "ke" / "key-2.json").write_text("{not json", encoding="utf-8")
    third = cache.reuse_or_compute("query", ["w0", "w1", "w2"], candidates, compute, keep)
    assert computed[-1] == [1, 2] and third.rows == first.rows  # a damaged entry is computed again


def test_a_graph_digest_changes_with_its_own_rows_only() -> None:
    before = article_digests(partition())
    assert set(before) == {"10.1000/a1", "10.1000/a2", "c-3", "10.1000/a4", "10.1000/a5", "10.1000/a6"}
    edited = [dict(a, ml=["support vector machine"]) if a["cluster_id"] == "c-2" else a for a in ARTICLES]
    after = article_digests(partition(edited))
    assert {key for key in before if before[key] != after[key]} == {"10.1000/a2"}
    more_chunks = article_digests(partition(chunks_per_article=3))
    assert all(more_chunks[key] != before[key] for key in before)  # a work's chunks are its own rows


@pytest.mark.parametrize(("doi", "cluster"), [(" 10.1/AB ", "c-1"), (None, "c-2"), (float("nan"), "c-3")])
def test_a_work_is_its_doi_else_its_cluster(doi: object, cluster: str) -> None:
    assert work_id(doi, cluster) == ("10.1/ab" if isinstance(doi, str) else cluster)
