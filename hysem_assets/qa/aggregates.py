"""Statistics and trends over a partition's works: numbers summarised and compared by group, works counted by year.

Both read typed Article properties off the graph with parameterised, read-only Cypher and
compute in Python, so every number can be traced to the works behind it and the same code
serves any graph store. Which works count is decided the way the other graph routes decide
it: the canonical terms the question names, a comparison it states on a number ("studies
published since 2015", "with more than 1,000 participants"), and the categories it names
("randomised trials", "cohort studies": a category field's values and the cue phrases its
protocol lists for them). Which numbers, groups and years a question asks for is read off
its wording and the protocol alone, so nothing here knows a subject.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hysem_assets.core.matcher import TermMatcher, is_abbreviation
from hysem_assets.qa.comparisons import Comparison, format_number, parse_comparison
from hysem_assets.qa.cypher import CypherPlan, validate_cypher
from hysem_assets.qa.drafts import Claim, Draft
from hysem_assets.qa.number_fields import NumberField, NumericTarget, mentions, numeric_target
from hysem_assets.qa.numeric import bound_condition
from hysem_assets.qa.sources import Library, clean
from hysem_assets.qa.symbolic import article_relationship, describe_filters, term_conditions
from hysem_assets.qa.terms import Filters, split_negated
from hysem_assets.settings.protocols import Protocol
from hysem_assets.stores.graph import GraphStore
from hysem_assets.stores.graph_schema import GraphSchema

#: Words that ask for a summary of numbers ("median", "how large") or for the works at one end ("largest").
STATISTIC = re.compile(
    r"\b(?:median|mean|average|typical(?:ly)?|range|interquartile|iqr|spread|variation|summary statistics"
    r"|minimum|maximum|min|max"
    r"|descriptive statistics|how\s+(?:large|big|small|long)|(?P<end>largest|biggest|smallest|longest|shortest))\b",
    re.IGNORECASE,
)
#: The size of works themselves, which the count of participants measures.
_SIZE = re.compile(
    r"\b(?:(?:largest|biggest|smallest)\s+(?:\w+\s+)?(?:studies|trials|cohorts|samples|works|articles|papers)"
    r"|(?:studies|trials|cohorts|samples|works|articles|papers)\s+(?:are|were)\s+(?:the\s+)?(?:largest|biggest|smallest)"
    r"|how\s+(?:large|big|small)\s+(?:are|were|is|was)\s+(?:the\s+)?(?:studies|trials|cohorts|samples|works))\b",
    re.IGNORECASE,
)
#: Words that compare groups ("cohort studies versus trials"): a statistics question when it names groups.
_COMPARING = re.compile(r"\b(?:compar\w*|versus|vs\.?|differ\w*|contrast\w*)\b", re.IGNORECASE)
#: Words that ask how something changed over the publication years ("over time", "per year", "since 2015").
TREND = re.compile(
    r"\b(?:over\s+time|through\s+time|over\s+the\s+(?:years|decades?|(?:past|last)\s+\w+\s+(?:years|decades))"
    r"|(?:over|across|through|in)\s+(?:the\s+)?(?:(?:past|last|recent)\s+(?:\w+\s+)?)?(?:publication\s+)?(?:years|decades?)"
    r"|(?:annual|yearly)\s+(?:count|number|output|share|proportion|totals?)"
    r"|(?:upward|downward|increasing|decreasing|rising|growing|declining|publication)\s+trend"
    r"|trend\s+(?:in|of)\s+(?:the\s+)?(?:number|use|uptake|share|proportion|publications?|studies|papers|articles"
    r"|works|output|research)"
    r"|becom\w*\s+(?:more|less)\s+(?:common|frequent|popular|prevalent|widespread)"
    r"|by\s+(?:publication\s+)?year|(?:per|each|every)\s+publication\s+year|year\s+(?:by|on|over)\s+year"
    r"|(?:published|publications?|studies|articles|papers|works|trials)\s+(?:\w+\s+){0,2}?"
    r"(?:(?:per|each|every)\s+year|annually|yearly)"
    r"|time\s+trends?|temporal\s+(?:trends?|patterns?|distribution)"
    r"|(?:chang\w*|evolv\w*|grow(?:n|s|th|ing)?|grew|increas\w*|decreas\w*|declin\w*|ris(?:e[sn]?|ing)|rose|shift\w*)"
    r"\s+(?:[\w-]+\s+){0,3}?"
    r"(?:(?:since|from|after|between)\s+(?:1[89]|20)\d\d|in\s+recent\s+years))\b",
    re.IGNORECASE,
)
#: A trend question is about the works (their number, a method's use), not how a measurement changed in a study.
TREND_SUBJECT = re.compile(
    r"\b(?:use[sd]?|using|uptake|adoption|popularity|interest|number|share|proportion|research|publications?"
    r"|published|studies|articles|papers|works|trials|literature|output|attention|frequency|count)\b",
    re.IGNORECASE,
)
#: Ends asked for, and which way they sort.
_LARGEST = {"largest", "biggest", "longest"}
#: Extreme works listed: with "the largest studies", and one at each end of a summary.
TOP = 5
#: Words asking for every group of a category field ("by study design", "across designs").
_EACH_GROUP = r"(?:by|per|across|for\s+each|in\s+each|between|among|according\s+to|for\s+the\s+different)"


def _words_of(text: str) -> str:
    return re.sub(r"[-_]", " ", text.casefold())


# -- categories a question names ------------------------------------------------------------------


@dataclass(frozen=True)
class Categories:
    """A property of categories (``study_design``): its question words and a matcher for its values, which
    finds a value by its name or by the cue phrases the protocol lists for it."""

    field: str
    prop: str
    words: tuple[str, ...]
    values: TermMatcher

    @property
    def label(self) -> str:
        return self.field.replace("_", " ")


#: Words that say nothing of which category a phrase names ("studies included", "this review").
_GENERAL = {
    "a", "an", "the", "this", "these", "we", "our", "of", "in", "to", "were", "was", "is", "are", "with", "and", "or",
    "study", "studies", "trial", "trials", "review", "analysis", "included", "include", "data", "model", "models",
    "patients", "participants", "update", "overview", "chapter",
}  # fmt: skip


def group_spellings(phrases: Iterable[str]) -> list[str]:
    """The phrases that can name a category in a question: an abbreviation ("RCT"), or two or more words of which
    one says something ("cohort study", not "studies included"); a single common word names nothing for sure."""
    found = []
    for phrase in (p.strip() for p in phrases):
        words = phrase.casefold().split()
        if not phrase or "(" in phrase or len(words) > 4:
            continue
        if is_abbreviation(phrase) or (len(words) >= 2 and not set(words) <= _GENERAL and words[0] not in _GENERAL):
            found.append(phrase)
    return found


def category_fields(schema: GraphSchema, protocol: Protocol | None) -> list[Categories]:
    """Every property of categories the schema maps, with its values' spellings from the protocol (a category's
    values and cues, or a text field's dictionary)."""
    dictionaries = protocol.dictionaries() if protocol is not None else {}
    found = []
    for name, spec in schema.fields.items():
        if not spec.is_categories():
            continue
        assert spec.property is not None
        spellings: dict[str, str] = {value: value for value in spec.values}
        if protocol is not None and name in {f.name for f in protocol.fields}:
            for value, description in (protocol.field(name).values or {}).items():
                spellings.update(
                    (cue, value) for cue in group_spellings(description.split(",")) if cue not in spellings
                )
        if name in dictionaries:
            canonical = dict(dictionaries[name].spellings)
            spellings.update({value: value for value in canonical.values()})
            spellings.update((s, canonical[s]) for s in group_spellings(canonical) if s not in spellings)
        found.append(Categories(name, spec.property, tuple(spec.words), TermMatcher(spellings)))
    return found


