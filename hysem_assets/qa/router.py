"""Which route answers a question, why, and where to go when that route finds nothing.

Ten routes: ``entities`` ranks, counts or lists the methods, tasks, metrics, materials or
diseases of the entity graph (the kind named by the words of ``config/entity_questions.yaml``,
whatever the protocol calls its fields; the route the protocol's words would take follows it),
``counting`` and ``listing`` read exact answers off the graph's entities,
``ranking`` ranks an entity kind or a field's categories by the works that report each
(counts, shares, a chart), ``statistics`` summarises a number property (median, IQR, range,
mean; by group; the largest works), ``trend`` counts works by publication year (a chart),
``numeric`` filters typed numbers (sample sizes, durations, metrics) by a comparison,
``synthesis`` tabulates what the included studies found about an intervention's effect on an
outcome (the ``findings`` table), ``global`` answers corpus-level questions from the summary
tree, and ``local`` is hybrid retrieval over chunks. Rules decide first, on wording alone and
on the words the protocol gives its fields, so routing needs no model and behaves the same on
any subject. A question no rule places goes to the summary tree when the partition's entity
graph holds none of its entities, as E²GraphRAG chooses between its global and local modes
(one naming such an entity is local, its entities' chunks joining the fusion). Then, when a
router model is configured, the model chooses; otherwise the question is local. Each route has
a fallback chain: a route that finds nothing (or whose query is refused) hands the question to
the next, and the answer records every attempt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from hysem_assets.core.matcher import matchable
from hysem_assets.llm.backend import LLMBackend
from hysem_assets.llm.completion import TokenUsage
from hysem_assets.qa.aggregates import TREND, TREND_SUBJECT, Categories, categories_in, statistics_question
from hysem_assets.qa.comparisons import parse_comparison
from hysem_assets.qa.drafts import MalformedOutput
from hysem_assets.qa.effect_questions import effect_question
from hysem_assets.qa.entity_questions import EntityKinds, EntityNames
from hysem_assets.qa.number_fields import NumberField, numeric_target
from hysem_assets.stores.graph_schema import GraphSchema

RouteName = Literal[
    "entities", "counting", "listing", "ranking", "statistics", "trend", "numeric", "synthesis", "global", "local"
]  # fmt: skip
ROUTES: tuple[RouteName, ...] = (
    "entities", "counting", "listing", "ranking", "statistics", "trend", "numeric", "synthesis", "global", "local"
)  # fmt: skip
#: Where a route hands over when it finds nothing: retrieval reads what structured routes miss.
FALLBACKS: dict[RouteName, tuple[RouteName, ...]] = {
    "entities": ("local",),
    "counting": ("local",),
    "listing": ("local",),
    "ranking": ("local",),
    "statistics": ("local",),
    "trend": ("local",),
    "numeric": ("local",),
    "synthesis": ("local",),
    "global": ("local",),
    "local": (),
}

#: Words for the works themselves, in counting and listing questions.
WORK_WORDS = (
    "article", "articles", "study", "studies", "paper", "papers", "publication", "publications", "work", "works",
    "trial", "trials", "report", "reports", "review", "reviews", "analysis", "analyses", "cohort", "cohorts",
)  # fmt: skip
_COUNTING = re.compile(
    r"\b(?:how many|number of|count(?: of)?|how often|what (?:proportion|share|fraction|percentage) of)\b", re.I
)
_LISTING = re.compile(
    r"^\s*(?:(?:can|could|would)\s+you\s+(?:please\s+)?|please\s+|i\s+(?:need|want|would\s+like)\s+(?:to\s+see\s+)?"
    r"|tell\s+me\s+)?(?:which|list|name|enumerate|show|find|give(?:\s+me)?|what\s+(?:are|were)\s+the|what(?=\s+\w+\s+"
    r"(?:are|were|have\s+been|has\s+been)\b))\b",
    re.I,
)
_FILTERING = re.compile(
    r"\b(?:studies|articles|papers|works|publications|trials)\s+(?:of|on|about|that|which|with|from|published|in"
    r"|using|used|use|report|reported|reporting|evaluat\w*|examin\w*|assess\w*|investigat\w*|analy[sz]\w*|stud\w*"
    r"|appl(?:y|ies|ied|ying)|employ\w*|focus\w*|address\w*|target\w*|explor\w*)\b",
    re.I,
)
#: What works do with entities ("which outcomes were measured"), as opposed to what they found about them
#: ("which exposures relate to ..."), which passages answer.
_STUDIED = re.compile(
    r"\b(?:us(?:e|es|ed|ing)|appl(?:y|ies|ied)|employ(?:s|ed)?|stud(?:y|ies|ied)|examin(?:e|es|ed)"
    r"|investigat(?:e|es|ed)|assess(?:es|ed)?|evaluat(?:e|es|ed)|measur(?:e|es|ed)|report(?:s|ed)?"
    r"|includ(?:e|es|ed)|consider(?:s|ed)?|analy[sz](?:e|es|ed)|compar(?:e|es|ed)|test(?:s|ed)?|cover(?:s|ed)?"
    r"|target(?:s|ed)?|there|appear(?:s|ed)?|occur(?:s|red)?|mention(?:s|ed)?|feature(?:s|d)?)\b",
    re.I,
)
#: A question about how often each entity of a kind occurs across the works: a ranking or distribution
#: ("which methods are most often used", "the most common outcomes", "distribution of study designs").
_RANKING = re.compile(
    r"\b(?:most|least)\s+(?:(?:often|frequently|commonly|widely|popular|common|frequent|prevalent|used|studied"
    r"|reported|investigated|examined|applied|employed|measured|assessed|evaluated)\b)"
    r"|\b(?:distribution|frequenc(?:y|ies)|breakdown|prevalence|popularity|tally)\s+of\b"
    r"|\btop\s+(?:\d+|three|five|ten)\b|\brank(?:ed|ing|s)?\b"
    r"|\bhow\s+(?:often|frequently|commonly)\s+(?:is|are|was|were)\s+(?:each|the\s+different|the\s+various)\b"
    r"|\band\s+how\s+(?:often|frequently|commonly)\b"
    r"|\b(?:use|used|apply|applied|employ|employed|report|reported|study|studied|rely\s+on)\s+most\s*(?:[?.!,]|$)",
    re.I,
)
#: A question that picks one entity by a property ("which exposure had the highest ...") asks what a
#: study found, which passages answer, not for a list the graph holds.
_SELECTING = re.compile(
    r"\b(?:most|least|best|worst|highest|lowest|largest|smallest|greatest|strongest|weakest|main|primary|leading"
    r"|top|only)\b",
    re.I,
)
_GLOBAL = re.compile(
    r"\b(?:(?:main|major|key|principal|common|recurring|dominant|overarching|emerging|central|overall|general)"
    r"\s+(?:research\s+)?(?:themes?|topics?|trends?|areas?|directions?|questions?|gaps?|strands?|streams?|lines?"
    r"|threads?|findings|conclusions|debates?|messages?|focus(?:es)?)"
    r"|(?:research|thematic)\s+(?:themes?|landscape|agenda|gaps?|trends?|fronts?)"
    r"|(?:summari[sz]e|overview\s+of|synthesi[sz]e|map)\s+(?:the|this|these)\s+(?:literature|corpus|field|evidence"
    r"|body|research|studies|works|papers|articles)"
    r"|across\s+(?:this|the|these)\s+(?:whole\s+|entire\s+)?(?:literature|corpus|collection|body of research"
    r"|studies|papers|articles|works)"
    r"|(?:in|of|from)\s+(?:this|these)\s+(?:whole\s+|entire\s+)?(?:literature|corpus|collection|body of research)"
    r"|what\s+(?:does|do)\s+(?:this|these)\s+(?:literature|corpus|collection)\s+(?:say|show|cover|tell)"
    r"|state of (?:the )?(?:research|art|evidence|field|literature)"
    r"|evidence\s+base|body\s+of\s+(?:evidence|research|literature|work)|as\s+a\s+whole|collectively|overarching"
    r"|high[- ]level\s+(?:synthesis|summary|overview|picture)"
    r"|overall\s+(?:summary|synthesis|overview|picture|quality|strength|certainty|consistency|state|evidence)"
    r"|(?:summary|synthesis|overview)\s+of\s+(?:the\s+)?(?:evidence|literature|field|research)"
    r"|(?:limitations|gaps|weaknesses|strengths)\s+of\s+(?:the|this)\s+(?:field|literature|evidence|research))\b",
    re.I,
)


@dataclass(frozen=True)
class RouteDecision:
    """The first route to try, why, who decided (``rules`` or a model id), and the chain after it."""

    route: RouteName
    reason: str
    by: str = "rules"
    #: The routes after it, where they are not its usual fallbacks (the entity route's: the protocol's route).
    after: tuple[RouteName, ...] | None = None

    @property
    def chain(self) -> tuple[RouteName, ...]:
        return (self.route, *(FALLBACKS[self.route] if self.after is None else self.after))

    def as_json(self) -> dict[str, Any]:
        return {"route": self.route, "reason": self.reason, "by": self.by, "chain": list(self.chain)}


def _words_near(text: str, start: int, count: int) -> list[str]:
    return re.findall(r"[\w'-]+", text[start:].casefold())[:count]


def entity_words(schema: GraphSchema) -> set[str]:
    """Every word the protocol gives its entity kinds ("outcomes", "methods")."""
    return {word.casefold() for spec in schema.fields.values() if spec.entity for word in spec.words}


def kind_in(text: str, schema: GraphSchema) -> str | None:
    """The earliest of the protocol's words for an entity kind in ``text`` ("methods", "risk factors")."""
    found = [
        (match.start(), -len(word), word)
        for word in entity_words(schema)
        if (match := re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE))
    ]
    return min(found)[2] if found else None


