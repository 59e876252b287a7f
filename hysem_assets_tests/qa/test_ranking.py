"""Ranking questions ("which methods are most often used") answered from the graph: each name with the
works that report it and their share, equal to a count made independently from the extracted fields,
with a chart."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from hysem_assets_tests.knowledge.partition import ARTICLES, PROTOCOL
from hysem_assets_tests.qa.test_router import ask, routed

CLAIM = re.compile(r"^(?P<name>.+): (?P<works>\d+) of (?P<reporting>\d+) works \((?P<share>[\d.]+)%\)\.$")


def independent_counts(key: str) -> tuple[Counter, int]:
    """Works per term of the field ``key`` of the partition's extracted rows, and works that report any."""
    counts = Counter(term for article in ARTICLES for term in set(article[key]))
    return counts, sum(bool(article[key]) for article in ARTICLES)


@pytest.mark.parametrize(
    "question, key",
    [
        ("Which machine learning methods are most often used?", "ml"),
        ("What are the most common models in these studies?", "ml"),
        ("Which outcomes are studied, and how often?", "out"),
    ],
)
def test_a_ranking_counts_each_work_once_and_matches_the_extracted_fields(partition, embedder, question, key):
    answer = ask(partition.engine(embedder), question)
    details = json.loads(answer["json"])
    assert (answer["route"], answer["router"]) == ("ranking", "rules")
    claims = [claim["text"] for claim in details["claims"]]
    counts, reporting = independent_counts(key)
    assert claims[0].startswith(f"{reporting} of {len(ARTICLES)} included studies report ")
    ranked = [CLAIM.match(text).groupdict() for text in claims[1:]]
    assert {r["name"]: int(r["works"]) for r in ranked} == dict(counts)
    assert [int(r["works"]) for r in ranked] == sorted((int(r["works"]) for r in ranked), reverse=True)
    assert all(int(r["reporting"]) == reporting for r in ranked)
    assert all(float(r["share"]) == round(100 * int(r["works"]) / reporting, 1) for r in ranked)
    cited = {c["PDF_DocIndex"] for claim in details["claims"][1:2] for c in claim["citations"]}
    assert len(cited) == int(ranked[0]["works"])  # the top name cites exactly its works


def test_leaving_a_retracted_work_out_ranks_the_names_again(partition, embedder):
    engine = partition.engine(embedder)
    library = dict(engine.retriever.library)
    library["c-2"] = replace(library["c-2"], retracted=True)  # heart failure drops from 3 works to 2
    engine.retriever = replace(engine.retriever, library=library)
    answer = ask(engine, "Which outcomes are studied, and how often?")
    ranked = [CLAIM.match(claim["text"]).groupdict() for claim in json.loads(answer["json"])["claims"][1:]]
    order = [(-int(r["works"]), r["name"].casefold()) for r in ranked]
    assert order == sorted(order)  # most works first, ties alphabetical: stroke (2 -> 1) moves down
    assert {r["name"]: int(r["works"]) for r in ranked}["heart failure"] == 2
    assert json.loads(answer["json"])["claims"][0]["text"].startswith("5 of 5 included studies report outcomes")


def test_a_ranking_carries_its_chart_as_svg_and_png(partition, embedder):
    answer = ask(partition.engine(embedder), "Which machine learning methods are most often used?")
    svg = Path(answer["chart"])
    assert svg.suffix == ".svg" and json.loads(answer["json"])["symbolic"]["chart"]["svg"] == str(svg)
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "random forest" in text and "<svg" in text
    assert svg.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"Chart: {svg}" in answer["markdown"]


def test_rankings_route_only_when_the_question_names_what_to_rank():
    assert routed(PROTOCOL, "Which machine learning methods are most often used?") == "ranking"
    assert routed(PROTOCOL, "What are the most frequently reported outcomes?") == "ranking"
    assert routed(PROTOCOL, "Top 5 pollutants across the studies") == "ranking"
    assert routed(PROTOCOL, "Which study had the most participants?") == "none"  # picks a work by a property
    assert routed(PROTOCOL, "Which exposure had the strongest association with heart failure?") == "none"


def test_an_answer_citing_a_corrected_work_names_its_correction(partition, embedder):
    engine = partition.engine(embedder)
    library = dict(engine.retriever.library)
    library["c-2"] = replace(library["c-2"], correction="https://doi.org/10.1000/a2-erratum")
    engine.retriever = replace(engine.retriever, library=library)
    answer = ask(engine, "Which outcomes are studied, and how often?")
    corrected = json.loads(answer["json"])["corrected"]
    assert [(c["document"], c["correction"]) for c in corrected] == [("c-2", "https://doi.org/10.1000/a2-erratum")]
    assert "a published correction: (Doe et al., 2017) (https://doi.org/10.1000/a2-erratum)" in answer["markdown"]
    pollutants = ask(engine, "Which pollutants are studied, and how often?")  # any answer citing c-2 names it
    assert "published correction" in pollutants["markdown"]