def categories_in(question: str, categories: Sequence[Categories]) -> Categories | None:
    """The earliest property of categories the question names by its words ("study designs")."""
    text = _words_of(question)
    found = [
        (match.start(), -len(word), n)
        for n, each in enumerate(categories)
        for word in each.words
        if (match := re.search(rf"\b{re.escape(word)}\b", text))
    ]
    return categories[min(found)[2]] if found else None


@dataclass(frozen=True)
class Groups:
    """Works split by a property of categories: the values named (every value when none is), less those the
    question excludes ("excluding randomised trials")."""

    categories: Categories
    values: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    @property
    def split(self) -> bool:
        """Whether the works are split into groups: values named, or a split by the field asked for."""
        return bool(self.values) or not self.excluded


def named_groups(question: str, categories: Sequence[Categories], besides: Sequence[str] = ()) -> Groups | None:
    """The categories a question names ("randomised trials versus cohort studies") or excludes, or a field it
    asks to split by ("by study design"); None when it does none of these. The phrases ``besides`` (the number
    summarised, as the question names it) are no category."""
    for phrase in besides:
        question = re.sub(rf"\b{re.escape(phrase)}\b", " ", question, flags=re.IGNORECASE)
    kept, negated = split_negated(question)
    for each in categories:
        values, excluded = tuple(each.values.find(kept)), tuple(each.values.find(negated))
        if values or excluded:
            return Groups(each, values, excluded)
    text = _words_of(question)
    for each in categories:
        if any(
            re.search(rf"\b{_EACH_GROUP}\s+(?:the\s+|their\s+|different\s+)?{re.escape(w)}\b", text) for w in each.words
        ):
            return Groups(each)
    return None


