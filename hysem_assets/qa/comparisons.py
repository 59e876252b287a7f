"""Comparisons a question states about a number: "more than 10,000 participants", "at least 5 years".

Reviewers write numbers every way ("10 000", "10,000", "10k", "ten thousand", "1.5 million")
and bound them with words ("above", "over", "at least", "no more than", "under", "between 2
and 5", "10,000 or more"). One parse turns them into an operator, bounds and the unit word
written after the number, so the numeric route can filter typed values with parameters
instead of matching text. Durations are brought to the unit a field stores ("18 months" is
1.5 years), so a question and the graph agree whatever unit either uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from hysem_assets.core.matcher import matchable

# The extractor's reading of a written amount (digits with any group separator, or words, and a scale word),
# so questions and extraction agree on what a number is.
from hysem_assets.extraction.numbers import _AMOUNT, parse_amount

Operator = Literal[">", ">=", "<", "<=", "between"]

_OPERATORS: tuple[tuple[str, Operator], ...] = (
    (r"no (?:more|greater|larger|higher) than|not (?:more|greater|larger|higher) than|at most|up to|a maximum of"
     r"|maximum of|<=|≤|=<", "<="),
    (r"no (?:less|fewer|lower|smaller) than|not (?:less|fewer|lower|smaller) than|at least|a minimum of|minimum of"
     r"|>=|≥|=>", ">="),
    (r"(?:more|greater|larger|higher|bigger|longer) than|above|over|exceeding|exceeds?|exceeded|in excess of"
     r"|upwards of|>", ">"),
    (r"(?:less|fewer|lower|smaller|shorter) than|below|under|beneath|<", "<"),
)  # fmt: skip
_PREFIX = "|".join(f"(?P<op{n}>{words})" for n, (words, _) in enumerate(_OPERATORS))
_UNIT = r"(?:\s*(?P<unit>%|[^\W\d_]+(?:[-/][^\W\d_]+)?))?"


def _amount(name: str) -> str:
    """The extractor's amount pattern with its groups renamed ``name``, ``name_scale``, and a "k" suffix."""
    renamed = _AMOUNT.replace("(?P<amount>", f"(?P<{name}>").replace("(?P<scale>", f"(?P<{name}_scale>")
    return rf"{renamed}(?:(?P<{name}_k>[kK])\b)?"


_BOUNDED = re.compile(rf"(?<![\w.])(?:{_PREFIX})\s*{_amount('value')}{_UNIT}", re.IGNORECASE)
_RANGE = re.compile(
    rf"(?<![\w.])(?:between|from)\s+{_amount('low')}(?:\s*(?P<low_unit>%|[^\W\d_]+))?\s+(?:and|to)\s+"
    rf"{_amount('high')}{_UNIT}",
    re.IGNORECASE,
)
_SUFFIXED = re.compile(
    rf"(?<![\w.]){_amount('value')}{_UNIT}?\s+(?:or|and)\s+(?P<suffix>more|greater|higher|above|over|longer"
    rf"|less|fewer|lower|below|under|shorter)\b(?:\s+(?P<after_unit>[^\W\d_]+))?",
    re.IGNORECASE,
)
#: Years bounded by time words ("published after 2020", "since 2015", "before 2010").
_YEAR = re.compile(
    r"(?<![\w.])(?P<word>after|since|from|before|prior to|until|through|up to)\s+(?P<year>1[89]\d\d|2[01]\d\d)(?!\d|\.\d)",
    re.IGNORECASE,
)
#: Years bounded by a word after them ("in 2021 or later", "2010 or earlier").
_YEAR_SUFFIXED = re.compile(
    r"(?<![\w.])(?P<year>1[89]\d\d|2[01]\d\d)\s+or\s+(?P<word>later|after|since|newer|more recently|earlier"
    r"|before|older|prior)\b",
    re.IGNORECASE,
)
_YEAR_SUFFIX_OPERATORS: dict[str, Operator] = {
    **dict.fromkeys(("later", "after", "since", "newer", "more recently"), ">="),
    **dict.fromkeys(("earlier", "before", "older", "prior"), "<="),
}
_YEAR_OPERATORS: dict[str, Operator] = {
    "after": ">", "since": ">=", "from": ">=", "before": "<", "prior to": "<", "until": "<=", "through": "<=",
    "up to": "<=",
}  # fmt: skip
_SUFFIX_OPERATORS: dict[str, Operator] = {
    **dict.fromkeys(("more", "greater", "higher", "above", "over", "longer"), ">="),
    **dict.fromkeys(("less", "fewer", "lower", "below", "under", "shorter"), "<="),
}
#: Unit words that say nothing about what is measured.
_NOT_UNITS = {"and", "or", "of", "in", "the", "a", "an", "to", "with", "for", "per", "than", "who", "that", "which"}
#: A duration's length in years, by unit word (singular).
YEARS_PER_UNIT = {"year": 1.0, "yr": 1.0, "month": 1 / 12, "week": 7 / 365.25, "day": 1 / 365.25}