def _counted(question: str, match: re.Match[str], schema: GraphSchema) -> str | None:
    """What a counting phrase counts, when it is something the graph holds: works or an entity kind."""
    following = " ".join(_words_near(question, match.end(), 4))
    kind = kind_in(following, schema)
    works = next((word for word in following.split() if word in WORK_WORDS), None)
    if works is not None and (kind is None or following.index(works) < following.index(kind)):
        return "works"
    return kind


def asks_for_works(question: str) -> bool:
    """Whether the question asks which works (or how many) meet a condition, rather than what they found."""
    words = set(re.findall(r"[\w'-]+", question.casefold()))
    return bool(words & set(WORK_WORDS)) or bool(_COUNTING.search(question))


def ranked_subject(question: str, schema: GraphSchema, categories: Sequence[Categories]) -> Categories | str | None:
    """What a ranking ranks: the entity kind (the question's word for it) or the field of categories the question
    names first."""
    kind, named = kind_in(question, schema), categories_in(question, categories)
    if named is None or kind is None:
        return named or kind
    return named if first_position(question, named.words) < first_position(question, [kind]) else kind


def first_position(question: str, words: Sequence[str]) -> int:
    """Where the first of ``words`` occurs in ``question`` (hyphens and underscores read as spaces), or -1."""
    text = re.sub(r"[-_]", " ", question.casefold())
    return min((m.start() for w in words if (m := re.search(rf"\b{re.escape(w.casefold())}\b", text))), default=-1)