def distribution_plan(schema: GraphSchema, query: str, categories: Categories, filters: Filters) -> CypherPlan:
    """Rows ``(name, article)``, a work's category as the name, for the ranking route: the works of partition
    ``query`` with a value that meet the terms' filters."""
    parameters: dict[str, Any] = {"query": query}
    where = [f"a.`{categories.prop}` IS NOT NULL", *conditions(schema, filters, parameters)]
    return CypherPlan(
        f"{filters.articles} WHERE {' AND '.join(where)} RETURN a.`{categories.prop}` AS name, a.key AS article",
        parameters,
    )


# -- conditions shared by both routes -------------------------------------------------------------


def conditions(
    schema: GraphSchema,
    filters: Filters,
    parameters: dict[str, Any],
    bound: NumericTarget | None = None,
    groups: Groups | None = None,
) -> list[str]:
    """Conditions on Article ``a``: the terms' filters, a comparison on a number property, the named categories."""
    found = term_conditions(schema, filters.required, parameters, excluded=filters.excluded)
    if bound is not None and bound.field.article_property is not None:
        condition, values = bound_condition(bound.field.article_property, bound.comparison)
        parameters |= values
        found.append(condition)
    if groups is not None and groups.values:
        parameters["groups"] = list(groups.values)
        found.append(f"a.`{groups.categories.prop}` IN $groups")
    if groups is not None and groups.excluded:
        parameters["other_groups"] = list(groups.excluded)
        found.append(f"NOT a.`{groups.categories.prop}` IN $other_groups")
    return found


def comparison_bound(question: str, numbers: Sequence[NumberField]) -> NumericTarget | None:
    """The comparison a question states on a number property ("since 2015", "over 1,000 participants")."""
    comparison = parse_comparison(question)
    target = numeric_target(question, comparison, numbers) if comparison else None
    return target if target is not None and target.field.article_property is not None else None


@dataclass(frozen=True)
class GraphScope:
    """Where an aggregation reads: the graph and its schema, the partition, its library, and whether retracted
    works count."""

    graph: GraphStore
    schema: GraphSchema
    query: str
    library: Library
    keep_retracted: bool = False

    def rows(self, plan: CypherPlan) -> tuple[pd.DataFrame, list[str]]:
        """The plan's rows, less the works the library marks retracted (unless kept); and those retracted."""
        validate_cypher(plan, self.schema)
        rows = self.graph.query(plan.cypher, plan.parameters)
        if rows.empty:
            return rows, []
        cluster = rows["cluster_id"].astype(str)
        retracted = sorted({c for c in cluster if c in self.library and self.library[c].retracted})
        if retracted and not self.keep_retracted:
            rows = rows[~cluster.isin(retracted)]
        return rows, retracted


