"""Which number a question's comparison is about: a number field of the protocol, or the publication year.

Everything comes from the protocol, so it works on any subject: the field's name as a
question writes it ("sample size", "follow-up"), its unit ("participants", "years"; months,
weeks and days convert to the field's unit), its kind (a count of the people or events the
extractor counts), or, for fields with several records per work, the metric or measure the
question names ("AUC", "HR": a dictionary's names, the extractor's measures and the names
extracted, each also by its initials). A comparison no field fits is no numeric question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from hysem_assets.core.matcher import TermMatcher

# The nouns the extractor counts people and events with: a question counting them means a count field.
from hysem_assets.extraction.numbers import _POPULATION
from hysem_assets.findings.estimates import MEASURES
from hysem_assets.qa.comparisons import Comparison, years_per
from hysem_assets.qa.sources import clean
from hysem_assets.settings.protocols import Protocol
from hysem_assets.stores.graph_schema import GraphSchema

_COUNTED = re.compile(rf"^(?:{_POPULATION})$", re.IGNORECASE)
YEAR_WORDS = ("published", "publication", "publication year", "year of publication")


@dataclass(frozen=True)
class NumberField:
    """A number a question can filter on: an Article property (Cypher) or records in ``extracted_fields``.

    ``names`` finds the metric or measure names of a records field in a question.
    """

    name: str
    kind: str
    unit: str | None
    words: tuple[str, ...]
    article_property: str | None = None
    names: TermMatcher | None = None

    @property
    def records(self) -> bool:
        return self.article_property is None

    @property
    def label(self) -> str:
        return "publication year" if self.kind == "year" else self.name.replace("_", " ")


def _name_words(name: str, unit: str | None = None) -> tuple[str, ...]:
    """A field name as a question writes it: "follow_up" -> "follow up"; plural and singular. A count of a unit
    is also asked for as "the number of <unit>" ("the median number of participants")."""
    phrase = name.replace("_", " ").strip()
    counted = (f"number of {unit}",) if unit and unit.endswith("s") else ()
    return tuple(dict.fromkeys((phrase, phrase.removesuffix("s"), phrase.removesuffix("s") + "s", *counted)))


def acronym(name: str) -> str | None:
    """ "hazard ratio" -> "HR": measures are asked for by their initials as often as by name."""
    words = re.findall(r"[A-Za-z]+", name)
    return "".join(w[0] for w in words).upper() if len(words) > 1 else None


def records_of(extracted: pd.DataFrame | None, field: str) -> Iterable[dict[str, Any]]:
    """Every record of a records field (JSON text per work), each with its work's ``cluster_id``."""
    if extracted is None or field not in extracted.columns:
        return
    for cluster_id, value in zip(extracted["cluster_id"], extracted[field], strict=True):
        items = json.loads(value) if isinstance(value, str) and value.strip().startswith("[") else value
        if isinstance(items, list):
            for item in items:
                if isinstance(item, Mapping):
                    yield {**item, "cluster_id": str(cluster_id)}


def record_names(field: str, extracted: pd.DataFrame | None, spellings: Mapping[str, str] | None) -> TermMatcher:
    """Names of a records field's values: the field's dictionary (or the extractor's measures), and the names
    extracted, each with its initials."""
    found: dict[str, str] = dict(spellings or {})
    for name, canonical in list(found.items()):
        if (short := acronym(name)) is not None:
            found.setdefault(short, canonical)
    for record in records_of(extracted, field):
        name = clean(record.get("name") or record.get("measure"))
        if isinstance(name, str) and name.strip():
            canonical = found.get(name, name)
            found.setdefault(name, canonical)
            if short := acronym(name):
                found.setdefault(short, canonical)
    return TermMatcher(found)


