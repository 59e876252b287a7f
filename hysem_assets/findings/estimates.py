"""Effect estimates read from text: a named ratio or difference, its value and its confidence interval.

Abstracts write the same estimate many ways ("HR 0.83, 95% CI 0.76–0.91", "OR = 1.12
(0.95, 1.31)", "RR 0.79 [0.68 to 0.92]", "hazard ratio [HR], 1.21; 95% CI, 1.05-1.40",
"aHR: 0.9 (95%CI: 0.8–1.0)", "β, 0.146; 95% CI, 0.086 to 0.201", "HR (95% CI) of 0.46 (0.39, 0.54)",
"odds ratio, 2.1; 95 percent confidence interval, 0.23% to 0.96%", "NNT 4 (3-12)", "relative risk
for healing with A 1.02, 95% confidence interval 0.83 to 1.28", "55% reduction; 95% CI, 44%-66%",
and each of them tokenised as "odds ratio [ OR ] = 1.98 ; 95 % CI , 1.16 to 3.38"); one pattern
per part (measure, value, interval) covers their combinations. The measure names are the
statistical vocabulary of effect estimates, not of any review subject. A bare "difference",
"ratio", "beta" or a change named by its direction ("reduction", "21% higher") counts only with a
labelled interval that holds its value ("difference, 9.8%; 95% CI, -0.7% to +20.4%"), and so
does a measure whose qualifiers run on to its value without a link word.

A number the words lead to is not always an estimate: a year ("hazard ratios with follow-up to the
end of 2021"), a count ("41,290 patients", "208 (36.1%)"), a mean with its spread ("HR 66 ± 12", a
heart rate) or a dose ("the hazard ratio of 80 mg versus 10 mg") is left out, and so is a ratio
that is not positive.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any, NamedTuple

from hysem_assets.core.matcher import fold, strip_markup
from hysem_assets.core.text import sentence_spans

#: Canonical measure -> (long forms, abbreviations); abbreviations match only in capitals. A longer name comes
#: before a name it starts with ("relative risk reduction" before "relative risk").
MEASURES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "hazard ratio": (("subdistribution hazard ratios?", "hazard ratios?"), ("s?HRs?",)),
    "odds ratio": (("odds ratios?",), ("ORs?",)),
    "incidence rate ratio": (("incidence rate ratios?",), ("IRRs?",)),
    "rate ratio": (("rate ratios?",), ()),
    "relative risk reduction": (("relative[- ]risk reductions?",), ("RRRs?",)),
    "relative risk": (("relative risks?", "risk ratios?"), ("RRs?",)),
    "absolute risk reduction": (("absolute[- ]risk reductions?",), ()),
    "risk difference": (("absolute risk differences?", "risk differences?"), ("ARDs?", "RDs?")),
    "number needed to harm": (("numbers? needed to (?:treat to )?harm",), ("NNTH", "NNHs?")),
    "number needed to treat": (("numbers? needed to treat(?: to benefit)?",), ("NNTB?s?",)),
    "standardised mean difference": (("standardi[sz]ed mean differences?",), ("SMDs?",)),
    "mean difference": (("weighted mean differences?", "mean differences?"), ("WMDs?", "MDs?")),
    "regression coefficient": (("beta coefficients?", "regression coefficients?"), ("β",)),
}
#: Names too general to make an estimate alone ("the ratio was 2:1", "a difference of 3 patients", "beta
#: blockers", "a reduction of 12 beds"), canonical name -> long forms: they count only with a labelled interval
#: that holds the value ("difference, 9.8%; 95% CI, -0.7% to 20.4%", "an absolute increase of 24.7% (95% CI,
#: 21.6%-27.7%)").
_GENERIC: dict[str, tuple[str, ...]] = {
    "ratio": ("ratios?",),
    "difference": ("differences?",),
    "regression coefficient": ("beta",),
    "reduction": (r"(?:(?:absolute|relative|mean)\s+)?(?:reductions?|decreases?|declines?)",),
    "increase": (r"(?:(?:absolute|relative|mean)\s+)?(?:increases?|improvements?|gains?)",),
}
#: A number, whole thousands written in groups too ("2,061", not the decimal comma of "0,706").
_NUMBER = r"[-−–+]?\s?(?:[1-9]\d{0,2}(?:,\d{3})+(?![\d.·]|,\d)|\d+(?:[.·]\d+)?|[.·]\d+)"
#: Measures estimated as the ratio of two risks, odds or rates: positive, pooled on the log scale.
RATIO_MEASURES = frozenset({"hazard ratio", "odds ratio", "relative risk", "incidence rate ratio", "rate ratio"})


def _measure_pattern() -> tuple[re.Pattern[str], dict[str, tuple[str, bool]]]:
    """One pattern of every measure name, and its groups' canonical names with whether each is generic."""
    alternatives, names = [], {}
    for generic, entries in ((False, MEASURES.items()), (True, ((n, (f, ())) for n, f in _GENERIC.items()))):
        for name, (long_forms, abbreviations) in entries:
            group = f"m{len(names)}"
            # a(djusted) prefix, and a subscript-like suffix (ORQ4, HRadj, βdifference) but not a longer word (HRQoL)
            forms = [rf"(?-i:a?{form}(?:Q\d|adj|[a-z]{{0,12}}\b)?)" for form in abbreviations]
            forms += [rf"(?:adjusted\s+)?{form}" for form in long_forms]
            alternatives.append(rf"(?P<{group}>{'|'.join(forms)})")
            names[group] = (name, generic)
    return re.compile(rf"(?<![\w-])(?:{'|'.join(alternatives)})(?![\w-])", re.IGNORECASE), names