def _citations(keys: Sequence[str], library: Library) -> tuple[dict[str, Any], ...]:
    return tuple(library[k].metadata(None).as_dict() for k in dict.fromkeys(keys) if k in library)


# -- statistics -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """Median, quartiles (linear interpolation, as numpy and R's default), range and mean of some works' values."""

    works: int
    median: float
    q1: float
    q3: float
    low: float
    high: float
    mean: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        array = np.asarray(values, dtype=float)
        q1, median, q3 = np.percentile(array, [25, 50, 75])
        return cls(
            len(array), float(median), float(q1), float(q3), float(array.min()), float(array.max()), float(array.mean())
        )

    def describe(self, unit: str) -> str:
        """ "median 420 participants (IQR 180-1,250), range 35-48,213, mean 2,310"; one work's value as it is."""
        if self.works == 1:
            return f"{_shown(self.median)}{unit}"
        return (
            f"median {_shown(self.median)}{unit} (IQR {_shown(self.q1)}-{_shown(self.q3)}), "
            f"range {_shown(self.low)}-{_shown(self.high)}, mean {_shown(self.mean)}"
        )

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _first_upper(text: str) -> str:
    """The text with its first letter a capital, the rest as written ("AUC" stays)."""
    return text[:1].upper() + text[1:]


def _shown(value: float) -> str:
    """A statistic as a reader wants it: whole above 100, three significant digits below."""
    return format_number(round(value) if abs(value) >= 100 else float(f"{value:.3g}"))


@dataclass(frozen=True)
class StatisticsQuestion:
    """What a statistics question asks: the number, the works at one end, groups, and a comparison on works."""

    field: NumberField
    end: str | None
    groups: Groups | None
    bound: NumericTarget | None
    why: str

    @property
    def split(self) -> bool:
        """Whether the works are summarised per group besides all together."""
        return self.groups is not None and self.groups.split


def statistics_question(
    question: str, numbers: Sequence[NumberField], categories: Sequence[Categories]
) -> StatisticsQuestion | None:
    """The number property a statistics question summarises, or None when it names none.

    A property is named by its words ("sample size", "follow-up"); "the largest studies" means the
    count of participants when the protocol has one.
    """
    match = STATISTIC.search(question) or _COMPARING.search(question)
    if match is None:
        return None
    text = _words_of(question)
    properties = [f for f in numbers if f.article_property is not None]
    named = [f for f in properties if any(mentions(text, w) for w in f.words)]
    field = next((f for f in named if f.kind != "year"), named[0] if named else None)
    why = f'"{match.group(0)}" of {field.label}' if field else ""
    if field is None and _SIZE.search(question):  # "the largest studies", "how large are the trials"
        field = next((f for f in properties if f.kind == "count"), None)
        why = f'"{match.group(0)}" of works: their {field.label}' if field else ""
    if field is None:
        return None
    bound = comparison_bound(question, numbers)
    end = match.group("end").casefold() if match.re is STATISTIC and match.group("end") else None
    groups = named_groups(question.replace("-", " "), categories, besides=field.words)
    if match.re is _COMPARING and (groups is None or not groups.values):
        return None  # "compared with" without groups is a comparison within a study, which passages answer
    return StatisticsQuestion(field, end, groups, bound, why)