def number_fields(
    schema: GraphSchema, protocol: Protocol | None = None, extracted: pd.DataFrame | None = None
) -> list[NumberField]:
    """Every number a question may filter on: the schema's number properties, the protocol's records fields,
    and the publication year."""
    numbers = [
        NumberField(
            name,
            spec.kind or "quantity",
            spec.unit,
            _name_words(name, spec.unit if spec.kind == "count" else None),
            article_property=spec.property,
        )
        for name, spec in schema.fields.items()
        if spec.is_number()
    ]
    if protocol is not None:
        dictionaries = {name: dict(d.spellings) for name, d in protocol.dictionaries().items()}
        for spec in protocol.fields:
            if spec.records:
                known = dictionaries.get(spec.name) or (
                    {measure: measure for measure in MEASURES} if spec.number_kind == "effect_estimate" else {}
                )
                names = record_names(spec.name, extracted, known)
                numbers.append(NumberField(spec.name, spec.number_kind, spec.unit, _name_words(spec.name), names=names))
    numbers.append(NumberField("year", "year", None, YEAR_WORDS, article_property="year"))
    return numbers


@dataclass(frozen=True)
class NumericTarget:
    """The field a comparison is about, the comparison in the field's unit, why, and the record names asked for."""

    field: NumberField
    comparison: Comparison
    why: str
    named: bool
    names: tuple[str, ...] = ()


def mentions(text: str, phrase: str) -> bool:
    """Whether ``text`` (folded) has ``phrase`` as whole words."""
    return re.search(rf"\b{re.escape(phrase.casefold())}\b", text) is not None


def _same_unit(a: str, b: str) -> bool:
    a, b = a.casefold(), b.casefold()
    return a == b or a.removesuffix("s") == b.removesuffix("s")


def _fit(question: str, comparison: Comparison, field: NumberField) -> tuple[int, str, Comparison, tuple[str, ...]]:
    """How well ``field`` fits the question (0: not at all), why, the comparison in its unit, names asked for."""
    text = re.sub(r"[-_]", " ", question.casefold())
    score, reasons, converted, names = 0, [], comparison, ()
    if word := next((w for w in field.words if mentions(text, w)), None):
        score, reasons = score + 2, [f'the question names "{word}"']
    unit = comparison.unit
    if field.kind == "year":
        whole = comparison.low if comparison.low is not None else comparison.high
        if unit is None and whole is not None and float(whole).is_integer() and 1800 <= whole <= 2100 and score:
            return 3, "a year with publication wording", comparison, ()
        return 0, "", comparison, ()
    if field.records:
        assert field.names is not None
        names = tuple(field.names.find(question))
        if names:
            score, reasons = score + 3, [*reasons, f"it names {', '.join(names)}"]
        elif not score:
            return 0, "", comparison, ()
    if unit and field.unit and _same_unit(unit, field.unit):
        score, reasons = score + 3, [*reasons, f'"{unit}" is its unit']
    elif unit and field.kind == "duration" and (per := years_per(unit)) is not None:
        target = years_per(field.unit) or 1.0
        converted = comparison.scaled(per / target)
        score, reasons = score + 2, [*reasons, f'"{unit}" is a duration, converted to {field.unit or "years"}']
    elif unit and field.kind == "count" and _COUNTED.match(unit):
        score, reasons = score + 1, [*reasons, f'"{unit}" are counted']
    elif unit and score and field.unit and not field.records:
        return 0, "", comparison, ()  # another unit than the field's: not this field
    return score, "; ".join(reasons), converted, names


def numeric_target(question: str, comparison: Comparison, fields: Sequence[NumberField]) -> NumericTarget | None:
    """The field the question's comparison is about, or None when no field fits."""
    best: tuple[int, int, NumericTarget] | None = None
    for order, candidate in enumerate(fields):
        score, why, converted, names = _fit(question, comparison, candidate)
        if score and (best is None or score > best[0]):
            named = any(mentions(re.sub(r"[-_]", " ", question.casefold()), w) for w in candidate.words) or bool(names)
            best = (score, -order, NumericTarget(candidate, converted, why, named, names))
    return best[2] if best else None