_MEASURE, _NAMES = _measure_pattern()
#: Between a measure and its value: a bracketed abbreviation, qualifiers ("for X was"), punctuation; or, when a
#: labelled interval follows, qualifiers alone ("relative risk for healing with A 1.02, 95% CI 0.83 to 1.28").
_BRACKETED = r"(?:\s*[\[(]\s*(?:[A-Za-z]{1,5}|(?:95|90|99)\s*%\s*CI)\s*[\])])?"
_WORDS_BETWEEN = r"(?:\s+(?:[^\s\d;.()\[\]=:]+|\([^)\d]{0,40}\))){0,14}?"
_LINK = r"\s*(?:[,:=]|\bwas\b|\bwere\b|\bof\b|\bis\b|\bequal to\b|≈)?\s*[,:=]?\s*"
_PERCENT = r"%|percentage\s+points?|percent|per\s+cent"
#: Words that open qualifiers after a value ("0.8 in men", "1.2 for the older group"), never a unit.
_QUALIFYING = frozenset(
    "a after among an and as at before by during for from in of on or over per than the to under versus vs with".split()
)
#: After a value: a percent, or up to two short words before a bracket or a separator (a unit such as "mg/dL" or
#: "mm Hg", or qualifiers such as "in men").
_AFTER_VALUE = (
    rf"(?![\d.]*\s*%\s*(?:CI|conf|cred))(?:\s*(?P<percent>{_PERCENT})|(?P<words>(?:\s+[^\s\d;,()\[\]]{{1,6}}){{1,2}})"
    r"(?=\s*[(\[;,]))?"
)
_VALUE = re.compile(
    rf"{_BRACKETED}(?:{_WORDS_BETWEEN}\s*(?:\bwas\b|\bwere\b|\bof\b|\bis\b|=|:|,)\s*|{_LINK}|(?P<unlinked>{_WORDS_BETWEEN}\s+))"
    rf"(?P<value>{_NUMBER}){_AFTER_VALUE}"
)
#: A change written before its name ("55% reduction", "21% higher risk of death"), named by its direction; like a
#: generic name, it counts only with a labelled interval that holds the value.
_CHANGE_FIRST = re.compile(
    rf"(?<![\w.,])(?P<value>{_NUMBER})\s*(?P<percent>{_PERCENT})?\s*(?:\s(?:absolute|relative))?\s+"
    r"(?:(?P<reduction>reductions?|decreases?|declines?|lower|fewer|less)|(?P<increase>increases?|improvements?|higher|greater|more))\b"
    r"(?:\s+[^\s\d;,.()\[\]]+){0,3}?(?=\s*[;,(\[])",
    re.IGNORECASE,
)
_CI_LABEL = (
    r"(?:(?:95|90|99)\s*(?:%|percent|per\s+cent)\s*(?:CI|CrI|UI|confidence\s+intervals?|credible\s+intervals?)"
    r"(?:\s*[\[(](?:CI|CrI)[\])])?|CI\s*(?:95|90|99)\s*%|CI)"
)
_INTERVAL = re.compile(
    rf"\s*[;:,(\[]?\s*(?:(?P<label>{_CI_LABEL})\s*[:,=]?\s*)?[(\[]?\s*(?P<low>{_NUMBER})\s*%?\s*(?:,?\s*to|–|—|--|-|−|,|;|\.\.)\s*(?P<high>{_NUMBER})(?![.,·]\d)(?:\s*%)?",
    re.IGNORECASE,
)
#: A p-value right after an estimate or its interval: "; P = .01", "), p<0.001", "; two-sided P value 0.03".
_P_VALUE = re.compile(
    r"\s*[)\]]?\s*[;,]?\s*(?:two-sided\s+)?(?<![\w-])p(?:\s*-?\s*values?)?\s*(?P<op>[<>=≤≥]|was|of|)\s*"
    r"(?P<p>\d*[.·]\d+(?:\s*[x×]\s*10\s*[-−–]\s*\d+)?|[01])(?![\d.·])",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(r"[;:.]\s|,\s(?:and|but|while|whereas)\s|\(|\[")
#: After a count: its percentage ("208 (36.1%)") or who or what was counted ("3 groups", "41,290 patients").
_COUNT_AFTER = re.compile(
    r"(?:\s*[(\[]\s*\d+(?:[.·]\d+)?\s*%\s*[)\]]"
    r"|\s+(?:participants|patients|subjects|people|persons|individuals|adults|children|women|men|cases|controls|events|"
    r"deaths|groups|arms|trials|studies|cohorts|centres|centers|sites|hospitals)\b)",
    re.IGNORECASE,
)
#: A dose after a value ("40 mg daily").
_DOSE_UNIT = r"(?:mg|g|µg|μg|mcg|ng|IU|units?|mL|ml|mmol)(?:/kg)?"
_DOSE_AFTER = re.compile(
    rf"\s*{_DOSE_UNIT}(?:\s*(?:/\s*d(?:ay)?|daily|a\s+day|per\s+day|once|twice|three\s+times|b\.?i\.?d|t\.?i\.?d|q\.?d)\b)",
    re.IGNORECASE,
)
#: A ratio has neither unit nor spread: a mass or volume after one makes it a dose ("the hazard ratio of 80 mg versus
#: 10 mg"), a plus-minus a mean with its standard deviation ("HR 66 ± 12", a heart rate).
_NOT_A_RATIO_AFTER = re.compile(rf"\s*(?:{_DOSE_UNIT}\b|±|\+/-|\+-)", re.IGNORECASE)
_YEAR = re.compile(r"(?:1[89]|20)\d\d")


def _number(text: str) -> float:
    return float(
        "".join(text.split()).replace(",", "").replace("−", "-").replace("–", "-").replace("·", ".").lstrip("+")
    )


def _p_text(match: re.Match[str]) -> str:
    """A p-value as reviewers write it: "0.04", "< 0.001" (the number with a leading zero, the bound kept)."""
    number = " ".join(match.group("p").replace("·", ".").split())
    number = f"0{number}" if number.startswith(".") else number
    op = match.group("op").lower()
    return number if op in ("=", "was", "of", "") else f"{op} {number}"


def _context(sentence: str, start: int, previous_end: int) -> str | None:
    """The words before an estimate in its sentence, back to the previous estimate or clause start."""
    before = sentence[previous_end:start]
    cut = 0
    for boundary in _CLAUSE_START.finditer(before):
        if len(before) - boundary.end() > 25:
            cut = boundary.end()
    context = " ".join(before[cut:].split()).lstrip(")]").strip(" ,;:([")
    return context[-200:] or None


class _Named(NamedTuple):
    """An estimate's name and value as written, before its interval: where it starts, its canonical measure,
    whether only a labelled interval makes it one, the name as written, the value, its unit, where it ends and where
    the value's digits end."""

    start: int
    name: str
    needs_interval: bool
    written: str
    value: str
    unit: str | None
    end: int
    value_end: int


def _unit(name: str, value: re.Match[str]) -> str | None:
    """The unit written after a value: "%" (or "percentage points"), or the short words after a difference or a
    coefficient unless one is a function word ("2.7 cm", "33.6 mg/dL", "-2.3 points", not "0.8 in men"); a ratio
    has none."""
    percent, words = value["percent"], value.groupdict().get("words")
    if percent:
        return "percentage points" if percent.lower().startswith("percentage") else "%"
    if words and "ratio" not in name and not any(word.lower() in _QUALIFYING for word in words.split()):
        return " ".join(words.split())
    return None


def _names_specific(text: str, start: int, end: int) -> bool:
    """Whether a specific measure is named in ``text[start:end]``: qualifiers alone may not run over one
    ("differences between the groups, HR 0.96" is the HR's; "IRR for the difference between groups 1.01" the IRR's)."""
    return any(not _NAMES[name.lastgroup or "m0"][1] for name in _MEASURE.finditer(text, start, end))


def _named_values(text: str) -> Iterator[_Named]:
    """Every measure name with its value, in text order: named first ("OR 1.2") or after ("55% reduction")."""
    named_first = (
        _Named(
            measure.start(),
            name,
            generic or value["unlinked"] is not None,
            measure[0],
            value["value"],
            _unit(name, value),
            value.end(),
            value.end("value"),
        )
        for measure in _MEASURE.finditer(text)
        if (value := _VALUE.match(text, measure.end()))
        and not (value["unlinked"] is not None and _names_specific(text, measure.end(), value.start("value")))
        for name, generic in [_NAMES[measure.lastgroup or "m0"]]
    )
    named_after = (
        _Named(
            change.start(),
            direction,
            True,
            change[direction],
            change["value"],
            _unit(direction, change),
            change.end(),
            change.end("value"),
        )
        for change in _CHANGE_FIRST.finditer(text)
        for direction in ["reduction" if change["reduction"] else "increase"]
    )
    return heapq.merge(named_first, named_after)


def _other_number(text: str, named: _Named, ratio: bool, vouched: bool) -> bool:
    """Whether the value the words lead to is some other number than an estimate: a year (unless a labelled interval
    holds it: "a difference of 2010 steps, 95% CI 1500 to 2520"), a count, a mean with its spread or a dose. (A page,
    table or reference number is never reached: "p. 12", "Table 2" and "2019;38:1201" end the words before a value.)
    """
    return bool(
        (_YEAR.fullmatch(named.value) and named.unit is None and not vouched)
        or _COUNT_AFTER.match(text, named.value_end)
        or _DOSE_AFTER.match(text, named.value_end)
        or (ratio and _NOT_A_RATIO_AFTER.match(text, named.value_end))
    )


def _bounds(interval: re.Match[str], ratio: bool) -> tuple[float, float]:
    """An interval's bounds in order. A ratio has no sign, so a dash before one of its bounds is punctuation
    ("95 % CI – 0.62–0.96")."""
    low, high = (_number(interval[bound]) for bound in ("low", "high"))
    return (min(abs(low), abs(high)), max(abs(low), abs(high))) if ratio else (min(low, high), max(low, high))


def effect_estimates(text: str) -> list[dict[str, Any]]:
    """Every effect estimate in ``text`` with its interval and context, in text order.

    Each record has ``measure``, ``value``, ``unit``, ``ci_lower``, ``ci_upper``, ``p_value``, ``context`` and the
    ``start``/``end`` offsets of the estimate in ``text`` (same offsets: folding keeps lengths
    for the characters estimates use). Bounds written high to low are put in order.

    An interval must hold its value. Numbers after a value that do not ("HR 0.7, 12 to 24 months") are no
    interval, and the estimate is kept without one. A labelled interval that does not ("HR 2.5, 95% CI 0.6-0.9")
    says that the value or the interval is misread or misprinted, with no telling which: the estimate is left
    out, as a careful reviewer would go back to the paper rather than report or pool either number.
    """
    folded = fold(strip_markup(text))
    plain = folded if len(folded) == len(text) else text
    found: list[dict[str, Any]] = []
    starts = [0, *(start for start, _ in sentence_spans(plain))]
    previous_end = 0
    for named in _named_values(plain):
        if named.start < previous_end:
            continue
        estimate = _number(named.value)
        ratio = named.name in RATIO_MEASURES
        interval = _INTERVAL.match(plain, named.end)
        bounds = _bounds(interval, ratio) if interval else None
        labelled = bool(interval and interval["label"])
        if bounds and not bounds[0] <= estimate <= bounds[1]:
            if labelled:
                continue
            bounds = None
        if (named.needs_interval and not (bounds and labelled)) or (ratio and estimate <= 0):
            continue
        if _other_number(plain, named, ratio, vouched=bool(bounds and labelled)):
            continue
        low, high = bounds or (None, None)
        end = interval.end() if interval and bounds else named.end
        p_value = _P_VALUE.match(plain, end)
        if p_value:
            end = p_value.end()
        # "adjusted odds ratio" or "aOR", not "absolute risk difference"
        adjusted = named.name != "regression coefficient" and (
            named.written[:9].lower() == "adjusted " or (named.written[:1] == "a" and named.written[1:2].isupper())
        )
        sentence_start = max(starts[bisect_right(starts, named.start) - 1], previous_end)
        found.append(
            {
                "measure": f"adjusted {named.name}" if adjusted else named.name,
                "value": estimate,
                "unit": named.unit,
                "ci_lower": low,
                "ci_upper": high,
                "p_value": _p_text(p_value) if p_value else None,
                "context": _context(plain, named.start, sentence_start),
                "start": named.start,
                "end": end,
            }
        )
        previous_end = end
    return found
