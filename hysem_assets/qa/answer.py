"""Answering one question end to end: route, answer, check citations, record.

The router picks a route (entities, counting, listing, ranking, statistics, trend, numeric, synthesis,
global or local) and the chain of routes after it. The entity route ranks, counts or lists the entity
graph's methods, tasks, metrics, materials or diseases by their works. Counting and listing read exact answers off
the graph, ranking too (with shares and a chart), statistics summarise a number property (by
group when asked), trends count works by year (with a chart); numeric filters
typed numbers with a parameterised Cypher query (or the records of ``extracted_fields``) and
quotes each value's evidence; synthesis tabulates the ``findings`` about an intervention and an
outcome by direction, with a verdict counted from the table and pooled estimates with forest
plots; global answers from the summary tree; local runs hybrid retrieval and the revise loop.
A route that is refused (invalid Cypher, no summary tree, no findings) or finds nothing hands
over to the next in its chain (a synthesis whose outcome no study reports says so instead), and
the record keeps every attempt and why. Whatever answered, the citation audit has the last
word, and the record says how long each stage took.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from hysem_assets.knowledge.build import article_key
from hysem_assets.qa.agents import Auditor, CypherWriter, Generator
from hysem_assets.qa.aggregates import (
    Categories,
    GraphScope,
    distribution_plan,
    run_statistics,
    run_trend,
    statistics_draft,
    statistics_question,
    trend_draft,
    trend_question,
)
from hysem_assets.qa.charts import ranking_chart, trend_chart
from hysem_assets.qa.citations import CitationAudit, audit_citations
from hysem_assets.qa.claims import closest_findings, gist, render_answer
from hysem_assets.qa.comparisons import parse_comparison
from hysem_assets.qa.cypher import CypherPlan, CypherRejected
from hysem_assets.qa.cypher_candidates import CypherExample, agreed_answer, closest_examples
from hysem_assets.qa.drafts import Claim, Draft, MalformedOutput, Round, render_claims
from hysem_assets.qa.effect_questions import effect_question
from hysem_assets.qa.entity_questions import (
    EntityKinds,
    dropped_names,
    entity_filters,
    entity_plan,
    entity_question,
    excluded_phrases,
)
from hysem_assets.qa.global_route import SummaryTree, answer_from_tree
from hysem_assets.qa.loop import revise_until_approved
from hysem_assets.qa.number_fields import NumberField, numeric_target
from hysem_assets.qa.numeric import numeric_draft, run_numeric
from hysem_assets.qa.preferences import preference_records
from hysem_assets.qa.retractions import corrected_works, correction_note, retraction_note
from hysem_assets.qa.retrieval import Retriever, retrieve
from hysem_assets.qa.router import (
    RouteDecision,
    RouteName,
    Router,
    choose_route,
    entity_ask,
    entity_words,
    kind_in,
    ranked_subject,
)
from hysem_assets.qa.sources import ChunkRow, Library, SourceMetadata
from hysem_assets.qa.symbolic import (
    GraphAnswer,
    describe_filters,
    run_plan,
    target_label,
    template_plan,
)
from hysem_assets.qa.synthesis import answer_synthesis, findings_missing
from hysem_assets.qa.terms import Filters, question_filters, split_negated, without_kind_words
from hysem_assets.settings.environment import charts_dir
from hysem_assets.stores.graph import GraphStoreError
from hysem_assets.stores.graph_schema import GraphSchema

NO_EVIDENCE = "No evidence found in the indexed literature for this question."
#: The answer of a partition without works: nothing was retrieved because there is nothing to retrieve from.
NO_ARTICLES = (
    "No evidence: this query's partition holds no articles (the search matched no record), "
    "so there is nothing to answer from."
)
#: Columns and types of an answer record, so a table of no answers keeps them.
ANSWER_DTYPES = {
    "query": object,
    "question": object,
    "route": object,
    "route_chain": object,
    "route_reason": object,
    "router": object,
    "markdown": object,
    "json": object,
    "approved": bool,
    "unverified": bool,
    "unverified_reason": object,
    "evidence_found": bool,
    #: Why no route could answer: a store it needs is missing for the partition (None otherwise).
    "unavailable": object,
    #: The SVG of a ranking or trend answer's chart or a synthesis's first forest plot (a PNG beside it), else None.
    "chart": object,
    "claims": "int64",
    "citations": "int64",
    "unresolved_citations": "int64",
    "rounds": "int64",
    "retrieval_seconds": float,
    "generation_seconds": float,
    "audit_seconds": float,
    "total_seconds": float,
    "prompt_tokens": "int64",
    "completion_tokens": "int64",
    "generator_model": object,
    "auditor_model": object,
}


class QAInputError(ValueError):
    """A question that cannot be asked (empty); the message says what to pass instead."""


@dataclass
class QAEngine:
    """Everything answering needs for one partition; ``cypher_writer`` None: symbolic queries from templates."""

    retriever: Retriever
    schema: GraphSchema
    generator: Generator
    auditor: Auditor
    cypher_writer: CypherWriter | None = None
    max_rounds: int = 3
    #: A model choosing the route when no rule applies; None: such questions are local.
    router: Router | None = None
    #: Numbers a question may compare (number properties, records fields, the year).
    numbers: list[NumberField] = field(default_factory=list)
    #: Properties of categories (study designs), with their values' spellings: rankings and groups.
    categories: list[Categories] = field(default_factory=list)
    #: Template queries over the schema, the closest of which a Cypher-writing model sees as examples.
    cypher_examples: list[CypherExample] = field(default_factory=list)
    #: Rows (names, or works when it names none) a model query's answer may have; one with more is discarded.
    cypher_max_rows: int = 100
    #: ``extracted_fields``: records fields and every value's evidence sentence.
    extracted: pd.DataFrame | None = None
    #: ``summary_tree``: what the global route answers from.
    tree: SummaryTree | None = None
    #: Why the graph routes cannot answer though a graph store is configured (this partition is not loaded).
    graph_missing: str | None = None
    #: ``findings``: what each study found per comparison (the synthesis route); None: never computed here.
    findings: pd.DataFrame | None = None
    #: The words questions use for the entity graph's kinds (``config/entity_questions.yaml``); None: no entity route.
    entity_kinds: EntityKinds | None = None

    def _agents(self) -> list[Any]:
        return [a for a in (self.generator, self.auditor, self.cypher_writer, self.router) if a is not None]

    def tokens(self) -> tuple[int, int]:
        agents = self._agents()
        return sum(a.usage.prompt_tokens for a in agents), sum(a.usage.completion_tokens for a in agents)

    async def aclose(self) -> None:
        for agent in self._agents():
            if backend := getattr(agent, "backend", None):
                await backend.aclose()


@dataclass(frozen=True)
class QAResult:
    answer: dict[str, Any]
    preferences: list[dict[str, Any]]


def graph_draft(found: GraphAnswer, filters: Filters, target: str | None, of: int, *, listing: bool = False) -> Draft:
    """Claims read off the graph: the total of the ``of`` works counted over, then each name with its article
    count, citing the articles; a listing of works names each work by its title."""

    total = len(found.articles)
    claims = [
        Claim(
            f"{total} of {of} {filters.counted_over} match "
            f"(filters: {describe_filters(filters.required, filters.excluded)}).",
            found.citations(found.articles),
        )
    ]
    if target is not None:
        claims += [
            Claim(f"{name}: {len(keys)} article{'s' * (len(keys) != 1)}.", found.citations(keys))
            for name, keys in found.by_name.items()
        ]
    elif listing:
        claims += [Claim(f"{found.titles[k]}.", found.citations([k])) for k in found.articles if found.titles.get(k)]
    return Draft(tuple(claims))


def ranking_draft(found: GraphAnswer, kind: str, included: int, over: str) -> Draft:
    """A ranking read off the graph: how many of the ``included`` works counted ``over`` (their name) report
    ``kind`` (the question's word for the entity kind), then each name with its works and their share of
    those, most reported first.

    A work counts once per name however often it mentions it, so the shares are of works, not mentions.
    """
    reporting = len(found.articles)
    claims = [
        Claim(
            f"{reporting} of {included} {over} report {kind} ({reporting / included:.1%}).",
            found.citations(found.articles),
        )
    ]
    claims += [
        Claim(f"{name}: {len(keys)} of {reporting} works ({len(keys) / reporting:.1%}).", found.citations(keys))
        for name, keys in found.by_name.items()
    ]
    return Draft(tuple(claims))


def markdown(
    question: str,
    draft: Draft,
    *,
    note: str | None = None,
    no_evidence: str = NO_EVIDENCE,
    closest: Draft | None = None,
    summary: str | None = None,
    layout: Callable[[Draft], str] | None = None,
    chart: str | None = None,
) -> str:
    body = (layout(draft) if layout and draft.claims else render_answer(draft, closest, summary)) or no_evidence
    shown = draft.claims or (closest.claims if closest else ())
    cited = {c.get("FullCitation") or c.get("DOI") for claim in shown for c in claim.citations}
    references = "\n".join(f"- {ref}" for ref in sorted(r for r in cited if r))
    parts = [f"**{question}**", body]
    if note:
        parts.append(f"_{note}_")
    if chart and chart not in body:  # a layout that shows its charts itself
        parts.append(f"Chart: {chart}")
    if references:
        parts.append(f"References:\n{references}")
    return "\n\n".join(parts)


@dataclass
class Outcome:
    """What one route produced: its draft, the sources its citations may name, and the loop's traces."""

    draft: Draft
    sources: Sequence[SourceMetadata]
    approved: bool = True
    rounds: list[dict[str, Any]] = field(default_factory=list)
    preferences: list[dict[str, Any]] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    generation: float = 0.0
    audit: float = 0.0
    #: The revise loop's rounds (local), for the closest findings when no claim survives.
    looped: Sequence[Round] = ()
    #: Retracted works the route left out (or kept, as asked), as :func:`retraction_note` reports them.
    retracted: list[dict[str, Any]] = field(default_factory=list)
    #: Markdown of the claims when the route lays them out itself (themes), else the plain list.
    layout: Callable[[Draft], str] | None = None
    #: The one line an answer is when a store the route needs is missing (no fallback answers in its place).
    unavailable: str | None = None


RouteResult = tuple[Outcome | None, dict[str, Any]]


def _without_graph(engine: QAEngine) -> dict[str, Any]:
    """A graph route's details when the engine has no graph: unavailable (the partition is not loaded: no other
    route may answer in its place) or refused (no graph store configured: the next route takes over)."""
    return {"unavailable": engine.graph_missing} if engine.graph_missing else {"refused": "no graph store"}


async def _graph(question: str, filters: Filters, engine: QAEngine, route: RouteName) -> RouteResult:
    """Counting and listing from the graph, or None with the reason the next route takes over."""
    retriever = engine.retriever
    if retriever.graph is None:
        return None, _without_graph(engine)
    target = target_label(question, engine.schema)
    subject = ranked_subject(question, engine.schema, engine.categories) if route == "ranking" else None
    if (
        engine.cypher_writer is None
        and target is None
        and subject is None
        and not (filters.required or filters.excluded)
    ):
        return None, {"refused": "the question names no entity kind and no term the graph knows"}
    if route == "ranking" and subject is None:
        return None, {"refused": "a ranking needs an entity kind or a field of categories, and the question names none"}
    graph, library = retriever.graph, retriever.library
    candidates: list[dict[str, Any]] = []
    try:
        found = None
        if engine.cypher_writer is not None and not isinstance(subject, Categories):
            found, candidates = await _model_answer(question, filters, engine)
        if found is None:
            if isinstance(subject, Categories):
                plan = distribution_plan(engine.schema, retriever.query, subject, filters)
            else:
                plan = template_plan(engine.schema, retriever.query, target, filters)
            found = run_plan(graph, engine.schema, plan, retriever.query, library)
    except CypherRejected as exc:
        return None, {"refused": str(exc)}
    info = {"cypher": found.plan.cypher, "parameters": found.plan.parameters, "author": found.plan.author}
    if candidates:
        info["candidates"] = candidates
    info["target"] = subject.field if isinstance(subject, Categories) else target
    found, retracted = _without_retracted(found, retriever.settings.include_retracted)
    # "excluding X" where X is no term: the names that contain it leave the list, as a reviewer means it
    found = found.without_names(dropped_names(found.by_name, excluded_phrases(split_negated(question)[1])))
    if found.empty:
        return None, {**info, "fallback": "the symbolic query found nothing"}
    if route == "ranking":
        kind = subject.label if isinstance(subject, Categories) else kind_in(question, engine.schema) or target
        draft = ranking_draft(found, kind, included_works(engine, filters), filters.counted_over)
        counts = [(name, len(keys)) for name, keys in found.by_name.items()]
        info["chart"] = ranking_chart(question, counts, len(found.articles), charts_dir(retriever.query))
    else:
        draft = graph_draft(found, filters, target, included_works(engine, filters), listing=route == "listing")
    report = retraction_report(retracted, retriever.library, retriever.settings.include_retracted)
    return Outcome(draft, [record.metadata(None) for record in found.records.values()], retracted=report), info


def _without_retracted(found: GraphAnswer, include: bool) -> tuple[GraphAnswer, list[str]]:
    """The answer less its retracted works (unless ``include``), and those works' cluster ids."""
    retracted = {key: record.cluster_id for key, record in found.records.items() if record.retracted}
    return (found if include or not retracted else found.without(set(retracted))), list(retracted.values())


async def _entities(question: str, filters: Filters, engine: QAEngine, route: RouteName) -> RouteResult:
    """Entities of the kind asked for, ranked, counted or listed by the works that mention them, each number
    citing those works (``qa.entity_questions``)."""
    retriever = engine.retriever
    kinds = engine.entity_kinds
    ask = entity_ask(question, kinds, engine.categories) if kinds is not None else None
    if kinds is None or ask is None:
        return None, {"refused": "the question asks for no ranking, count or list of an entity kind"}
    if retriever.graph is None:
        return None, _without_graph(engine)
    if not retriever.entities:
        return None, {
            "refused": "the graph holds no entities of this query: materialize entities, then knowledge_graph"
        }
    asked = entity_question(question, kinds, retriever.entities, retriever.matchers)
    assert asked is not None  # entity_ask found the kind
    counted = entity_filters(filters, asked, retriever.entities)
    counted = replace(counted, required=without_kind_words(counted.required, entity_words(engine.schema)))
    plan = entity_plan(engine.schema, retriever.query, asked, counted)
    try:
        found = run_plan(retriever.graph, engine.schema, plan, retriever.query, retriever.library)
    except CypherRejected as exc:
        return None, {"refused": str(exc)}
    info = {"cypher": plan.cypher, "parameters": plan.parameters, "mode": ask.mode, **asked.as_json()}
    found, retracted = _without_retracted(found, retriever.settings.include_retracted)
    found = found.without_names(dropped_names(found.by_name, asked.dropped))
    if not found.by_name:
        return None, {**info, "fallback": f"no counted work mentions {asked.kind} under these conditions"}
    included = included_works(engine, filters)
    if ask.mode == "ranking":
        alongside = f" alongside {', '.join(asked.topic_names)}" if asked.topic_names else ""
        draft = ranking_draft(found, asked.kind + alongside, included, filters.counted_over)
        counts = [(name, len(keys)) for name, keys in found.by_name.items()]
        info["chart"] = ranking_chart(question, counts, len(found.articles), charts_dir(retriever.query))
    else:
        mentioning = {"mentioning": list(asked.topic_names)} if asked.topic_names else {}
        not_mentioning = {"mentioning": list(asked.excluded_names)} if asked.excluded_names else {}
        named = replace(counted, required=counted.required | mentioning, excluded=counted.excluded | not_mentioning)
        draft = graph_draft(found, named, asked.type, included)
    report = retraction_report(retracted, retriever.library, retriever.settings.include_retracted)
    return Outcome(draft, [record.metadata(None) for record in found.records.values()], retracted=report), info


async def _model_answer(
    question: str, filters: Filters, engine: QAEngine
) -> tuple[GraphAnswer | None, list[dict[str, Any]]]:
    """The graph answer the model's candidate queries agree on (None when none ran), and each candidate's fate."""
    retriever, writer = engine.retriever, engine.cypher_writer
    assert writer is not None and retriever.graph is not None
    graph = retriever.graph
    examples = closest_examples(question, engine.cypher_examples)
    try:
        candidates = await writer.write(question, filters, engine.schema, retriever.query, examples)
    except MalformedOutput as exc:
        return None, [{"candidate": 0, "outcome": "discarded", "reason": str(exc)}]

    def run(plan: CypherPlan) -> GraphAnswer:
        try:
            return run_plan(graph, engine.schema, plan, retriever.query, retriever.library, engine.cypher_max_rows)
        except GraphStoreError as exc:
            raise CypherRejected(f"the graph store refused it: {exc}") from exc

    return agreed_answer(candidates, run)


def graph_scope(engine: QAEngine) -> GraphScope:
    """The engine's graph, schema, partition and library, as the aggregations read them."""
    retriever = engine.retriever
    assert retriever.graph is not None
    return GraphScope(
        retriever.graph, engine.schema, retriever.query, retriever.library, retriever.settings.include_retracted
    )


def counted_over(engine: QAEngine, filters: Filters) -> list[str]:
    """Cluster ids of the works an answer counts over: the included studies, or every record found when the
    question asks so (the graph holds both)."""
    retriever = engine.retriever
    assert retriever.graph is not None
    rows = retriever.graph.query(f"{filters.articles} RETURN a.cluster_id AS cluster_id", {"query": retriever.query})
    return rows["cluster_id"].astype(str).tolist()


def included_works(engine: QAEngine, filters: Filters) -> int:
    """How many works an answer counts over, retracted ones left out unless the settings keep them."""
    library, keep = engine.retriever.library, engine.retriever.settings.include_retracted
    return sum(keep or not (c in library and library[c].retracted) for c in counted_over(engine, filters))


async def _statistics(question: str, filters: Filters, engine: QAEngine, route: RouteName) -> RouteResult:
    """A number property summarised over the works that state it, by group when asked, with the works at its ends."""
    retriever = engine.retriever
    asked = statistics_question(question, engine.numbers, engine.categories)
    if asked is None:
        return None, {"refused": "the question names no number property the graph holds"}
    if retriever.graph is None:
        return None, _without_graph(engine)
    try:
        found = run_statistics(asked, graph_scope(engine), filters, included_works(engine, filters))
    except CypherRejected as exc:
        return None, {"refused": str(exc)}
    info = found.as_json()
    if found.empty:
        return None, {**info, "fallback": f"no included work states a {asked.field.label} under these conditions"}
    sources = [
        retriever.library[c].metadata(None) for c in dict.fromkeys(found.rows["cluster_id"]) if c in retriever.library
    ]
    retracted = retraction_report(found.retracted, retriever.library, retriever.settings.include_retracted)
    return Outcome(statistics_draft(found, retriever.library), sources, retracted=retracted), info


async def _trend(question: str, filters: Filters, engine: QAEngine, route: RouteName) -> RouteResult:
    """Works counted by publication year (those the question names, else all), with a chart."""
    retriever = engine.retriever
    if retriever.graph is None:
        return None, _without_graph(engine)
    label = target_label(question, engine.schema)
    asked = trend_question(question, label, engine.numbers, engine.categories)
    try:
        found = run_trend(asked, graph_scope(engine), filters)
    except CypherRejected as exc:
        return None, {"refused": str(exc)}
    info = found.as_json()
    if found.empty:
        return None, {**info, "fallback": "no included work with a publication year meets the question's conditions"}
    kind = kind_in(question, engine.schema) if label else None
    info["chart"] = trend_chart(
        question,
        {year: len(works) for year, works in found.counted.items()},
        {year: len(works) for year, works in found.totals.items()},
        charts_dir(retriever.query),
        found.what(kind),
        filters.counted_over,
    )
    counted = {c for works in found.counted.values() for c in works}
    sources = [retriever.library[c].metadata(None) for c in sorted(counted) if c in retriever.library]
    retracted = retraction_report(found.retracted, retriever.library, retriever.settings.include_retracted)
    return Outcome(trend_draft(found, kind, retriever.library), sources, retracted=retracted), info


def retraction_report(cluster_ids: Iterable[str], library: Library, included: bool) -> list[dict[str, Any]]:
    """Retracted works a route met, left out or ``included``, in the retraction report's form."""
    return [
        {"document": c, "DOI": library[c].doi, "InTextCitation": library[c].in_text_citation, "included": included}
        for c in dict.fromkeys(cluster_ids)
        if c in library
    ]


def _chunks_by_work(chunks: Iterable[ChunkRow]) -> dict[str, list[ChunkRow]]:
    grouped: dict[str, list[ChunkRow]] = {}
    for chunk in chunks:
        grouped.setdefault(chunk.cluster_id, []).append(chunk)
    return grouped


async def _numeric(question: str, filters: Filters, engine: QAEngine, route: RouteName) -> RouteResult:
    """Works whose numbers meet the question's comparison, each with its value, unit and evidence."""
    retriever = engine.retriever
    comparison = parse_comparison(question)
    target = numeric_target(question, comparison, engine.numbers) if comparison else None
    if target is None:
        return None, {"refused": "no comparison with a number the protocol extracts"}
    if target.field.article_property is not None and retriever.graph is None:
        return None, _without_graph(engine)
    by_work = _chunks_by_work(retriever.chunks.values())
    keys = {cluster: article_key(record.doi, cluster) for cluster, record in retriever.library.items()}
    try:
        found = run_numeric(
            target,
            graph=retriever.graph,
            schema=engine.schema,
            query=retriever.query,
            filters=filters,
            extracted=engine.extracted,
            texts={cluster: [c.text for c in chunks] for cluster, chunks in by_work.items()},
            article_keys=keys,
        )
    except CypherRejected as exc:
        return None, {"refused": str(exc)}
    info = found.as_json()
    include = retriever.settings.include_retracted
    draft, sources, retracted = numeric_draft(found, retriever.library, by_work, include_retracted=include)
    if not draft.claims:
        stated = f"{found.known} work{'s' * (found.known != 1)} state{'s' * (found.known == 1)} one"
        return None, {
            **info,
            "fallback": f"no work's {target.field.label} is {target.comparison.describe()} ({stated})",
        }
    return Outcome(draft, sources, retracted=retraction_report(retracted, retriever.library, include)), info


async def _synthesis(question: str, filters: Filters, engine: QAEngine, route: RouteName) -> RouteResult:
    """What the included studies found about the question's intervention and outcome, by direction, with the
    verdict counted from that table. When no finding is about that outcome (the studies may still speak of it
    in words the findings model did not read as a comparison's result), or without findings (a state older
    than them, named with the command that computes them), passages answer, and they say so where none does."""
    asked = effect_question(question)
    if asked is None:
        return None, {"refused": "the question names no intervention and outcome in a form the route reads"}
    retriever = engine.retriever
    if engine.findings is None:
        return None, {"question": asked.as_json(), "refused": findings_missing(retriever.query)}
    include = retriever.settings.include_retracted
    findings, over = engine.findings, ""
    if retriever.graph is not None:  # without a graph store, the findings table is all there is
        findings = findings[findings["cluster_id"].astype(str).isin(counted_over(engine, filters))]
        over = f"{included_works(engine, filters)} {filters.counted_over}"
    found = answer_synthesis(
        asked,
        findings,
        retriever.matchers,
        retriever.library,
        _chunks_by_work(retriever.chunks.values()),
        charts_dir(retriever.query),
        include_retracted=include,
        over=over,
    )
    info = {"findings_read": len(engine.findings), **found.as_json()}
    retracted = retraction_report(found.retracted, retriever.library, include)
    if found.empty:
        return None, {**info, "refused": found.nothing()}
    draft = found.draft()

    def tabulated(kept: Draft) -> str:
        return found.markdown() if kept == draft else render_claims(kept)

    return Outcome(draft, found.sources, retracted=retracted, layout=tabulated), info


async def _global(question: str, filters: Filters, engine: QAEngine, route: RouteName) -> RouteResult:
    """Themes of the corpus from the summary tree, each with claims citing the works behind it."""
    if engine.tree is None:
        return None, {"refused": "no summary tree for this query: materialize summary_tree"}
    retriever = engine.retriever
    include = retriever.settings.include_retracted
    found = answer_from_tree(
        question, engine.tree, retriever.embedder, retriever.library, retriever.chunks, include_retracted=include
    )
    info: dict[str, Any] = {"themes": found.themes, "topics_in_tree": len(engine.tree.topics)}
    if found.empty:
        return None, {**info, "fallback": "the summary tree holds no citable sentence"}

    def themed(kept: Draft) -> str:
        return found.markdown() if kept == found.draft else render_claims(kept)

    retracted = retraction_report(found.retracted, retriever.library, include)
    return Outcome(found.draft, found.sources, retracted=retracted, layout=themed), info


async def _local(question: str, filters: Filters, engine: QAEngine, route: RouteName) -> RouteResult:
    """Hybrid retrieval and the revise loop; it always answers, with no claims when nothing was retrieved."""
    retriever = engine.retriever
    retrieval = retrieve(question, retriever)
    info: dict[str, Any] = {"retrieval_seconds": retrieval.seconds, "hops": retrieval.hops}
    context_ids = [c.chunk_id for c in retrieval.context]
    if not retrieval.context:
        return Outcome(Draft(()), [], context=context_ids, retracted=retrieval.retracted), info
    loop = await revise_until_approved(
        question, retrieval.context, engine.generator, engine.auditor, max_rounds=engine.max_rounds
    )
    outcome = Outcome(
        loop.final.draft,
        [c.metadata for c in retrieval.context],
        approved=loop.approved,
        rounds=[{"round": r.number, "draft": r.draft.as_json(), "verdict": r.verdict.as_json()} for r in loop.rounds],
        preferences=preference_records(
            query=retriever.query,
            question=question,
            context=retrieval.context,
            loop=loop,
            generator_model=engine.generator.model,
            auditor_model=engine.auditor.model,
            library=retriever.library,
        ),
        context=context_ids,
        generation=loop.generation_seconds,
        audit=loop.audit_seconds,
        looped=loop.rounds,
        retracted=retrieval.retracted,
    )
    return outcome, info


ROUTE_RUNNERS: dict[RouteName, Callable[[str, Filters, QAEngine, RouteName], Awaitable[RouteResult]]] = {
    "entities": _entities,
    "counting": _graph,
    "listing": _graph,
    "ranking": _graph,
    "statistics": _statistics,
    "trend": _trend,
    "numeric": _numeric,
    "synthesis": _synthesis,
    "global": _global,
    "local": _local,
}
#: Routes that answer from the graph: what they count or list, passages cannot.
GRAPH_ROUTES = ("entities", "counting", "listing", "ranking", "statistics", "trend")
#: The key of each route's details in the answer's JSON.
DETAILS_KEY: dict[RouteName, str] = {
    "entities": "entities",
    "counting": "symbolic",
    "listing": "symbolic",
    "ranking": "symbolic",
    "statistics": "statistics",
    "trend": "trend",
    "numeric": "numeric",
    "synthesis": "synthesis",
    "global": "global",
    "local": "local",
}


async def run_routes(
    question: str, filters: Filters, engine: QAEngine, decision: RouteDecision
) -> tuple[RouteName, Outcome, list[dict[str, Any]], dict[str, Any]]:
    """Try the decision's chain until a route answers: (route, outcome, attempts, details per route)."""
    attempts: list[dict[str, Any]] = []
    details: dict[str, Any] = {}
    for route in decision.chain:
        outcome, info = await ROUTE_RUNNERS[route](question, filters, engine, route)
        details[DETAILS_KEY[route]] = info
        if info.get("unavailable"):  # a count from passages would be a wrong answer: say what is missing
            attempts.append({"route": route, "outcome": "unavailable", "reason": info["unavailable"]})
            return route, Outcome(Draft(()), [], unavailable=info["unavailable"]), attempts, details
        reason = info.get("refused") or info.get("fallback")
        attempts.append({"route": route, "outcome": "answered" if outcome else "refused" if "refused" in info
                         else "found nothing", "reason": reason})  # fmt: skip
        if outcome is not None:
            return route, outcome, attempts, details
    return "local", Outcome(Draft(()), []), attempts, details


async def answer_question(question: str, engine: QAEngine, *, route: RouteName | None = None) -> QAResult:
    """Answer ``question`` within the engine's partition (see the module doc); ``route`` skips the router
    (to compare routes on one question)."""
    if not question or not question.strip():
        raise QAInputError('The question is empty: pass the question text, e.g. hysem ask --query SLUG "Which ...?"')
    question = " ".join(question.split())
    started = time.perf_counter()
    tokens_before = engine.tokens()
    retriever = engine.retriever
    filters = question_filters(question, retriever.matchers, entity_words(engine.schema))
    if route is None:
        decision = await choose_route(
            question,
            engine.schema,
            engine.numbers,
            engine.router,
            engine.categories,
            engine.entity_kinds,
            retriever.entities,
        )
    else:
        decision = RouteDecision(route, "the route was given", "caller")
    route_taken, outcome, attempts, route_details = await run_routes(question, filters, engine, decision)
    draft, approved = outcome.draft, outcome.approved
    started_audit = time.perf_counter()
    checked: CitationAudit = audit_citations(draft, outcome.sources, retriever.library)
    audit = outcome.audit + time.perf_counter() - started_audit
    reasons = []
    if not approved:
        reasons.append(f"the auditor did not approve the answer within {engine.max_rounds} rounds")
    if checked.removed:
        reasons.append(f"{len(checked.removed)} claim(s) removed by the citation audit")
    unverified = not approved or (bool(draft.claims) and not checked.kept.claims)
    closest = (
        closest_findings(outcome.looped, outcome.sources, retriever.library) if not checked.kept.claims else Draft(())
    )
    fell_back = [f"{a['route']}: {a['reason']}" for a in attempts[:-1] if a["reason"]]
    passages = checked.kept.claims or closest.claims
    if decision.route in GRAPH_ROUTES and route_taken not in GRAPH_ROUTES and passages:  # never shown as a count
        tried = [attempt["route"] for attempt in attempts if attempt["route"] in GRAPH_ROUTES][-1]
        said = "an entity" if tried == "entities" else f"a {tried}"
        reasons.insert(0, f"not {said} answer ({'; '.join(fell_back) or 'the graph found nothing'}): "
                       "passages that mention the question's terms instead")  # fmt: skip
    if decision.route == "synthesis" and route_taken != "synthesis":  # said even when no passage answers either
        reasons.insert(0, f"no table of findings ({'; '.join(fell_back)})"
                       + (": passages that mention the question's terms instead" if passages else ""))  # fmt: skip
    note = "; ".join(reasons) if reasons else None
    corrected = corrected_works([c["PDF_DocIndex"] for claim in passages for c in claim.citations], retriever.library)
    local = route_taken == "local"
    summary = gist(checked.kept) if local else None
    prompt_tokens, completion_tokens = (
        after - before for after, before in zip(engine.tokens(), tokens_before, strict=True)
    )
    chain = [attempt["route"] for attempt in attempts]
    route_reason = decision.reason + (f"; fell back ({'; '.join(fell_back)})" if fell_back else "")
    details = {
        "claims": checked.kept.as_json()["claims"],
        "removed_claims": checked.removed,
        "citation_checks": checked.checks,
        "rounds": outcome.rounds,
        "terms": filters.required,
        "excluded_terms": filters.excluded,
        "routing": {**decision.as_json(), "attempts": attempts},
        **route_details,
        "context": outcome.context,
        "gist": summary,
        "closest_findings": closest.as_json()["claims"],
        "retracted": outcome.retracted,
        "corrected": corrected,
    }
    no_evidence = outcome.unavailable or (NO_EVIDENCE if retriever.library else NO_ARTICLES)
    chart = (route_details.get(DETAILS_KEY[route_taken]) or {}).get("chart")
    generation = outcome.generation
    answer = {
        "query": retriever.query,
        "question": question,
        "route": route_taken,
        "route_chain": "->".join(chain),
        "route_reason": route_reason,
        "router": decision.by,
        "markdown": markdown(
            question,
            checked.kept,
            note="; ".join(n for n in (note, retraction_note(outcome.retracted), correction_note(corrected)) if n)
            or None,
            no_evidence=no_evidence,
            closest=closest,
            summary=summary,
            layout=outcome.layout,
            chart=chart["svg"] if chart else None,
        ),
        "json": json.dumps(details, ensure_ascii=False, default=str),
        "approved": approved,
        "unverified": unverified,
        "unverified_reason": note if unverified else None,
        "evidence_found": bool(checked.kept.claims),
        "unavailable": outcome.unavailable,
        "chart": chart["svg"] if chart else None,
        "claims": len(checked.kept.claims),
        "citations": sum(len(c.citations) for c in checked.kept.claims),
        "unresolved_citations": sum(check["problem"] is not None for check in checked.checks),
        "rounds": len(outcome.rounds),
        "retrieval_seconds": time.perf_counter() - started - generation - audit,
        "generation_seconds": generation,
        "audit_seconds": audit,
        "total_seconds": time.perf_counter() - started,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "generator_model": engine.generator.model,
        "auditor_model": engine.auditor.model,
    }
    return QAResult(answer, outcome.preferences)


def readable(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer record with its JSON text decoded, as ``hysem ask --json`` prints it."""
    return {**answer, "json": json.loads(answer["json"])} if isinstance(answer.get("json"), str) else answer


def answer_questions(questions: Iterable[str], engine: QAEngine) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Answer records and preference records for ``questions``, in one event loop (backends closed after)."""

    async def run() -> list[QAResult]:
        try:
            return [await answer_question(q, engine) for q in questions]
        finally:
            await engine.aclose()

    results = asyncio.run(run())
    return [r.answer for r in results], [p for r in results for p in r.preferences]
