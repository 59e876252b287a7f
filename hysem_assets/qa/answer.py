"""Answering one question end to end: route, retrieve, draft and audit, check citations, record.

The symbolic route answers listing and counting questions from the graph, counts exact;
when it is refused (invalid Cypher) or finds nothing, hybrid retrieval takes over and the
reason is kept. The hybrid route runs the revise loop over the retrieved context. Either
way the citation audit has the last word, and the record says how long each stage took.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hysem_assets.knowledge.schema import GraphSchema
from hysem_assets.qa.agents import Auditor, CypherWriter, Generator
from hysem_assets.qa.citations import CitationAudit, audit_citations
from hysem_assets.qa.cypher import CypherRejected
from hysem_assets.qa.drafts import Claim, Draft, MalformedOutput, render_claims
from hysem_assets.qa.loop import revise_until_approved
from hysem_assets.qa.preferences import preference_records
from hysem_assets.qa.retrieval import Retriever, retrieve
from hysem_assets.qa.sources import SourceMetadata
from hysem_assets.qa.symbolic import GraphAnswer, describe_filters, route, run_plan, target_label, template_plan
from hysem_assets.qa.terms import Terms, recognise_terms

NO_EVIDENCE = "No evidence found in the indexed literature for this question."


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

    def _agents(self) -> list[Any]:
        return [a for a in (self.generator, self.auditor, self.cypher_writer) if a is not None]

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


def graph_draft(found: GraphAnswer, terms: Terms, target: str | None) -> Draft:
    """Claims read off the graph: the total, then each name with its article count, citing the articles."""

    def cite(keys: Iterable[str]) -> tuple[dict[str, Any], ...]:
        return tuple(found.records[k].metadata(None).as_dict() for k in keys if k in found.records)

    total = len(found.articles)
    claims = [
        Claim(
            f"{total} article{'s' * (total != 1)} in the graph match (filters: {describe_filters(terms)}).",
            cite(found.articles),
        )
    ]
    if target is not None:
        claims += [
            Claim(f"{name}: {len(keys)} article{'s' * (len(keys) != 1)}.", cite(keys))
            for name, keys in found.by_name.items()
        ]
    return Draft(tuple(claims))


def markdown(question: str, draft: Draft, *, note: str | None = None) -> str:
    body = render_claims(draft) if draft.claims else NO_EVIDENCE
    cited = {c.get("FullCitation") or c.get("DOI") for claim in draft.claims for c in claim.citations}
    references = "\n".join(f"- {ref}" for ref in sorted(r for r in cited if r))
    parts = [f"**{question}**", body]
    if note:
        parts.append(f"_{note}_")
    if references:
        parts.append(f"References:\n{references}")
    return "\n\n".join(parts)


async def _symbolic(question: str, terms: Terms, engine: QAEngine) -> tuple[GraphAnswer | None, dict[str, Any]]:
    """The graph's answer, or None with the reason hybrid retrieval takes over."""
    retriever = engine.retriever
    target = target_label(question, engine.schema)
    try:
        if engine.cypher_writer is not None:
            plan = await engine.cypher_writer.write(question, terms, engine.schema, retriever.query)
        else:
            plan = template_plan(engine.schema, retriever.query, target, terms)
        found = run_plan(retriever.graph, engine.schema, plan, retriever.query, retriever.library)
    except (CypherRejected, MalformedOutput) as exc:
        return None, {"refused": str(exc)}
    info = {
        "cypher": found.plan.cypher,
        "parameters": found.plan.parameters,
        "author": found.plan.author,
        "target": target,
    }
    if found.empty:
        return None, {**info, "fallback": "the symbolic query found nothing"}
    return found, info


