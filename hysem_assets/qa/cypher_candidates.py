"""Model-written Cypher made dependable: worked examples in the prompt, several candidates, the agreeing one.

A model writes better Cypher for a schema it has seen used, so its prompt carries the few
template queries (built from the schema, so they hold for any protocol) whose questions
share most words with the one asked. It is sampled several times; a candidate that fails
the checks, errs in the store or answers with more names (or works, when it names none) than
a reviewer's answer can hold is discarded; among the rest, an answer outvotes "nothing
found", and the answer most candidates agree on wins (self-consistency). When none is left,
the templates answer, so a weak model never costs an answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hysem_assets.qa.cypher import CypherPlan, CypherRejected
from hysem_assets.qa.symbolic import GraphAnswer, template_plan
from hysem_assets.qa.terms import Filters
from hysem_assets.stores.graph_schema import GraphSchema

#: Worked examples a prompt carries.
EXAMPLES_SHOWN = 3


@dataclass(frozen=True)
class CypherExample:
    """A question and the template query that answers it, with its parameters' names and example values."""

    question: str
    cypher: str
    parameters: dict[str, Any]

    def as_prompt(self) -> str:
        return f"Question: {self.question}\nCypher: {self.cypher}\nParameters: {self.parameters}"


def _plural(words: Sequence[str]) -> tuple[str, str]:
    ordered = sorted(words, key=len)
    plural = next((w for w in ordered if w.endswith("s")), ordered[0])
    return plural.removesuffix("s"), plural


def example_patterns(schema: GraphSchema) -> list[CypherExample]:
    """Template queries for the schema's entity kinds: listing a kind, counting works on a term, a kind among
    works on another kind's term, and a term excluded."""
    kinds = [(spec.entity, _plural(spec.words)) for spec in schema.fields.values() if spec.entity and spec.words]
    examples = []
    for n, (label, (one, many)) in enumerate(kinds):
        other_label, (other, _) = kinds[(n + 1) % len(kinds)]
        shapes = [
            (f"Which {many} are studied, and in how many works?", label, Filters({})),
            (f"How many works report a given {one}?", None, Filters({label: [f"<{one}>"]})),
            (f"Which {many} do works on a given {other} report?", label, Filters({other_label: [f"<{other}>"]})),
            (
                f"How many works report a {one} but not a given {other}?",
                label,
                Filters({}, {other_label: [f"<{other}>"]}),
            ),
        ]
        for question, target, filters in shapes:
            plan = template_plan(schema, "<query>", target, filters)
            examples.append(CypherExample(question, plan.cypher, plan.parameters))
    return examples


def _words(text: str) -> set[str]:
    return {w.removesuffix("s") for w in re.findall(r"[a-z]+", text.casefold()) if len(w) > 2}


def closest_examples(question: str, examples: Sequence[CypherExample], k: int = EXAMPLES_SHOWN) -> list[CypherExample]:
    """The ``k`` examples whose questions share most words with ``question`` (Jaccard), in that order."""
    asked = _words(question)

    def overlap(example: CypherExample) -> float:
        words = _words(example.question)
        return len(asked & words) / len(asked | words) if asked | words else 0.0

    return sorted(examples, key=overlap, reverse=True)[:k]


@dataclass(frozen=True)
class Candidate:
    """One sampled query, or why the model gave none."""

    plan: CypherPlan | None
    problem: str | None = None


def _result(answer: GraphAnswer) -> tuple:
    """What an answer says, to compare candidates: each name with its works, or the works."""
    return tuple(sorted((name, tuple(keys)) for name, keys in answer.by_name.items())) or tuple(answer.articles)


def agreed_answer(
    candidates: Sequence[Candidate], run: Callable[[CypherPlan], GraphAnswer]
) -> tuple[GraphAnswer | None, list[dict[str, Any]]]:
    """The answer most candidates that found something agree on (the first of them on a tie), an empty answer
    when those that ran all found nothing, None when none ran; and what became of each candidate.

    ``run`` validates and runs a plan, raising :class:`CypherRejected` for one that fails or returns too much.
    """
    report: list[dict[str, Any]] = []
    ran: list[tuple[dict[str, Any], GraphAnswer]] = []
    for n, candidate in enumerate(candidates):
        entry: dict[str, Any] = {"candidate": n, "cypher": candidate.plan.cypher if candidate.plan else None}
        report.append(entry)
        if candidate.plan is None:
            entry |= {"outcome": "discarded", "reason": candidate.problem}
            continue
        try:
            answer = run(candidate.plan)
        except CypherRejected as exc:
            entry |= {"outcome": "discarded", "reason": str(exc)}
            continue
        entry |= {"outcome": "ran", "articles": len(answer.articles)}
        ran.append((entry, answer))
    if not ran:
        return None, report
    found = [(entry, answer) for entry, answer in ran if not answer.empty] or ran  # an answer outvotes "nothing"
    votes = Counter(_result(answer) for _, answer in found)
    for entry, answer in found:
        entry["agreeing"] = votes[_result(answer)]
    entry, chosen = max(found, key=lambda item: item[0]["agreeing"])  # the first of the most agreed
    entry["outcome"] = "chosen"
    return chosen, report