@dataclass(frozen=True)
class StatisticsAnswer:
    asked: StatisticsQuestion
    filters: Filters
    rows: pd.DataFrame
    included: int
    plan: CypherPlan
    retracted: list[str]

    @property
    def empty(self) -> bool:
        return self.rows.empty

    def summaries(self) -> dict[str | None, Summary]:
        """The summary of all works (key None), then one per group, largest group first."""
        found: dict[str | None, Summary] = {None: Summary.of(self.rows["value"].tolist())}
        if self.asked.split:
            sizes = self.rows.groupby("category")["value"].agg(list)
            for group in sorted(sizes.index, key=lambda g: (-len(sizes[g]), str(g))):
                found[str(group)] = Summary.of(sizes[group])
        return found

    def as_json(self) -> dict[str, Any]:
        groups = self.asked.groups
        summaries = self.summaries() if not self.empty else {}
        return {
            "field": self.asked.field.name,
            "property": self.asked.field.article_property,
            "unit": self.asked.field.unit,
            "why": self.asked.why,
            "groups": None
            if groups is None
            else {"field": groups.categories.field, "values": list(groups.values), "excluded": list(groups.excluded)},
            "condition": None if self.asked.bound is None else self.asked.bound.comparison.text,
            "cypher": self.plan.cypher,
            "parameters": self.plan.parameters,
            "included": self.included,
            "summaries": {group or "all": summary.as_json() for group, summary in summaries.items()},
        }


def statistics_plan(schema: GraphSchema, query: str, asked: StatisticsQuestion, filters: Filters) -> CypherPlan:
    """Rows ``(article, cluster_id, title, value[, category])`` of the works stating the number and meeting every
    condition."""
    prop = asked.field.article_property
    assert prop is not None
    parameters: dict[str, Any] = {"query": query}
    where = [f"a.`{prop}` IS NOT NULL", *conditions(schema, filters, parameters, asked.bound, asked.groups)]
    returned = f"a.key AS article, a.cluster_id AS cluster_id, a.title AS title, a.`{prop}` AS value"
    if asked.groups is not None and asked.split:
        where.append(f"a.`{asked.groups.categories.prop}` IS NOT NULL")
        returned += f", a.`{asked.groups.categories.prop}` AS category"
    return CypherPlan(
        f"{filters.articles} WHERE {' AND '.join(where)} RETURN {returned}",
        parameters,
    )


def run_statistics(asked: StatisticsQuestion, scope: GraphScope, filters: Filters, included: int) -> StatisticsAnswer:
    """The works stating the number under the question's conditions; ``included``: the partition's works."""
    plan = statistics_plan(scope.schema, scope.query, asked, filters)
    rows, retracted = scope.rows(plan)
    if not rows.empty:
        rows = rows.assign(value=rows["value"].astype(float), cluster_id=rows["cluster_id"].astype(str))
    return StatisticsAnswer(asked, filters, rows, included, plan, retracted)


def describe_conditions(filters: Filters, bound: NumericTarget | None, groups: Groups | None) -> str:
    """ " (filters: Label: term; not Label: term; publication year at least 2015)", or "" without any."""
    said = [describe_filters(filters.required, filters.excluded)] if filters.required or filters.excluded else []
    if bound is not None:
        said.append(f"{bound.field.label} {bound.comparison.describe(grouped=bound.field.kind != 'year')}")
    if groups is not None and groups.values:
        said.append(f"{groups.categories.label}: {', '.join(groups.values)}")
    if groups is not None and groups.excluded:
        said.append(f"not {groups.categories.label}: {', '.join(groups.excluded)}")
    return f" (filters: {'; '.join(said)})" if said else ""


