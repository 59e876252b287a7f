"""The whole graph on the sample, as `hysem demo` runs it: each stage's contract on real output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import yaml
from dagster import AssetSelection, DagsterInstance, materialize

from hysem_assets.definitions import defs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.fulltext.attach import attach_file
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.qa.ask import ask
from hysem_assets.settings.environment import asset_file, hysem_home
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets_tests.acquisition.helpers import SAMPLE
from hysem_assets_tests.aggregations import (
    NOTICE_TYPES,
    canonical_terms_of,
    counted_works,
    per_year,
    per_year_in,
    ranking,
    summary,
    summary_in,
)
from hysem_assets_tests.paths import PROJECT_ROOT

#: A study the sample finds no open-access copy of.
CLOSED = "10.5555/jec.2019.0312"
TRUTH = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))
#: Works whose abstract (hysem_assets/sample/articles.yaml) states a sample of more than 10,000, as written
#: there: admissions, deaths, arrests and discharges counted as the analysed events, people otherwise. Not
#: among them: 9,212 census tracts (not people), 1.9 million ECG segments of 412 patients, 6,214 episodes
#: of 1,047 patients (and "10,000 particles/cm3"), 1,482 records screened by a review.
ABOVE_TEN_THOUSAND = {
    "10.5555/jec.2019.0312": "48,213", "10.5555/ijesc.2020.0045": "21,406", "10.5555/ahi.2021.0419": "18,930",
    "10.5555/jec.2020.0508": "61,540", "10.5555/pcph.2022.0611": "2.3 million", "10.9999/rsac.2018.22.2.95": "16,244",
    "10.9999/zhxz.2020.07.006": "12,436", "10.5555/jec.2017.0305": "96,311", "10.5555/hrl.2022.0103": "287,502",
    "10.5555/sci.2024.0104": "612,488", "10.5555/cds.2021.0309": "1.1 million", "10.5555/ahi.2019.0203": "24,710",
    "10.5555/pcph.2024.0812": "142,990", "10.5555/aqsr.2021.100087": "14 million",
    "10.9999/hrx.2021.08.19.21262211": "2.1 million", "10.9999/eer.2020.098": "21,840",
    "10.5555/jmlh.2022.0407": "58,112", "10.5555/jmlh.2025.0209": "3.4 million",
}  # fmt: skip


def metadata_of(result, key: str) -> dict:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == key]
    return {name: value.value for name, value in event.materialization.metadata.items()}


def test_whole_graph_on_the_sample():
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        partitioned = [a for a in defs.assets if a.partitions_def is not None]
        result = materialize(partitioned, instance=instance, resources=defs.resources, partition_key=SAMPLE)
    assert result.success
    corpus = pd.read_parquet(asset_file("deduped_corpus", SAMPLE))
    saved = pd.read_parquet(asset_file("pdfs", SAMPLE)).query("status == 'saved'")

    # screening: nobody has screened; the criteria rank every work and the local profile lets all through.
    screening = pd.read_parquet(asset_file("screening", SAMPLE))
    assert sorted(screening["cluster_id"]) == sorted(corpus["cluster_id"]) and screening["proceeds"].all()
    assert (screening["decision"] == "undecided").all() and sorted(screening["rank"]) == list(range(1, len(corpus) + 1))

    # parsed_docs: every generated PDF parses; margin line numbers are gone; tables are Markdown tables.
    parsed = pd.read_parquet(asset_file("parsed_docs", SAMPLE))
    assert sorted(parsed["cluster_id"]) == sorted(saved["cluster_id"]) and parsed["error"].isna().all()
    assert set(parsed["status"]) == {"native"} and (parsed["ocr_pages"] == 0).all()
    for markdown in parsed["markdown"]:
        assert re.search(r"^#+ .*Methods", markdown, re.MULTILINE)
        assert re.search(r"^\|.*\|\s*$\n^\|\s*-+", markdown, re.MULTILINE), "no Markdown table"
        assert not re.search(r"^\d{1,3}$", markdown, re.MULTILINE), "a bare line number survived"
    assert (parsed["token_count"] > 0).all() and parsed["tokenizer"].str.len().gt(0).all()

    # extracted_fields: a row for every work, token counts zero with the extractive backend.
    extracted = pd.read_parquet(asset_file("extracted_fields", SAMPLE))
    assert sorted(extracted["cluster_id"]) == sorted(corpus["cluster_id"])
    assert set(extracted.loc[extracted["cluster_id"].isin(parsed["cluster_id"]), "text_source"]) == {"full_text"}
    usage = metadata_of(result, "extracted_fields")
    assert usage["prompt_tokens"] == 0 and usage["completion_tokens"] == 0
    methods = extracted["ml_methods_used"].map(json.loads).explode().dropna()
    assert {"random forest", "long short-term memory network"} <= set(methods)

    # topics: the chosen model's coherence is reported with the grid; every work has a mixture.
    topics = metadata_of(result, "topics")
    topics_table = pd.read_parquet(asset_file("topics", SAMPLE))
    assert topics["n_topics"] >= 2 and 0 < topics["coherence_c_v"] <= 1
    assert "coherence" in topics["grid"] and topics["intertopic_map"].startswith("![")
    assert (hysem_home() / "topics" / SAMPLE / "topics.html").is_file()

    # canonical_terms: every extracted list term is mapped or listed as unmatched.
    mapping = pd.read_parquet(asset_file("canonical_terms", SAMPLE))
    mapped = set(zip(mapping["field"], mapping["raw_term"]))
    assert ("ml_methods_used", "random forest") in mapped
    assert mapping.loc[mapping["method"] != "unmatched", "canonical"].notna().all()

    # knowledge: chunks indexed without reference lists; the graph and the saved report loaded.
    chunks = pd.read_parquet(asset_file("vector_index", SAMPLE))
    assert set(parsed["cluster_id"]) <= set(chunks["cluster_id"])
    assert not chunks["section"].str.contains(r"References$").any()
    graph = metadata_of(result, "knowledge_graph")
    assert graph["nodes"] > len(corpus) and graph["relationships"] > 0
    report = pd.read_parquet(asset_file("reports/ml_methods_ozone_heart", SAMPLE))
    assert len(report) > 0

    # entities: the graph counts the works per method entity as the entities table does, within the window budget.
    mentions = pd.read_parquet(asset_file("entities", SAMPLE))
    assert set(mentions["cluster_id"]) <= set(screening.loc[screening["included"], "cluster_id"])
    methods = mentions[mentions["type"] == "Method"].groupby("name")["cluster_id"].nunique()
    assert len(methods) > 0 and metadata_of(result, "entities")["truncated_docs"] == 0
    store = LadybugGraphStore(hysem_home() / "graph" / "kg.lbug")
    try:
        in_graph = store.query(
            "MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article)-[r:HAS_ENTITY]->(e:Entity {type: 'Method'}) "
            "WHERE r.query = $query RETURN e.name AS name, count(DISTINCT a) AS works",
            {"query": SAMPLE},
        )
    finally:
        store.close()
    assert dict(zip(in_graph["name"], in_graph["works"], strict=True)) == methods.to_dict()

    # qa: the configured questions answered with no unresolvable citation; a preference pair logged.
    answers = pd.read_parquet(asset_file("answers", SAMPLE))
    questions = yaml.safe_load((PROJECT_ROOT / "config" / "questions.yaml").read_text())["questions"][SAMPLE]
    assert list(answers["question"]) == questions
    assert answers["unresolved_citations"].sum() == 0 and answers["evidence_found"].all()
    # methods are entities of the graph: "ozone and heart disease" narrows the works through the protocol's terms,
    # and each method's count is the works its claim cites, every one of which mentions it in the entities table
    assert answers["route"].iloc[0] == "entities"
    methods_of = mentions[mentions["type"] == "Method"].groupby("cluster_id")["name"].agg(set)
    counted = [
        (m, {c["PDF_DocIndex"] for c in claim["citations"]})
        for claim in json.loads(answers["json"].iloc[0])["claims"]
        if (m := re.fullmatch(r"(.+): (\d+) articles?\.", claim["text"]))
    ]
    assert counted and all(int(m[2]) == len(works) for m, works in counted)
    assert all(m[1] in methods_of[work] for m, works in counted for work in works)
    citable = set(pd.read_parquet(asset_file("library", SAMPLE))["in_text_citation"])
    for record in answers["json"].map(json.loads):
        for claim in record["claims"]:
            assert claim["citations"] and all(c["InTextCitation"] in citable for c in claim["citations"])
    by_question = {question: json.loads(details) for question, details in zip(answers["question"], answers["json"])}
    routes = dict(zip(answers["question"], answers["route"], strict=True))

    # global: the themes answer, from the summary tree, cites works of at least three topics.
    themes = by_question["What are the main research themes in this literature?"]
    topic_of = dict(zip(topics_table["cluster_id"], topics_table["dominant_topic"], strict=True))
    cited = {c["PDF_DocIndex"] for claim in themes["claims"] for c in claim["citations"]}
    assert routes["What are the main research themes in this literature?"] == "global"
    assert len({topic_of[c] for c in cited}) >= 3 and len(themes["global"]["themes"]) >= 3
    tree = pd.read_parquet(asset_file("summary_tree", SAMPLE))
    assert (tree["level"] == "corpus").sum() == 1 and 3 <= (tree["level"] == "topic").sum() <= topics["n_topics"]

    # numeric: exactly the works whose stated sample size exceeds 10,000, each with the sentence stating it.
    sizes = by_question["Which studies had a sample size above 10,000 participants?"]
    assert routes["Which studies had a sample size above 10,000 participants?"] == "numeric"
    rows = {row["article"]: row for row in sizes["numeric"]["rows"]}
    assert set(rows) == set(ABOVE_TEN_THOUSAND)
    assert all(written in rows[doi]["evidence"] for doi, written in ABOVE_TEN_THOUSAND.items())
    assert {c["DOI"] for c in sizes["claims"][0]["citations"]} == set(ABOVE_TEN_THOUSAND)

    # ranking: each method entity with its works, counted independently from the entities table (retracted works
    # left out), and a chart shown in the answers' metadata.
    ranking_question = "Which machine learning methods are most often used?"
    assert routes[ranking_question] == "entities"
    counted = counted_works(corpus)
    expected = ranking(methods_of.to_dict(), counted)
    claimed = [
        re.fullmatch(r"(.+): (\d+) of (\d+) works \([\d.]+%\)\.", c["text"])
        for c in by_question[ranking_question]["claims"][1:]
    ]
    assert {m[1]: int(m[2]) for m in claimed} == expected
    # a rephrasing the sample's questions do not hold, asked as `hysem ask` asks it: the same counts
    rephrased, _ = ask(SAMPLE, "Which algorithms do these papers rely on most frequently?", use_cache=False)
    assert rephrased["route"] == "entities"
    lines = [
        re.fullmatch(r"(.+): (\d+) of (\d+) works \([\d.]+%\)\.", c["text"]) for c in rephrased["json"]["claims"][1:]
    ]
    assert {m[1]: int(m[2]) for m in lines} == expected
    erratum = corpus.loc[corpus["item_type"].eq("erratum"), "cluster_id"].tolist()  # and the retraction notice
    cited = {c["PDF_DocIndex"] for claim in by_question[ranking_question]["claims"] for c in claim["citations"]}
    assert len(erratum) == 1 and not cited & set(erratum)  # the sample's erratum counts with its paper only
    ranked = answers.set_index("question").loc[ranking_question, "markdown"]  # and its paper names it
    assert "a published correction: " in ranked and "https://doi.org/10.5555/jec.2019.0498" in ranked
    assert Path(answers.set_index("question").loc[ranking_question, "chart"]).is_file()
    assert "![chart](data:image/png;base64," in metadata_of(result, "answers")["charts"]

    # statistics: the median sample size, IQR, range and mean, from extracted_fields' own values.
    question = "What is the median sample size of the studies?"
    assert routes[question] == "statistics"
    stated = extracted.loc[extracted["cluster_id"].isin(counted), "sample_size"].dropna().astype(float)
    claims = [claim["text"] for claim in by_question[question]["claims"]]
    assert claims[0].startswith(f"{len(stated)} of {len(counted)} included studies state a sample size")
    assert summary_in(claims[0], "participants") == summary(stated.tolist())

    # trend: works using random forest per year, against all included works of that year.
    question = "How has the use of random forest changed over time?"
    assert routes[question] == "trend"
    years = dict(zip(corpus["cluster_id"], corpus["year"].astype(int), strict=True))
    method_terms = canonical_terms_of(extracted, mapping, "ml_methods_used")
    using = [cluster for cluster, found in method_terms.items() if "random forest" in found]
    assert per_year_in(c["text"] for c in by_question[question]["claims"]) == per_year(years, using, counted)
    assert Path(answers.set_index("question").loc[question, "chart"]).is_file()

    log = pd.read_parquet(asset_file("preference_log", SAMPLE))
    assert len(log) >= 1 and (log["chosen"] != log["rejected"]).all()

    # review: the PRISMA flow equals the upstream tables, derived here without the flow's code.
    flow = dict(zip(*pd.read_parquet(asset_file("prisma_flow", SAMPLE))[["box", "count"]].to_numpy().T))
    raw = {s: len(pd.read_parquet(asset_file(f"raw_metadata/{s}", SAMPLE))) for s in ("pubmed", "openalex", "scopus")}
    retracted = corpus["is_retracted"].fillna(False).astype(bool)
    notices = corpus["item_type"].fillna("").isin(NOTICE_TYPES)  # counted with their papers
    pdfs = pd.read_parquet(asset_file("pdfs", SAMPLE))
    sought = pdfs[pdfs["cluster_id"].isin(corpus.loc[~retracted & ~notices, "cluster_id"])]
    readable = parsed[parsed["error"].isna() & parsed["cluster_id"].isin(sought["cluster_id"])]
    assert flow["identified"] == sum(raw.values()) and flow["identified:scopus"] == raw["scopus"]
    assert flow["duplicates_removed"] == sum(raw.values()) - len(corpus) and flow["screened"] == len(corpus)
    assert flow["automation_excluded"] == 0 and flow["screened:ranking"] == len(corpus)
    assert flow["excluded"] == retracted.sum() + notices.sum() == 3
    assert flow["excluded:retracted"] == 1 and flow["excluded:erratum (counted with the work it corrects)"] == 1
    assert flow["excluded:retraction notice (counted with the work it retracts)"] == 1
    missing = sought.loc[sought["status"] != "saved", "status"].value_counts()
    assert flow["sought"] == len(sought) and flow["not_retrieved"] == missing.sum()
    assert {box: count for box, count in flow.items() if box.startswith("not_retrieved:")} == {
        f"not_retrieved:{status}": count for status, count in missing.items()
    }
    assert flow["included"] == len(counted) and flow["included_reports"] == len(readable)  # the rest: abstracts
    assert [e.passed for e in result.get_asset_check_evaluations() if e.check_name == "flow_counts_reconcile"] == [True]
    evidence = pd.read_parquet(asset_file("evidence_table", SAMPLE))
    assert sorted(evidence["cluster_id"]) == sorted(counted)
    assert {"ml_methods_used", "citation", "topic"} <= set(evidence.columns)

    # a reviewer attaches a PDF to a study the sample finds no open-access copy of: it is parsed, extracted
    # and counted as a retrieved report, and the evidence table reads it from its full text, not its abstract.
    closed = corpus.loc[corpus["doi"].eq(CLOSED), "cluster_id"].item()
    assert evidence.set_index("cluster_id").loc[closed, "text_source"] == "abstract"
    attach_file(SAMPLE, CLOSED, default_snapshot_dir() / "files" / "10.5555_aqsr.2019.100031.pdf")
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        chosen = AssetSelection.assets("pdfs", "parsed_docs", "extracted_fields", "prisma_flow", "evidence_table")
        again = materialize(partitioned, selection=chosen, instance=instance, resources=defs.resources,
                            partition_key=SAMPLE)  # fmt: skip
    assert again.success
    after = dict(zip(*pd.read_parquet(asset_file("prisma_flow", SAMPLE))[["box", "count"]].to_numpy().T))
    assert after["not_retrieved"] == flow["not_retrieved"] - 1 and after["included"] == flow["included"]
    assert after["included_reports"] == flow["included_reports"] + 1
    assert closed in set(pd.read_parquet(asset_file("parsed_docs", SAMPLE))["cluster_id"])
    evidence = pd.read_parquet(asset_file("evidence_table", SAMPLE)).set_index("cluster_id")
    assert evidence.loc[closed, "text_source"] == "full_text"
