"""A small partition (corpus, extracted fields, chunks) whose report answer is known.

Terms are canonical terms of config/dictionaries. Ozone and heart disease, empirical:
a1 (random forest, XGBoost), a2 (random forest), c-3 without DOI (LSTM network).
Left out: a4 is a review, a5 studies NO2, a6 reports stroke only.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from hysem_assets.knowledge.build import build_partition_graph
from hysem_assets.settings.protocols import load_protocol, load_protocols
from hysem_assets.stores.graph import PartitionGraph
from hysem_assets.stores.graph_schema import GraphSchema, graph_schema

PROTOCOL = "pollution-cardio-ml"
QUERY = "ozone-heart"
EXPECTED_REPORT = [("random forest", 2), ("long short-term memory network", 1), ("XGBoost", 1)]
ODD_TERM = 'Bayesian "kernel" machine \\ BKMR\'s'


def article(cluster_id: str, doi: str | None, study: str, *terms: list[str]) -> dict[str, Any]:
    """An article with its extracted ML methods, pollutants, outcomes and regions."""
    return dict(
        zip(("cluster_id", "doi", "study", "ml", "pol", "out", "geo"), (cluster_id, doi, study, *terms), strict=True)
    )


ARTICLES: list[dict[str, Any]] = [
    article("c-1", "10.1000/A1", "cohort", ["random forest", "XGBoost"], ["ozone", "PM2.5"],
            ["myocardial infarction"], ["China"]),
    article("c-2", "10.1000/a2", "time-series", ["random forest"], ["ozone"], ["heart failure", "stroke"], ["Italy"]),
    article("c-3", None, "case-crossover", ["long short-term memory network"], ["ozone"],
            ["coronary heart disease"], []),
    article("c-4", "10.1000/a4", "systematic review", ["random forest"], ["ozone"], ["heart failure"], []),
    article("c-5", "10.1000/a5", "cohort", ["support vector machine"], ["NO2"], ["heart failure"], ["China"]),
    article("c-6", "10.1000/a6", "cohort", ["gradient boosting", ODD_TERM], ["ozone"], ["stroke"], []),
]  # fmt: skip


def schema() -> GraphSchema:
    return graph_schema(load_protocols(), load_protocol(PROTOCOL))


def frames(articles: list[dict[str, Any]] = ARTICLES, chunks_per_article: int = 2) -> dict[str, pd.DataFrame]:
    corpus = pd.DataFrame(
        {
            "cluster_id": a["cluster_id"],
            "doi": a["doi"],
            "title": f"Study {n}",
            "year": 2015 + n,
            "journal": "Journal of Tests",
            "authors": ["Doe, Jane", "Roe, Richard"],
            "in_text_citation": f"(Doe et al., {2015 + n})",
            "full_citation": f"Doe J, Roe R. Study {n}. J Tests. {2015 + n}.",
            "zotero_key": f"ZK{n:06d}",
            "dominant_topic": n % 3,
        }
        for n, a in enumerate(articles, 1)
    )
    fields = pd.DataFrame(
        {
            "cluster_id": a["cluster_id"],
            "study_type": a["study"],
            "ml_methods_used": a["ml"],
            "pollutant_terms": a["pol"],
            "health_outcome": a["out"],
            "geography": a["geo"],
        }
        for a in articles
    )
    chunks = pd.DataFrame(
        {
            "chunk_id": f"{a['cluster_id']}:{i}",
            "cluster_id": a["cluster_id"],
            "chunk_index": i,
            "section": "Methods" if i else "Abstract",
            "text": f"We model {a['pol'][0]} exposure with {a['ml'][0]}.",
            "mentions": {"pollutant_terms": a["pol"][:1], "ml_methods_used": a["ml"][:1]},
        }
        for a in articles
        for i in range(chunks_per_article)
    )
    return {"corpus": corpus, "fields": fields, "chunks": chunks}


def partition(articles: list[dict[str, Any]] = ARTICLES, query: str = QUERY, **options: Any) -> PartitionGraph:
    return build_partition_graph(schema(), query, title="Ozone and heart disease", **frames(articles, **options))
