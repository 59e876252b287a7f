"""The numeric route: works whose reported numbers meet a comparison, with each value's evidence.

A number field of the protocol that is an Article property (a sample size, a follow-up in
years) is filtered in the graph by a parameterised, read-only Cypher query; the question's
bound travels as a parameter, converted to the field's unit. Fields with several records
per work (effect estimates, model metrics: name, value, interval) stay in
``extracted_fields``, where their records are filtered by name and value: they have no
single value an Article property could hold. Either way each row keeps the extracted value,
its unit and the sentence it was read from, so a reviewer can check every number. Which
field a question means is decided in :mod:`hysem_assets.qa.number_fields`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from hysem_assets.core.matcher import matchable
from hysem_assets.core.sentences import split_label
from hysem_assets.core.text import split_sentences

# The extractor's reading of a written amount, so a value is found in text however the text writes it.
from hysem_assets.extraction.numbers import _AMOUNT, parse_amount
from hysem_assets.qa.comparisons import Comparison, format_number
from hysem_assets.qa.cypher import CypherPlan, validate_cypher
from hysem_assets.qa.drafts import Claim, Draft
from hysem_assets.qa.number_fields import NumericTarget, records_of
from hysem_assets.qa.sources import ChunkRow, Library, SourceMetadata, clean, evidence_citation
from hysem_assets.qa.symbolic import term_conditions
from hysem_assets.qa.terms import Filters
from hysem_assets.stores.graph import GraphStore
from hysem_assets.stores.graph_schema import GraphSchema

_AMOUNTS = re.compile(rf"(?<![\w.]){_AMOUNT}", re.IGNORECASE)


def bound_condition(prop: str, comparison: Comparison) -> tuple[str, dict[str, float]]:
    """The condition on Article ``a``'s property ``prop`` that ``comparison`` states, and its parameters."""
    column = f"a.`{prop}`"
    if comparison.op == "between":
        return f"{column} >= $low AND {column} <= $high", {"low": comparison.low, "high": comparison.high}
    bound = comparison.low if comparison.op in (">", ">=") else comparison.high
    return f"{column} {comparison.op} $bound", {"bound": float(bound)}  # type: ignore[arg-type]


def numeric_plan(schema: GraphSchema, query: str, target: NumericTarget, filters: Filters) -> CypherPlan:
    """Rows ``(article, cluster_id, value)`` of works whose property meets the comparison (and the terms' filters)."""
    prop = target.field.article_property
    assert prop is not None
    parameters: dict[str, Any] = {"query": query}
    condition, bounds = bound_condition(prop, target.comparison)
    parameters |= bounds
    conditions = [
        f"a.`{prop}` IS NOT NULL",
        condition,
        *term_conditions(schema, filters.required, parameters, excluded=filters.excluded),
    ]
    order = "ASC" if target.comparison.op in ("<", "<=") else "DESC"
    return CypherPlan(
        f"{filters.articles} WHERE {' AND '.join(conditions)} "
        f"RETURN a.key AS article, a.cluster_id AS cluster_id, a.title AS title, a.`{prop}` AS value "
        f"ORDER BY value {order}",
        parameters,
    )


def known_plan(query: str, prop: str, filters: Filters) -> CypherPlan:
    """How many works counted state a value at all (what "none found" is measured against)."""
    return CypherPlan(f"{filters.articles} WHERE a.`{prop}` IS NOT NULL RETURN count(a) AS known", {"query": query})


@dataclass(frozen=True)
class NumericRow:
    """One work's value that meets the comparison, with its unit and evidence sentence."""

    cluster_id: str
    article: str
    value: float
    unit: str | None
    measure: str | None = None
    ci_lower: float | None = None
    ci_upper: float | None = None
    evidence: str | None = None
    evidence_from: str | None = None
    title: str | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class NumericAnswer:
    target: NumericTarget
    rows: list[NumericRow]
    known: int
    plan: CypherPlan | None = None

    @property
    def empty(self) -> bool:
        return not self.rows

    def as_json(self) -> dict[str, Any]:
        comparison = self.target.comparison
        return {
            "field": self.target.field.name,
            "property": self.target.field.article_property,
            "kind": self.target.field.kind,
            "unit": self.target.field.unit,
            "comparison": {
                "op": comparison.op,
                "low": comparison.low,
                "high": comparison.high,
                "as_asked": comparison.text,
            },
            "names": list(self.target.names),
            "why": self.target.why,
            "cypher": self.plan.cypher if self.plan else None,
            "parameters": self.plan.parameters if self.plan else None,
            "known": self.known,
            "rows": [row.as_json() for row in self.rows],
        }