@dataclass(frozen=True)
class EntityAsk:
    """How a question asks about an entity kind: ``ranking``, ``counting`` or ``listing``, the words that say
    so, and the kind's words."""

    mode: Literal["ranking", "counting", "listing"]
    cue: str
    kind: str


def entity_ask(question: str, kinds: EntityKinds, categories: Sequence[Categories] = ()) -> EntityAsk | None:
    """The ranking, counting or listing of an entity kind ``question`` asks for, by the same wording the protocol's
    routes read, with the entity kinds' words; None when it asks for none (or names categories first:
    "which study designs are most common")."""
    text = matchable(question)
    kind = kinds.first(text)
    if kind is None:
        return None
    said = text[kind.start : kind.end]
    named = categories_in(question, categories)
    if named is not None and first_position(text, named.words) < first_position(text, [said]):
        return None
    if ranking := _RANKING.search(text):
        return EntityAsk("ranking", ranking.group(0), said)
    if (counting := _COUNTING.search(text)) and _counted_kind(text, counting, kinds) is not None:
        return EntityAsk("counting", counting.group(0), said)
    listing = _LISTING.search(text) if not _SELECTING.search(text) else None
    if listing and (_STUDIED.search(text) or _FILTERING.search(text)):
        following = kinds.first(" ".join(_words_near(text, listing.end(), 5)))
        if following is not None:
            return EntityAsk("listing", listing.group(0).strip(), said)
    return None