def statistics_draft(found: StatisticsAnswer, library: Library) -> Draft:
    """The summary of all works stating the number, one per group, and the works at the ends, each cited."""
    asked, rows = found.asked, found.rows
    unit = f" {asked.field.unit}" if asked.field.unit else ""
    label = asked.field.label
    summaries = found.summaries()
    overall = summaries.pop(None)
    grouped = f" and a {asked.groups.categories.label}" if asked.groups is not None and asked.split else ""
    said = describe_conditions(found.filters, asked.bound, asked.groups)
    missing = [v for v in asked.groups.values if v not in summaries] if asked.groups is not None else []
    if missing:
        said += f" (none of the works of {', '.join(missing)} states one)"
    claims = [
        Claim(
            f"{overall.works} of {found.included} {found.filters.counted_over} state a {label}{grouped}{said}: "
            f"{overall.describe(unit)}.",
            _citations(list(rows["cluster_id"]), library),
        )
    ]
    if asked.split:
        by_group = rows.assign(category=rows["category"].astype(str)).groupby("category")["cluster_id"].agg(list)
        claims += [
            Claim(
                f"{group}: {summary.works} work{'s' * (summary.works != 1)}, {summary.describe(unit)}.",
                _citations(by_group[group], library),
            )
            for group, summary in summaries.items()
        ]
    largest_first = asked.end is None or asked.end in _LARGEST
    ordered = rows.sort_values(["value", "cluster_id"], ascending=[not largest_first, True])
    if asked.end:
        ranks = ("", "2nd ", "3rd ", *(f"{n}th " for n in range(4, TOP + 1)))
        ends = [
            (_first_upper(f"{ranks[n]}{asked.end} {label}"), row)
            for n, row in enumerate(ordered.head(TOP).itertuples())
        ]
    else:
        ends = [(f"Largest {label}", next(ordered.itertuples())), (f"Smallest {label}", ordered.iloc[::-1].iloc[0])]
    for said_end, row in ends[: len(rows)]:
        title = clean(row.title)
        named = f", {str(title).rstrip('.')}" if title else ""
        claims.append(
            Claim(f"{said_end}: {format_number(row.value)}{unit}{named}.", _citations([row.cluster_id], library))
        )
    return Draft(tuple(claims))


# -- trends ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrendQuestion:
    """Which works a trend counts: the entity kind they report (label) and the conditions, besides terms."""

    label: str | None
    bound: NumericTarget | None
    groups: Groups | None


def trend_question(
    question: str, label: str | None, numbers: Sequence[NumberField], categories: Sequence[Categories]
) -> TrendQuestion:
    groups = named_groups(question, categories)
    bound = comparison_bound(question, numbers)
    comparison = parse_comparison(question)
    year = next((f for f in numbers if f.kind == "year"), None)
    if bound is None and comparison is not None and year is not None and _is_year(comparison):
        bound = NumericTarget(year, comparison, "a year bounds a trend's publication years", named=True)
    return TrendQuestion(label, bound, groups if groups and (groups.values or groups.excluded) else None)


def _is_year(comparison: Comparison) -> bool:
    """A bound without a unit that is a plausible publication year ("since 2015")."""
    values = [v for v in (comparison.low, comparison.high) if v is not None]
    return comparison.unit is None and all(float(v).is_integer() and 1800 <= v <= 2100 for v in values)


def trend_plans(
    schema: GraphSchema, query: str, asked: TrendQuestion, filters: Filters
) -> tuple[CypherPlan, CypherPlan]:
    """Rows ``(article, cluster_id, year)``: of the works the trend counts, and of every included work with a year
    (each year's total), both within the question's years."""
    years = asked.bound if asked.bound is not None and asked.bound.field.kind == "year" else None
    head = filters.articles
    returned = "RETURN DISTINCT a.key AS article, a.cluster_id AS cluster_id, a.year AS year"
    parameters: dict[str, Any] = {"query": query}
    where = ["a.year IS NOT NULL", *conditions(schema, filters, parameters, asked.bound, asked.groups)]
    if asked.label is not None and not filters.required.get(asked.label):
        relationship = article_relationship(schema, asked.label)
        where.append(f"EXISTS {{ MATCH (a)-[:`{relationship}`]->(:`{asked.label}`) }}")
    all_parameters: dict[str, Any] = {"query": query}
    all_where = ["a.year IS NOT NULL", *conditions(schema, Filters({}), all_parameters, years)]  # the same works
    return (
        CypherPlan(f"{head} WHERE {' AND '.join(where)} {returned}", parameters),
        CypherPlan(f"{head} WHERE {' AND '.join(all_where)} {returned}", all_parameters),
    )