@dataclass(frozen=True)
class Comparison:
    """``value op low`` (or ``low <= value <= high`` for between), the unit word as written, and the span."""

    op: Operator
    low: float | None
    high: float | None
    unit: str | None
    text: str

    def holds(self, value: float | None) -> bool:
        if value is None:
            return False
        if self.op == "between":
            return self.low is not None and self.high is not None and self.low <= value <= self.high
        bound = self.low if self.op in (">", ">=") else self.high
        assert bound is not None
        return {">": value > bound, ">=": value >= bound, "<": value < bound, "<=": value <= bound}[self.op]

    def scaled(self, factor: float) -> Comparison:
        """The same comparison with its bounds multiplied (another unit)."""
        low = None if self.low is None else round(self.low * factor, 6)
        high = None if self.high is None else round(self.high * factor, 6)
        return Comparison(self.op, low, high, self.unit, self.text)

    def describe(self, grouped: bool = True) -> str:
        """In words, as the answer states it ("above 10,000", "between 2 and 5"); ``grouped`` False: no
        thousands separators (years)."""
        words = {">": "above", ">=": "at least", "<": "below", "<=": "at most"}
        say = format_number if grouped else (lambda value: format_number(value).replace(",", ""))
        if self.op == "between":
            return f"between {say(self.low)} and {say(self.high)}"
        return f"{words[self.op]} {say(self.low if self.op in ('>', '>=') else self.high)}"


def format_number(value: float | None) -> str:
    """10000 -> "10,000"; 0.80 -> "0.8"; None -> "?"."""
    if value is None:
        return "?"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.4g}" if abs(value) >= 1000 else f"{value:g}"


def _value(match: re.Match[str], name: str) -> float | None:
    amount = parse_amount(match.group(name), match.group(f"{name}_scale"))
    if amount is not None and match.group(f"{name}_k"):
        amount *= 1_000
    return amount


def _unit(word: str | None) -> str | None:
    if word is None or word.casefold() in _NOT_UNITS:
        return None
    return word


def parse_comparison(question: str) -> Comparison | None:
    """The first bounded number in ``question``, or None when it states no comparison.

    A bare number ("in 2019", "PM2.5", "the 10 studies") is no comparison: only a bound word
    before it, "or more"/"or less" after it, a range ("between 2 and 5 years"), or a time word
    before a year ("after 2020", "since 2015") or after it ("2021 or later") makes one.
    """
    text = matchable(question)
    found: list[tuple[int, Comparison]] = []
    if match := _RANGE.search(text):
        low, high = _value(match, "low"), _value(match, "high")
        if low is not None and high is not None:
            unit = _unit(match.group("unit")) or _unit(match.group("low_unit"))
            found.append((match.start(), Comparison("between", min(low, high), max(low, high), unit, match.group(0))))
    if match := _BOUNDED.search(text):
        value = _value(match, "value")
        if value is not None:
            op = next(op for n, (_, op) in enumerate(_OPERATORS) if match.group(f"op{n}"))
            low, high = (value, None) if op in (">", ">=") else (None, value)
            found.append((match.start(), Comparison(op, low, high, _unit(match.group("unit")), match.group(0))))
    if match := _SUFFIXED.search(text):
        value = _value(match, "value")
        if value is not None:
            op = _SUFFIX_OPERATORS[match.group("suffix").casefold()]
            low, high = (value, None) if op == ">=" else (None, value)
            unit = _unit(match.group("unit")) or _unit(match.group("after_unit"))
            found.append((match.start(), Comparison(op, low, high, unit, match.group(0))))
    suffixed = _YEAR_SUFFIXED.search(text)
    if (match := _YEAR.search(text)) and not (suffixed and suffixed.start("year") == match.start("year")):
        op, year = _YEAR_OPERATORS[" ".join(match.group("word").casefold().split())], float(match.group("year"))
        low, high = (year, None) if op in (">", ">=") else (None, year)
        found.append((match.start(), Comparison(op, low, high, None, match.group(0))))
    if suffixed:  # "from 2010 or earlier": the word after the year decides
        op = _YEAR_SUFFIX_OPERATORS[" ".join(suffixed.group("word").casefold().split())]
        year = float(suffixed.group("year"))
        low, high = (year, None) if op == ">=" else (None, year)
        found.append((suffixed.start(), Comparison(op, low, high, None, suffixed.group(0))))
    return min(found, key=lambda pair: pair[0])[1] if found else None


def years_per(unit: str | None) -> float | None:
    """How many years one ``unit`` is ("months" -> 1/12), None when it is no time unit."""
    if not unit:
        return None
    word = unit.casefold()
    for ending in ("s", ""):
        if word.endswith(ending) and (single := word[: len(word) - len(ending)]) in YEARS_PER_UNIT:
            return YEARS_PER_UNIT[single]
    return None