def _counted_kind(text: str, match: re.Match[str], kinds: EntityKinds) -> str | None:
    """The entity kind a counting phrase counts, when it names one before any word for works."""
    following = " ".join(_words_near(text, match.end(), 4))
    kind = kinds.first(following)
    works = next((m.start() for w in WORK_WORDS if (m := re.search(rf"\b{w}\b", following))), None)
    return kind.name if kind is not None and (works is None or kind.start < works) else None


def rule_route(
    question: str,
    schema: GraphSchema,
    numbers: Sequence[NumberField],
    categories: Sequence[Categories] = (),
    kinds: EntityKinds | None = None,
) -> RouteDecision | None:
    """The route the wording asks for, or None when no rule applies (see the module doc). With entity ``kinds``,
    a ranking, count or list of an entity kind goes to the entity graph first, then where the protocol's words
    send it; statistics, trends and numeric comparisons keep their routes."""
    decision = _wording_route(question, schema, numbers, categories)
    if kinds is None or (decision is not None and decision.route in ("statistics", "trend", "numeric")):
        return decision
    if asked := entity_ask(question, kinds, categories):
        after = decision.chain if decision and decision.route in ("ranking", "counting", "listing") else ("local",)
        reason = f'"{asked.cue} ... {asked.kind}" asks for {asked.mode} entities the entity graph holds'
        return RouteDecision("entities", reason, after=after)
    return decision


def _wording_route(
    question: str, schema: GraphSchema, numbers: Sequence[NumberField], categories: Sequence[Categories]
) -> RouteDecision | None:
    """The route the wording and the protocol's words ask for, or None."""
    if asked := statistics_question(question, numbers, categories):
        return RouteDecision("statistics", f"{asked.why}, which the graph holds")
    if (trend := TREND.search(question)) and TREND_SUBJECT.search(question) and not _GLOBAL.search(question):
        return RouteDecision("trend", f'"{trend.group(0)}" counts works by publication year')
    comparison = parse_comparison(question)
    target = numeric_target(question, comparison, numbers) if comparison else None
    if target is not None and (target.named or asks_for_works(question)):
        said = target.comparison.describe(grouped=target.field.kind != "year")
        return RouteDecision("numeric", f"compares {target.field.label} {said}: {target.why}")
    if (ranking := _RANKING.search(question)) and (subject := ranked_subject(question, schema, categories)):
        kind = subject if isinstance(subject, str) else subject.label + " values"
        return RouteDecision("ranking", f'"{ranking.group(0)}" ranks the {kind} the graph holds by their works')
    if counting := _COUNTING.search(question):
        counted = _counted(question, counting, schema)
        if counted is not None:
            return RouteDecision("counting", f'"{counting.group(0)}" counts {counted}, which the graph holds')
    listing = _LISTING.search(question) if not _SELECTING.search(question) else None
    named = kind_in(" ".join(_words_near(question, listing.end(), 5)), schema) if listing else None
    if listing and named and (_STUDIED.search(question) or _FILTERING.search(question)):
        # before corpus-wide wording: "list the outcomes reported across the corpus" asks for the entities
        return RouteDecision("listing", f'"{listing.group(0).strip()} ... {named}" lists entities the graph holds')
    if effect := effect_question(question):
        return RouteDecision("synthesis", f"an effect question: what the studies found for {effect.describe()}")
    if glob := _GLOBAL.search(question):
        return RouteDecision("global", f'"{glob.group(0)}" asks about the corpus as a whole')
    if listing and _FILTERING.search(question):
        return RouteDecision("listing", f'"{listing.group(0).strip()}" lists works filtered by what they study')
    return None


