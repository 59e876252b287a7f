from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hysem_assets.knowledge.build import GraphInputError, article_digests, build_partition_graph, coerce, terms
from hysem_assets_tests.knowledge import findings_partition
from hysem_assets_tests.knowledge.partition import ARTICLES, QUERY, frames, partition, schema


def rows(graph, label):  # type: ignore[no-untyped-def]
    return {row["key"]: row["props"] for batch in graph.nodes if batch.label == label for row in batch.rows}


def pairs(graph, rel_type):  # type: ignore[no-untyped-def]
    return {(r["src"], r["dst"]) for b in graph.relationships if b.type == rel_type for r in b.rows}


def test_articles_are_keyed_by_lower_case_doi_or_cluster_id() -> None:
    graph = partition()
    articles = rows(graph, "Article")
    assert set(articles) == {"10.1000/a1", "10.1000/a2", "c-3", "10.1000/a4", "10.1000/a5", "10.1000/a6"}
    assert articles["10.1000/a1"] == {
        "doi": "10.1000/A1", "cluster_id": "c-1", "title": "Study 1", "year": 2016, "journal": "Journal of Tests",
        "authors": ["Doe, Jane", "Roe, Richard"], "in_text_citation": "(Doe et al., 2016)",
        "full_citation": "Doe J, Roe R. Study 1. J Tests. 2016.", "zotero_key": "ZK000001", "dominant_topic": 1,
        "study_type": "cohort", "sample_size": None,
    }  # fmt: skip
    assert pairs(graph, "INCLUDES") == {(QUERY, key) for key in articles}
    assert rows(graph, "Query") == {QUERY: {"title": "Ozone and heart disease"}}


def test_fields_become_entities_links_and_chunk_mentions() -> None:
    graph = partition()
    assert set(rows(graph, "Pollutant")) == {"ozone", "PM2.5", "NO2"}
    assert ("10.1000/a1", "XGBoost") in pairs(graph, "USES_ML_METHOD")
    assert ("c-3", "long short-term memory network") in pairs(graph, "USES_ML_METHOD")
    assert ("c-1:1", "ozone") in pairs(graph, "MENTIONS")
    assert ("10.1000/a1", "c-1:0") in pairs(graph, "HAS_CHUNK")
    assert rows(graph, "Chunk")["c-1:1"] == {
        "cluster_id": "c-1", "chunk_index": 1, "section": "Methods",
        "text": "We model ozone exposure with random forest.",
    }  # fmt: skip


def test_missing_columns_arrays_and_nan_become_empty_values() -> None:
    data = frames(ARTICLES[:1])
    corpus = data["corpus"].drop(columns=["zotero_key"]).assign(year=np.nan, authors=[np.array(["A, B"])])
    fields = data["fields"].assign(ml_methods_used=[np.array(["svm", " svm ", "", None])], geography=[None])
    graph = build_partition_graph(schema(), QUERY, corpus=corpus, fields=fields)
    article = rows(graph, "Article")["10.1000/a1"]
    assert (article["zotero_key"], article["year"], article["authors"]) == (None, None, ["A, B"])
    assert set(rows(graph, "MLMethod")) == {"svm"}
    assert "Region" not in {b.label for b in graph.nodes} and "Chunk" not in {b.label for b in graph.nodes}


def test_bad_records_are_named() -> None:
    data = frames(ARTICLES[:2])
    with pytest.raises(GraphInputError, match=r"Article '10.1000/a1', property year: cannot store 'soon' as INT64"):
        build_partition_graph(schema(), QUERY, corpus=data["corpus"].assign(year=["soon", 2020]))
    with pytest.raises(GraphInputError, match="chunk 'c-1:0' refers to cluster 'c-1', which is not in the corpus"):
        build_partition_graph(schema(), QUERY, corpus=data["corpus"].iloc[1:], chunks=data["chunks"])
    with pytest.raises(GraphInputError, match="mentions field 'drugs'"):
        chunks = data["chunks"].assign(mentions=[{"drugs": ["aspirin"]}] * len(data["chunks"]))
        build_partition_graph(schema(), QUERY, corpus=data["corpus"], chunks=chunks)
    with pytest.raises(GraphInputError, match="neither a DOI nor a cluster id"):
        build_partition_graph(schema(), QUERY, corpus=pd.DataFrame({"cluster_id": [None], "doi": [None]}))