@dataclass(frozen=True)
class TrendAnswer:
    asked: TrendQuestion
    filters: Filters
    #: year -> the counted works' cluster ids, and every included work's, over the years between the first
    #: and last year any work has (years without a work show as none).
    counted: dict[int, list[str]]
    totals: dict[int, list[str]]
    plan: CypherPlan
    retracted: list[str]

    @property
    def empty(self) -> bool:
        return not any(self.counted.values())

    def what(self, kind: str | None) -> str:
        """What was counted, in words: the terms, categories and kind named, else every work."""
        named = [name for names in self.filters.required.values() for name in names]
        if self.asked.groups is not None:
            named += list(self.asked.groups.values)
        if named:
            return "works on " + ", ".join(named)
        return f"works reporting {kind}" if kind else self.filters.counted_over

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.asked.label,
            "condition": None if self.asked.bound is None else self.asked.bound.comparison.text,
            "groups": None if self.asked.groups is None else list(self.asked.groups.values),
            "excluded_groups": None if self.asked.groups is None else list(self.asked.groups.excluded),
            "cypher": self.plan.cypher,
            "parameters": self.plan.parameters,
            "years": {str(y): {"works": len(self.counted[y]), "of": len(self.totals[y])} for y in self.totals},
        }


def _by_year(rows: pd.DataFrame) -> dict[int, list[str]]:
    found: dict[int, list[str]] = defaultdict(list)
    for year, cluster in zip(rows.get("year", []), rows.get("cluster_id", []), strict=True):
        if (year := clean(year)) is not None:
            found[int(year)].append(str(cluster))
    return {year: sorted(set(works)) for year, works in found.items()}


def run_trend(asked: TrendQuestion, scope: GraphScope, filters: Filters) -> TrendAnswer:
    """The counted works and all works per publication year, over the years the partition's works span."""
    plan, all_plan = trend_plans(scope.schema, scope.query, asked, filters)
    counted_rows, retracted = scope.rows(plan)
    total_rows, _ = scope.rows(all_plan)
    counted, totals = _by_year(counted_rows), _by_year(total_rows)
    years = range(min(totals), max(totals) + 1) if totals else range(0)
    return TrendAnswer(
        asked,
        filters,
        {y: counted.get(y, []) for y in years},
        {y: totals.get(y, []) for y in years},
        plan,
        retracted,
    )


def trend_draft(found: TrendAnswer, kind: str | None, library: Library) -> Draft:
    """The counted works over the years, where they peak, the first and second half compared, then each year
    with its count and share of that year's works, each cited."""
    what = found.what(kind)
    years = [y for y in found.counted if found.totals[y]]
    counted = sum(len(found.counted[y]) for y in years)
    total = sum(len(found.totals[y]) for y in years)
    peak = max(years, key=lambda y: (len(found.counted[y]), y))
    said = describe_conditions(Filters({}, found.filters.excluded), found.asked.bound, None)
    every = [c for y in years for c in found.counted[y]]
    over = found.filters.counted_over
    filtered = counted != total or found.what(kind) != over
    published = f"{years[0]}-{years[-1]}{said}"
    if filtered:
        head = f"{counted} {what} among the {total} {over} published {published}; the most in {peak} "
        head += f"({len(found.counted[peak])} of {len(found.totals[peak])})."
    else:
        head = f"{total} {over} were published {published}; the most in {peak} ({len(found.counted[peak])})."
    claims = [Claim(head, _citations(every, library))]
    if len(years) >= 4:
        middle = len(years) // 2
        early, late = years[:middle], years[middle:]

        def share(part: Sequence[int]) -> str:
            n, of = sum(len(found.counted[y]) for y in part), sum(len(found.totals[y]) for y in part)
            return f"{n} of {of} ({n / of:.0%}) in {part[0]}-{part[-1]}" if filtered else f"{n} in {part[0]}-{part[-1]}"

        claims.append(Claim(f"{share(early)}, against {share(late)}.", _citations(every, library)))
    for year in years:
        works, of = found.counted[year], len(found.totals[year])
        if works:
            count = f"{len(works)} of {of} works ({len(works) / of:.0%})" if filtered else f"{of} work{'s' * (of != 1)}"
            claims.append(Claim(f"{year}: {count}.", _citations(works, library)))
    return Draft(tuple(claims))
