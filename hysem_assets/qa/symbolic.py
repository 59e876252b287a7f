"""The symbolic route: listing, counting and filtering questions answered from the graph.

Such questions ("which methods ..., and in how many articles?") have exact answers that
text retrieval can only approximate, so they go to a Cypher query over the schema: the
entity kind asked for (from the question's wording), filtered by the canonical terms the
question names. Every query returns rows ``(name, article)``, so counts are computed the
same way whoever wrote the query: distinct articles per name, and in total.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from hysem_assets.knowledge.schema import GraphSchema
from hysem_assets.qa.cypher import CypherPlan, validate_cypher
from hysem_assets.qa.sources import Library, LibraryRecord, clean
from hysem_assets.qa.terms import Terms
from hysem_assets.stores.graph import GraphStore

Route = Literal["symbolic", "hybrid"]

_COUNTING = re.compile(r"\b(how many|number of|count|how often)\b", re.IGNORECASE)
_LISTING = re.compile(r"^\s*(which|list|name|enumerate|what\s+(?:are|were)\s+the)\b", re.IGNORECASE)
_FILTERING = re.compile(
    r"\b(studies|articles|papers)\s+(?:of|on|about|that|which|with|from|published)\b", re.IGNORECASE
)
#: label -> words a question uses for it ("which methods", "how many pollutants")
TARGET_WORDS: dict[str, tuple[str, ...]] = {
    "MLMethod": (
        "method",
        "methods",
        "model",
        "models",
        "algorithm",
        "algorithms",
        "technique",
        "techniques",
        "learners",
    ),
    "Pollutant": ("pollutant", "pollutants", "exposure", "exposures"),
    "HealthOutcome": ("outcome", "outcomes", "disease", "diseases", "endpoint", "endpoints"),
    "Region": ("region", "regions", "country", "countries", "place", "places", "location", "locations"),
}
ARTICLE_METADATA_CYPHER = (
    "MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article) WHERE a.key IN $keys "
    "RETURN a.key AS article, a.cluster_id AS cluster_id"
)


def route(question: str) -> Route:
    """Symbolic for counting, listing and filtering questions; hybrid retrieval for everything else."""
    listing = _LISTING.search(question) and _FILTERING.search(question)
    return "symbolic" if _COUNTING.search(question) or listing else "hybrid"


def target_label(question: str, schema: GraphSchema) -> str | None:
    """The entity kind the question asks for, by the first word naming one; None: articles themselves."""
    words = re.findall(r"[a-z]+", question.casefold())
    for word in words:
        for label, names in TARGET_WORDS.items():
            if label in schema.nodes and word in names:
                return label
    return None


def _article_relationship(schema: GraphSchema, label: str) -> str:
    for rel_type, source, target in schema.relationship_pairs():
        if source == "Article" and target == label:
            return rel_type
    raise ValueError(f"the schema has no relationship from Article to {label}")


def template_plan(schema: GraphSchema, query: str, target: str | None, terms: Terms) -> CypherPlan:
    """Rows ``(name, article)`` for articles of partition ``query`` linked to every named term.

    Terms of the target kind filter the target too ("how many articles use random forest").
    """
    parameters: dict[str, object] = {"query": query}
    conditions = []
    for n, (label, names) in enumerate(sorted(terms.items())):
        if label == target:
            continue
        rel_type = _article_relationship(schema, label)
        parameters[f"f{n}"] = names
        conditions.append(f"EXISTS {{ MATCH (a)-[:`{rel_type}`]->(f{n}:`{label}`) WHERE f{n}.name IN $f{n} }}")
    match = "MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article)"
    if target is None:
        returned = "RETURN NULL AS name, a.key AS article"
    else:
        match += f"-[:`{_article_relationship(schema, target)}`]->(x:`{target}`)"
        returned = "RETURN x.name AS name, a.key AS article"
        if terms.get(target):
            parameters["targets"] = terms[target]
            conditions.append("x.name IN $targets")
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    return CypherPlan(f"{match}{where} {returned}", parameters)


@dataclass(frozen=True)
class GraphAnswer:
    """What a symbolic query found: distinct articles per name, all of them, and their library records."""

    plan: CypherPlan
    by_name: dict[str, list[str]]
    articles: list[str]
    records: dict[str, LibraryRecord]

    @property
    def empty(self) -> bool:
        return not self.articles


def run_plan(graph: GraphStore, schema: GraphSchema, plan: CypherPlan, query: str, library: Library) -> GraphAnswer:
    """Validate and run ``plan``; rows must have columns ``article`` and (optionally) ``name``."""
    validate_cypher(plan, schema)
    rows = graph.query(plan.cypher, plan.parameters)
    if not rows.empty and "article" not in rows.columns:
        raise ValueError(f"the symbolic query returned columns {list(rows.columns)}, not (name, article)")
    if rows.empty:
        rows = pd.DataFrame(columns=["name", "article"])
    by_name: dict[str, set[str]] = defaultdict(set)
    for name, article in zip(rows.get("name", [None] * len(rows)), rows["article"], strict=True):
        if (name := clean(name)) is not None:
            by_name[str(name)].add(str(article))
    articles = sorted({str(a) for a in rows["article"]})
    found = graph.query(ARTICLE_METADATA_CYPHER, {"query": query, "keys": articles}) if articles else rows.iloc[0:0]
    records = {
        str(key): library[str(cluster)]
        for key, cluster in zip(found.get("article", []), found.get("cluster_id", []), strict=True)
        if str(cluster) in library
    }
    ordered = dict(
        sorted(((n, sorted(a)) for n, a in by_name.items()), key=lambda item: (-len(item[1]), item[0].casefold()))
    )
    return GraphAnswer(plan, ordered, articles, records)


def describe_filters(terms: Mapping[str, list[str]]) -> str:
    return "; ".join(f"{label}: {', '.join(names)}" for label, names in sorted(terms.items())) or "none"
