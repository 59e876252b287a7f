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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from hysem_assets.qa.cypher import CypherPlan, CypherRejected, validate_cypher
from hysem_assets.qa.sources import Library, LibraryRecord, clean
from hysem_assets.qa.terms import Filters, Terms
from hysem_assets.stores.graph import GraphStore
from hysem_assets.stores.graph_schema import GraphSchema

ARTICLE_METADATA_CYPHER = (
    "MATCH (:Query {key: $query})-[:FOUND]->(a:Article) WHERE a.key IN $keys "
    "RETURN a.key AS article, a.cluster_id AS cluster_id, a.title AS title"
)


def target_label(question: str, schema: GraphSchema) -> str | None:
    """The entity kind the question asks for, by the earliest of the protocol's words for one
    ("which outcomes", "how many exposures"); None: articles themselves."""
    text = question.casefold()
    found = [
        (match.start(), -len(word), spec.entity)
        for spec in schema.fields.values()
        if spec.entity is not None
        for word in spec.words
        if (match := re.search(rf"\b{re.escape(word.casefold())}\b", text))
    ]
    return min(found)[2] if found else None


def article_relationship(schema: GraphSchema, label: str) -> str:
    """The relationship type from Article to entities ``label``."""
    for rel_type, source, target in schema.relationship_pairs():
        if source == "Article" and target == label:
            return rel_type
    raise ValueError(f"the schema has no relationship from Article to {label}")


def term_conditions(
    schema: GraphSchema,
    terms: Terms,
    parameters: dict[str, object],
    skip: str | None = None,
    excluded: Terms | None = None,
) -> list[str]:
    """Conditions on Article ``a``: linked to a named term of every label but ``skip``, and to no ``excluded``
    term; values go into ``parameters``."""
    conditions = []
    for n, (label, names) in enumerate(sorted(terms.items())):
        if label == skip:
            continue
        rel_type = article_relationship(schema, label)
        parameters[f"f{n}"] = names
        conditions.append(f"EXISTS {{ MATCH (a)-[:`{rel_type}`]->(f{n}:`{label}`) WHERE f{n}.name IN $f{n} }}")
    for n, (label, names) in enumerate(sorted((excluded or {}).items())):
        rel_type = article_relationship(schema, label)
        parameters[f"n{n}"] = names
        conditions.append(f"NOT EXISTS {{ MATCH (a)-[:`{rel_type}`]->(n{n}:`{label}`) WHERE n{n}.name IN $n{n} }}")
    return conditions


def template_plan(schema: GraphSchema, query: str, target: str | None, filters: Filters) -> CypherPlan:
    """Rows ``(name, article)`` for articles of partition ``query`` linked to every required term and to no
    excluded one.

    Terms of the target kind filter the target too ("how many articles use random forest").
    """
    terms = filters.required
    parameters: dict[str, object] = {"query": query}
    others = {label: names for label, names in filters.excluded.items() if label != target}
    conditions = term_conditions(schema, terms, parameters, skip=target, excluded=others)
    match = filters.articles
    if target is None:
        returned = "RETURN NULL AS name, a.key AS article"
    else:
        match += f"-[:`{article_relationship(schema, target)}`]->(x:`{target}`)"
        returned = "RETURN x.name AS name, a.key AS article"
        if terms.get(target):
            parameters["targets"] = terms[target]
            conditions.append("x.name IN $targets")
        if filters.excluded.get(target):  # "which methods other than X": X leaves the list, its works stay
            parameters["not_targets"] = filters.excluded[target]
            conditions.append("NOT x.name IN $not_targets")
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    return CypherPlan(f"{match}{where} {returned}", parameters)


def ranked(by_name: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """Names with at least one article, most articles first, then alphabetically."""
    kept = ((name, found) for name, found in by_name.items() if found)
    return dict(sorted(kept, key=lambda item: (-len(item[1]), item[0].casefold())))


@dataclass(frozen=True)
class GraphAnswer:
    """What a symbolic query found: distinct articles per name, all of them, their library records and titles."""

    plan: CypherPlan
    by_name: dict[str, list[str]]
    articles: list[str]
    records: dict[str, LibraryRecord]
    titles: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.articles

    def citations(self, keys: Iterable[str]) -> tuple[dict[str, Any], ...]:
        """The metadata objects of the articles ``keys`` that have a library record, for a claim to cite."""
        return tuple(self.records[k].metadata(None).as_dict() for k in keys if k in self.records)

    def without(self, keys: set[str]) -> GraphAnswer:
        """The answer with the articles ``keys`` left out (retracted works), counts recomputed and re-ranked."""
        by_name = ranked({name: [k for k in found if k not in keys] for name, found in self.by_name.items()})
        records = {k: r for k, r in self.records.items() if k not in keys}
        return GraphAnswer(self.plan, by_name, [a for a in self.articles if a not in keys], records, self.titles)

    def without_names(self, names: set[str]) -> GraphAnswer:
        """The answer with the names ``names`` left out of its list; their works still count ("other than X")."""
        by_name = {name: keys for name, keys in self.by_name.items() if name not in names}
        return GraphAnswer(self.plan, by_name, self.articles, self.records, self.titles)


def run_plan(
    graph: GraphStore, schema: GraphSchema, plan: CypherPlan, query: str, library: Library, max_rows: int | None = None
) -> GraphAnswer:
    """Validate and run ``plan``; rows must have columns ``article`` and (optionally) ``name``. With ``max_rows``,
    an answer of more names (or works, when it names none) is refused: a model's query that returns more
    than a reviewer's answer can hold."""
    validate_cypher(plan, schema)
    rows = graph.query(plan.cypher, plan.parameters)
    if not rows.empty and "article" not in rows.columns:
        raise CypherRejected(f"it returned columns {list(rows.columns)}, not (name, article)")
    if max_rows is not None and (size := _answer_size(rows)) > max_rows:
        raise CypherRejected(f"it answered with {size} rows, more than {max_rows}")
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
    titles = {
        str(key): str(title)
        for key, title in zip(found.get("article", []), found.get("title", []), strict=True)
        if clean(title) is not None
    }
    return GraphAnswer(plan, ranked({n: sorted(a) for n, a in by_name.items()}), articles, records, titles)


def _answer_size(rows: pd.DataFrame) -> int:
    """The rows an answer shows: its distinct names, or its distinct works when it names none."""
    names = rows["name"].dropna() if "name" in rows.columns else pd.Series(dtype=object)
    return names.nunique() if not names.empty else rows["article"].nunique()


def describe_filters(terms: Mapping[str, list[str]], excluded: Mapping[str, list[str]] | None = None) -> str:
    """ "Label: term, term; not Label: term", or "none"."""
    said = [f"{label}: {', '.join(names)}" for label, names in sorted(terms.items())]
    said += [f"not {label}: {', '.join(names)}" for label, names in sorted((excluded or {}).items())]
    return "; ".join(said) or "none"