async def answer_question(question: str, engine: QAEngine) -> QAResult:
    """Answer ``question`` within the engine's partition (see the module doc)."""
    if not question or not question.strip():
        raise QAInputError('The question is empty: pass the question text, e.g. hysem ask --query SLUG "Which ...?"')
    question = " ".join(question.split())
    started = time.perf_counter()
    tokens_before = engine.tokens()
    retriever = engine.retriever
    terms = recognise_terms(question, retriever.matchers)
    chosen_route = route(question) if retriever.graph is not None else "hybrid"
    symbolic_info: dict[str, Any] = {}
    found: GraphAnswer | None = None
    if chosen_route == "symbolic":
        found, symbolic_info = await _symbolic(question, terms, engine)
    retrieval_seconds = time.perf_counter() - started
    preferences: list[dict[str, Any]] = []
    rounds: list[dict[str, Any]] = []
    generation = audit = 0.0
    context_ids: list[str] = []
    if found is not None:
        route_taken = "symbolic"
        draft = graph_draft(found, terms, symbolic_info["target"])
        sources: Sequence[SourceMetadata] = [record.metadata(None) for record in found.records.values()]
        approved = True
    else:
        route_taken = "hybrid" if chosen_route == "hybrid" else "symbolic->hybrid"
        retrieval = retrieve(question, retriever)
        retrieval_seconds += retrieval.seconds
        context_ids = [c.chunk_id for c in retrieval.context]
        sources = [c.metadata for c in retrieval.context]
        if retrieval.context:
            loop = await revise_until_approved(
                question, retrieval.context, engine.generator, engine.auditor, max_rounds=engine.max_rounds
            )
            generation, audit = loop.generation_seconds, loop.audit_seconds
            draft, approved = loop.final.draft, loop.approved
            rounds = [
                {"round": r.number, "draft": r.draft.as_json(), "verdict": r.verdict.as_json()} for r in loop.rounds
            ]
            preferences = preference_records(
                query=retriever.query,
                question=question,
                context=retrieval.context,
                loop=loop,
                generator_model=engine.generator.model,
                auditor_model=engine.auditor.model,
            )
        else:
            draft, approved = Draft(()), True
    started_audit = time.perf_counter()
    checked: CitationAudit = audit_citations(draft, sources, retriever.library)
    audit += time.perf_counter() - started_audit
    reasons = []
    if not approved:
        reasons.append(f"the auditor did not approve the answer within {engine.max_rounds} rounds")
    if checked.removed:
        reasons.append(f"{len(checked.removed)} claim(s) removed by the citation audit")
    unverified = not approved or (bool(draft.claims) and not checked.kept.claims)
    note = "; ".join(reasons) if reasons else None
    prompt_tokens, completion_tokens = (
        after - before for after, before in zip(engine.tokens(), tokens_before, strict=True)
    )
    details = {
        "claims": checked.kept.as_json()["claims"],
        "removed_claims": checked.removed,
        "citation_checks": checked.checks,
        "rounds": rounds,
        "terms": terms,
        "symbolic": symbolic_info,
        "context": context_ids,
    }
    answer = {
        "query": retriever.query,
        "question": question,
        "route": route_taken,
        "markdown": markdown(question, checked.kept, note=note),
        "json": json.dumps(details, ensure_ascii=False, default=str),
        "approved": approved,
        "unverified": unverified,
        "unverified_reason": note if unverified else None,
        "evidence_found": bool(checked.kept.claims),
        "claims": len(checked.kept.claims),
        "citations": sum(len(c.citations) for c in checked.kept.claims),
        "unresolved_citations": sum(check["problem"] is not None for check in checked.checks),
        "rounds": len(rounds),
        "retrieval_seconds": retrieval_seconds,
        "generation_seconds": generation,
        "audit_seconds": audit,
        "total_seconds": time.perf_counter() - started,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "generator_model": engine.generator.model,
        "auditor_model": engine.auditor.model,
    }
    return QAResult(answer, preferences)


def answer_questions(questions: Iterable[str], engine: QAEngine) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Answer records and preference records for ``questions``, in one event loop (backends closed after)."""

    async def run() -> list[QAResult]:
        try:
            return [await answer_question(q, engine) for q in questions]
        finally:
            await engine.aclose()

    results = asyncio.run(run())
    return [r.answer for r in results], [p for r in results for p in r.preferences]