ROUTER_SYSTEM = (
    "You route questions about a collection of scientific articles. Choose one route: "
    "entities (which methods, tasks, metrics, datasets or diseases the works mention, how many, or how often), "
    "counting (how many works or entities), listing (which works or entities match named terms), "
    "ranking (which entities of a kind, such as methods or outcomes, or which categories, such as study designs, "
    "occur most often across the works), "
    "statistics (median, range, mean or the largest values of a number such as sample size, overall or by group), "
    "trend (how the number of works, or of works on something, changed over the publication years), "
    "numeric (works whose reported numbers, such as sample size, follow-up or a metric, meet a comparison), "
    "synthesis (what the studies found about the effect of an intervention or exposure on an outcome, "
    "such as whether a treatment reduces a risk or works better than another), "
    "global (themes, trends or an overview of the whole collection), "
    "local (anything answered by specific passages of a few works). Give a short reason."
)
ROUTER_SCHEMA: dict[str, Any] = {
    "title": "Route",
    "type": "object",
    "properties": {"route": {"type": "string", "enum": list(ROUTES)}, "reason": {"type": "string"}},
    "required": ["route", "reason"],
    "additionalProperties": False,
}


class Router(Protocol):
    model: str
    usage: TokenUsage

    async def choose(self, question: str) -> RouteDecision: ...


class ModelRouter:
    """A model that chooses among the routes when no rule applies."""

    def __init__(self, backend: LLMBackend) -> None:
        self.backend = backend
        self.model = backend.model
        self.usage = TokenUsage()

    async def choose(self, question: str) -> RouteDecision:
        completion = await self.backend.complete(
            [{"role": "system", "content": ROUTER_SYSTEM}, {"role": "user", "content": f"Question: {question}"}],
            schema=ROUTER_SCHEMA,
        )
        self.usage.add(completion)
        answer = completion.parsed_json
        if not isinstance(answer, dict) or answer.get("route") not in ROUTES:
            raise MalformedOutput(f"router model {self.model!r} did not name a route: {completion.text[:200]!r}")
        return RouteDecision(answer["route"], str(answer.get("reason") or "chosen by the model"), self.model)


async def choose_route(
    question: str,
    schema: GraphSchema,
    numbers: Sequence[NumberField],
    router: Router | None = None,
    categories: Sequence[Categories] = (),
    kinds: EntityKinds | None = None,
    entities: EntityNames | None = None,
) -> RouteDecision:
    """Rules first; then, with an entity graph, the summary tree for a question naming none of its entities
    (E²GraphRAG's rule); then the router model when there is one; else local retrieval."""
    if decision := rule_route(question, schema, numbers, categories, kinds):
        return decision
    if entities and not entities.found(matchable(question)):
        return RouteDecision("global", "the entity graph holds none of the question's entities: the summary tree")
    if router is not None:
        try:
            return await router.choose(question)
        except MalformedOutput as exc:
            return RouteDecision("local", f"no rule applies and the router model failed ({exc})")
    return RouteDecision(
        "local",
        "no counting, listing, ranking, statistics, trend, numeric, effect or corpus-level wording: passages answer it",
    )