def evidence_table(extracted: pd.DataFrame | None) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """cluster id -> field -> evidence items (value, sentence, offsets), from the ``evidence`` column."""
    if extracted is None or "evidence" not in extracted.columns:
        return {}
    table = {}
    for cluster_id, value in zip(extracted["cluster_id"], extracted["evidence"], strict=True):
        try:
            table[str(cluster_id)] = json.loads(value) if isinstance(value, str) else {}
        except json.JSONDecodeError:
            table[str(cluster_id)] = {}
    return table


def _close(a: Any, b: Any) -> bool:
    try:
        return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))
    except (TypeError, ValueError):
        return False


def _same_record(a: Any, b: Mapping[str, Any]) -> bool:
    return (
        isinstance(a, Mapping)
        and _close(a.get("value"), b.get("value"))
        and all(a.get(key) == b.get(key) for key in ("name", "measure") if key in b)
    )


def written_as(text: str, value: float) -> str | None:
    """How ``text`` writes ``value`` ("48,213", "2.3 million"), None when it does not."""
    for match in _AMOUNTS.finditer(text):
        amount = parse_amount(match.group("amount"), match.group("scale"))
        if amount is not None and _close(amount, value):
            return match.group(0)
    return None


def sentence_stating(text: str, value: float) -> str | None:
    """The first sentence of ``text`` that writes ``value`` in any form ("48,213", "2.3 million")."""
    return next((s for s in split_sentences(matchable(text)) if written_as(s, value) is not None), None)


def _evidence(
    items: Sequence[Mapping[str, Any]], value: Any, texts: Sequence[str], number: float
) -> tuple[str | None, str | None]:
    """The evidence sentence of ``value``: the extraction's own, else a sentence of the work stating the number."""
    for item in items:
        recorded = item.get("value")
        if (_same_record(recorded, value) if isinstance(value, Mapping) else _close(recorded, value)) and item.get(
            "sentence"
        ):
            return str(item["sentence"]), "extracted_fields"
    for text in texts:
        if sentence := sentence_stating(text, number):
            return sentence, "text"
    return None, None


def run_numeric(
    target: NumericTarget,
    *,
    graph: GraphStore | None,
    schema: GraphSchema,
    query: str,
    filters: Filters,
    extracted: pd.DataFrame | None,
    texts: Mapping[str, Sequence[str]],
    article_keys: Mapping[str, str],
) -> NumericAnswer:
    """The rows meeting ``target``'s comparison; ``texts``: cluster id -> its texts, where evidence is looked up
    when the extraction kept none; ``article_keys``: cluster id -> the Article key."""
    evidence = evidence_table(extracted)
    found: list[NumericRow] = []
    field_ = target.field
    if field_.article_property is not None:
        if graph is None:
            raise ValueError("a number property is filtered in the graph, and there is no graph store")
        plan = numeric_plan(schema, query, target, filters)
        validate_cypher(plan, schema)
        counted = known_plan(query, field_.article_property, filters)
        validate_cypher(counted, schema)
        known_rows = graph.query(counted.cypher, counted.parameters)
        known = int(known_rows["known"].iloc[0]) if len(known_rows) else 0
        rows = graph.query(plan.cypher, plan.parameters)
        for row in rows.to_dict("records"):
            cluster_id, value = str(row["cluster_id"]), float(row["value"])
            items = evidence.get(cluster_id, {}).get(field_.name, [])
            sentence, source = _evidence(items, row["value"], texts.get(cluster_id, ()), value)
            found.append(
                NumericRow(cluster_id, str(row["article"]), value, field_.unit, evidence=sentence,
                           evidence_from=source, title=clean(row.get("title")))
            )  # fmt: skip
        return NumericAnswer(target, found, known, plan)
    known_works: set[str] = set()
    for record in records_of(extracted, field_.name):
        value = clean(record.get("value"))
        if not isinstance(value, int | float):
            continue
        known_works.add(record["cluster_id"])
        name = clean(record.get("name") or record.get("measure"))
        canonical = field_.names.lookup(str(name)) if field_.names is not None and name else None
        if target.names and (canonical or name) not in target.names:
            continue
        if not target.comparison.holds(float(value)):
            continue
        cluster_id = record["cluster_id"]
        if cluster_id not in article_keys:
            continue
        own = {k: v for k, v in record.items() if k != "cluster_id"}
        sentence, source = _evidence(
            evidence.get(cluster_id, {}).get(field_.name, []), own, texts.get(cluster_id, ()), float(value)
        )
        found.append(
            NumericRow(
                cluster_id,
                article_keys[cluster_id],
                float(value),
                clean(record.get("unit")) or field_.unit,
                measure=canonical or name,
                ci_lower=clean(record.get("ci_lower", record.get("ci_low"))),
                ci_upper=clean(record.get("ci_upper", record.get("ci_high"))),
                evidence=sentence,
                evidence_from=source,
            )
        )
    descending = target.comparison.op not in ("<", "<=")
    found.sort(key=lambda row: (-row.value if descending else row.value, row.cluster_id))
    return NumericAnswer(target, found, len(known_works & set(article_keys)))


