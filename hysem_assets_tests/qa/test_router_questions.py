"""Route accuracy on 201 reviewer questions over the two bundled protocols, several phrasings per
route. The rules were tuned on the questions whose digest puts them in the tuning split; the held-out
third is scored apart (1.000 and 1.000 today; 0.95 is the bar). And on 176 questions other writers phrased
without seeing the rules (0.963 and 0.927; 0.90 is the bar, and the synthesis route moved neither)."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import pytest
import yaml

from hysem_assets.qa.aggregates import category_fields
from hysem_assets.qa.number_fields import number_fields
from hysem_assets.qa.router import ROUTES, rule_route
from hysem_assets.settings.protocols import load_protocol, load_protocols
from hysem_assets.stores.graph_schema import graph_schema

QUESTIONS = Path(__file__).with_name("data") / "router_questions.yaml"


def held_out(question: str) -> bool:
    """One question in three, by its digest: never looked at while the rules were tuned."""
    return int(hashlib.sha256(question.encode()).hexdigest(), 16) % 3 == 0


@cache
def labelled() -> list[tuple[str, str, str]]:
    data = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    return [
        (protocol, question, route)
        for protocol, routes in data.items()
        for route, qs in routes.items()
        for question in qs
    ]


def route_of(protocol: str, question: str) -> str:
    chosen = load_protocol(protocol)
    schema = graph_schema(load_protocols(), chosen)
    decision = rule_route(question, schema, number_fields(schema, chosen), category_fields(schema, chosen))
    return decision.route if decision else "local"  # no rule and no router model: retrieval


def test_the_set_covers_every_route_with_both_protocols_in_both_splits():
    rows = labelled()
    assert len(rows) >= 100
    for protocol in ("pollution-cardio-ml", "generic"):
        for route in ROUTES[1:]:  # the entity route has its own set, with its words (test_entity_questions.py)
            phrasings = [q for p, q, r in rows if p == protocol and r == route]
            assert len(phrasings) >= 8, (protocol, route)
            assert any(held_out(q) for q in phrasings) and not all(held_out(q) for q in phrasings), (protocol, route)


@pytest.mark.parametrize("split", ["tuning", "held-out"])
def test_route_accuracy(split: str):
    rows = [row for row in labelled() if held_out(row[1]) == (split == "held-out")]
    wrong = [(p, q, r, got) for p, q, r in rows if (got := route_of(p, q)) != r]
    accuracy = 1 - len(wrong) / len(rows)
    print(f"{split}: {accuracy:.3f} of {len(rows)} questions")
    assert accuracy >= 0.95, "\n".join(f"{p}: {q!r} should be {r}, routed {got}" for p, q, r, got in wrong)


OTHERS = Path(__file__).with_name("data") / "router_questions_others.yaml"


@pytest.mark.parametrize("written", ["a", "b"])
def test_route_accuracy_on_questions_other_writers_phrased(written: str):
    """Set a tuned the rules; set b was scored after (0.927). Their misses ask for what the graph holds as text,
    not as entities (settings, comparators, populations), which passages answer."""
    sets = yaml.safe_load(OTHERS.read_text(encoding="utf-8"))[written]
    rows = [(p, q, r) for p, routes in sets.items() for r, qs in routes.items() for q in qs]
    wrong = [(p, q, r, got) for p, q, r in rows if (got := route_of(p, q)) != r]
    accuracy = 1 - len(wrong) / len(rows)
    print(f"set {written}: {accuracy:.3f} of {len(rows)} questions")
    assert len(rows) >= 80 and accuracy >= 0.9, "\n".join(
        f"{p}: {q!r} should be {r}, routed {got}" for p, q, r, got in wrong
    )