def test_coercion_and_terms() -> None:
    assert coerce(np.int64(3), "INT64", "x") == 3 and type(coerce(np.int64(3), "INT64", "x")) is int
    assert coerce(2.0, "INT64", "x") == 2
    assert coerce(pd.NA, "STRING", "x") is None
    assert coerce(np.True_, "BOOLEAN", "x") is True
    with pytest.raises(GraphInputError, match="expected text"):
        coerce({"a": 1}, "STRING", "x")
    with pytest.raises(GraphInputError, match="not a whole number"):
        coerce(2.5, "INT64", "x")
    assert terms("ozone") == ["ozone"] and terms(None) == [] and terms(["a", "a", " b "]) == ["a", "b"]


def test_findings_become_nodes_of_their_article_joined_to_the_terms_of_their_arms() -> None:
    graph = findings_partition.partition()
    findings = rows(graph, "Finding")
    key = "10.2000/t1#t-1:aspirin:placebo:major bleeding:fulltext"
    assert len(findings) == 5 and findings[key] == {
        "finding_id": "t-1:aspirin:placebo:major bleeding:fulltext", "direction": "significantly increased",
        "confidence": 0.9, "intervention": "aspirin", "comparator": "placebo", "outcome": "major bleeding",
        "intervention_term": "aspirin", "comparator_term": "placebo", "outcome_term": "major bleeding",
        "evidence": "aspirin changed major bleeding compared with placebo.", "source": "fulltext",
        "section": "Results", "preferred": True, "measure": "hazard ratio", "estimate": 1.5, "ci_low": 1.1,
        "ci_high": 2.05, "p_value": 0.01, "study_kind": "primary",
    }  # fmt: skip
    assert ("10.2000/t1", key) in pairs(graph, "REPORTS_FINDING")
    assert ("t-3", "t-3#t-3:statin:placebo:stroke:fulltext") in pairs(graph, "REPORTS_FINDING")
    # the generic protocol's Exposure and Outcome entities, as the fields spell them; comparators join Exposure
    assert (key, "Aspirin") in pairs(graph, "INTERVENTION_TERM") and (key, "placebo") in pairs(graph, "COMPARATOR_TERM")
    assert (key, "major bleeding") in pairs(graph, "OUTCOME_TERM")
    assert set(rows(graph, "Exposure")) == {"Aspirin", "clopidogrel", "statin", "placebo"}


def test_a_protocol_without_tagged_arms_keeps_the_terms_as_properties_only() -> None:
    data = findings_partition.frames()
    graph = build_partition_graph(schema(), "q", corpus=data["corpus"], findings=data["findings"])
    assert len(rows(graph, "Finding")) == 5 and pairs(graph, "REPORTS_FINDING")
    assert not {b.type for b in graph.relationships} & {"INTERVENTION_TERM", "COMPARATOR_TERM", "OUTCOME_TERM"}


def test_bad_findings_are_named() -> None:
    data = findings_partition.frames()
    with pytest.raises(
        GraphInputError, match="finding 't-3:statin.*refers to cluster 't-3', which is not in the corpus"
    ):
        build_partition_graph(
            findings_partition.schema(), "q", corpus=data["corpus"].iloc[:2], findings=data["findings"]
        )
    with pytest.raises(GraphInputError, match="a finding of article 't-3' has no finding_id"):
        findings = data["findings"].assign(
            finding_id=data["findings"]["finding_id"].where(lambda s: s.str[:3] != "t-3")
        )
        build_partition_graph(findings_partition.schema(), "q", corpus=data["corpus"], findings=findings)
    with pytest.raises(GraphInputError, match="Finding .*, property preferred: cannot store 'yes' as BOOLEAN"):
        findings = data["findings"].astype({"preferred": object}).assign(preferred="yes")
        build_partition_graph(findings_partition.schema(), "q", corpus=data["corpus"], findings=findings)


def test_a_changed_finding_changes_its_articles_digest_only() -> None:
    before = article_digests(findings_partition.partition())
    changed = [dict(findings_partition.FINDINGS[-1], direction="no significant difference")]
    after = article_digests(findings_partition.partition([*findings_partition.FINDINGS[:-1], *changed]))
    assert {key for key in before if before[key] != after[key]} == {"t-3"}


def test_the_query_finds_every_work_and_includes_its_included_studies_only() -> None:
    data = frames()
    included = ["c-1", "c-3"]
    graph = build_partition_graph(schema(), QUERY, **data, included=included)
    keys = dict(zip(data["corpus"]["cluster_id"], rows(graph, "Article")))
    assert pairs(graph, "FOUND") == {(QUERY, key) for key in keys.values()}
    assert pairs(graph, "INCLUDES") == {(QUERY, keys[c]) for c in included}