def describe_value(row: NumericRow, label: str, kind: str = "quantity") -> str:
    """ "sample size 48,213 participants", "AUC 0.86 (95% CI 0.81-0.90)", "publication year 2024": the value
    as the evidence writes it ("2.3 million") where it does, so the claim quotes its source."""
    written = written_as(matchable(row.evidence), row.value) if row.evidence else None
    text = written or (format_number(row.value).replace(",", "") if kind == "year" else format_number(row.value))
    if row.unit:
        text += row.unit if row.unit == "%" else f" {row.unit}"
    text = f"{row.measure or label} {text}"
    if row.ci_lower is not None and row.ci_upper is not None:
        text += f" (95% CI {format_number(row.ci_lower)}-{format_number(row.ci_upper)})"
    return text


def numeric_draft(
    found: NumericAnswer,
    library: Library,
    chunks: Mapping[str, Sequence[ChunkRow]],
    *,
    include_retracted: bool = False,
) -> tuple[Draft, list[SourceMetadata], list[str]]:
    """A total, then one claim per work with its value and evidence sentence (a number without one, such as
    the publication year, with the work's title), and the retracted works met (left out unless
    ``include_retracted``)."""
    target = found.target
    cited: list[tuple[NumericRow, SourceMetadata]] = []
    retracted = []
    for row in found.rows:
        record = library.get(row.cluster_id)
        if record is not None and record.retracted:
            retracted.append(row.cluster_id)
            if not include_retracted:
                continue
        citation = evidence_citation(row.cluster_id, row.evidence, library, chunks.get(row.cluster_id, ()))
        if citation is not None:
            cited.append((row, citation))
    if not cited:
        return Draft(()), [], retracted
    what = ", ".join(target.names) if target.names else target.field.label
    unit = f" {target.field.unit}" if target.field.unit and not target.field.records else ""
    works = len({row.cluster_id for row, _ in cited})
    total = (
        f"{works} work{'s' * (works != 1)} report{'s' * (works == 1)} {what} {target.comparison.describe()}{unit}"
        f" (of {found.known} with a stated {target.field.label})."
    )
    claims = [Claim(total, tuple(c.as_dict() for c in dict.fromkeys(c for _, c in cited)))]
    for row, citation in cited:
        value = describe_value(row, target.field.label, target.field.kind)
        if row.evidence:
            text = f"{value}: {split_label(row.evidence)[1]}"
        else:
            text = f"{value}: {row.title.rstrip('.')}." if row.title else f"{value} (extracted value)."
        claims.append(Claim(text, (citation.as_dict(),)))
    return Draft(tuple(claims)), list(dict.fromkeys(c for _, c in cited)), retracted
