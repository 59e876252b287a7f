"""Effect estimates read from text: a named ratio or difference, its value and its confidence interval.

Abstracts write the same estimate many ways ("HR 0.83, 95% CI 0.76–0.91", "OR = 1.12
(0.95, 1.31)", "RR 0.79 [0.68 to 0.92]", "hazard ratio [HR], 1.21; 95% CI, 1.05-1.40",
"aHR: 0.9 (95%CI: 0.8–1.0)", "β, 0.146; 95% CI, 0.086 to 0.201", "HR (95% CI) of 0.46 (0.39, 0.54)",
"odds ratio, 2.1; 95 percent confidence interval, 0.23% to 0.96%", and each of them tokenised as
"odds ratio [ OR ] = 1.98 ; 95 % CI , 1.16 to 3.38"); one pattern per part (measure, value,
interval) covers their combinations. The measure names are the
statistical vocabulary of effect estimates, not of any review subject; a bare "difference" or
"ratio" counts only with a labelled interval ("difference, 9.8%; 95% CI, -0.7% to +20.4%").
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from hysem_assets.core.matcher import fold, strip_markup
from hysem_assets.core.text import sentence_spans

#: Canonical measure -> (long forms, abbreviations); abbreviations match only in capitals.
MEASURES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "hazard ratio": (("subdistribution hazard ratios?", "hazard ratios?"), ("s?HRs?",)),
    "odds ratio": (("odds ratios?",), ("ORs?",)),
    "incidence rate ratio": (("incidence rate ratios?",), ("IRRs?",)),
    "rate ratio": (("rate ratios?",), ()),
    "relative risk": (("relative risks?", "risk ratios?"), ("RRs?",)),
    "risk difference": (("absolute risk differences?", "risk differences?"), ("ARDs?", "RDs?")),
    "standardised mean difference": (("standardi[sz]ed mean differences?",), ("SMDs?",)),
    "mean difference": (("weighted mean differences?", "mean differences?"), ("WMDs?", "MDs?")),
    "regression coefficient": (("beta coefficients?", "regression coefficients?"), ("β",)),
    "ratio": (("ratios?",), ()),
    "difference": (("differences?",), ()),
}
#: Names too general to make an estimate alone ("the ratio was 2:1", "a difference of 3 patients"): they count
#: only with a labelled interval that holds the value ("difference, 9.8%; 95% CI, -0.7% to 20.4%").
_GENERIC = frozenset({"ratio", "difference"})
_NUMBER = r"[-−–+]?\s?(?:\d+(?:[.·]\d+)?|[.·]\d+)"


def _measure_pattern() -> re.Pattern[str]:
    alternatives = []
    for index, (long_forms, abbreviations) in enumerate(MEASURES.values()):
        # a(djusted) prefix, and a subscript-like suffix (ORQ4, HRadj, βdifference) but not a longer word (HRQoL)
        forms = [rf"(?-i:a?{form}(?:Q\d|adj|[a-z]{{0,12}}\b)?)" for form in abbreviations]
        forms += [rf"(?:adjusted\s+)?{form}" for form in long_forms]
        alternatives.append(rf"(?P<m{index}>{'|'.join(forms)})")
    return re.compile(rf"(?<![\w-])(?:{'|'.join(alternatives)})(?![\w-])", re.IGNORECASE)


_MEASURE = _measure_pattern()
_NAMES = list(MEASURES)
#: Between a measure and its value: a bracketed abbreviation, qualifiers ("for X was"), punctuation.
_BRACKETED = r"(?:\s*[\[(]\s*(?:[A-Za-z]{1,5}|(?:95|90|99)\s*%\s*CI)\s*[\])])?"
_WORDS_BETWEEN = r"(?:\s+(?:[^\s\d;.()\[\]=:]+|\([^)\d]{0,40}\))){0,14}?"
_LINK = r"\s*(?:[,:=]|\bwas\b|\bwere\b|\bof\b|\bis\b|\bequal to\b|≈)?\s*[,:=]?\s*"
_VALUE = re.compile(
    rf"{_BRACKETED}(?:{_WORDS_BETWEEN}\s*(?:\bwas\b|\bwere\b|\bof\b|\bis\b|=|:|,)\s*|{_LINK})"
    rf"(?P<value>{_NUMBER})(?![\d.]*\s*%\s*(?:CI|conf|cred))"
    r"(?:\s*%|(?:\s+[^\s\d;,()\[\]]{1,6}){0,2}(?=\s*[(\[;,]))?"
)
_CI_LABEL = (
    r"(?:(?:95|90|99)\s*(?:%|percent|per\s+cent)\s*(?:CI|CrI|UI|confidence\s+intervals?|credible\s+intervals?)"
    r"(?:\s*[\[(](?:CI|CrI)[\])])?|CI)"
)
_INTERVAL = re.compile(
    rf"\s*[;:,(\[]?\s*(?:(?P<label>{_CI_LABEL})\s*[:,=]?\s*)?[(\[]?\s*(?P<low>{_NUMBER})\s*%?\s*(?:,?\s*to|–|—|-|−|,|;|\.\.)\s*(?P<high>{_NUMBER})(?:\s*%)?",
    re.IGNORECASE,
)
#: A p-value right after an estimate or its interval: "; P = .01", "), p<0.001", "; two-sided P value 0.03".
_P_VALUE = re.compile(
    r"\s*[)\]]?\s*[;,]?\s*(?:two-sided\s+)?(?<![\w-])p(?:\s*-?\s*values?)?\s*(?P<op>[<>=≤≥]|was|of|)\s*"
    r"(?P<p>\d*[.·]\d+(?:\s*[x×]\s*10\s*[-−–]\s*\d+)?|[01])(?![\d.·])",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(r"[;:.]\s|,\s(?:and|but|while|whereas)\s|\(|\[")


def _number(text: str) -> float:
    return float(text.replace(" ", "").replace("−", "-").replace("–", "-").replace("·", ".").lstrip("+"))


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


def effect_estimates(text: str) -> list[dict[str, Any]]:
    """Every effect estimate in ``text`` with its interval and context, in text order.

    Each record has ``measure``, ``value``, ``ci_lower``, ``ci_upper``, ``p_value``, ``context`` and the
    ``start``/``end`` offsets of the estimate in ``text`` (same offsets: folding keeps lengths
    for the characters estimates use). An interval must hold its value; otherwise it is
    read as the record's, not the estimate's, and left out.
    """
    folded = fold(strip_markup(text))
    plain = folded if len(folded) == len(text) else text
    found: list[dict[str, Any]] = []
    starts = [0, *(start for start, _ in sentence_spans(plain))]
    previous_end = 0
    for measure in _MEASURE.finditer(plain):
        if measure.start() < previous_end:
            continue
        value = _VALUE.match(plain, measure.end())
        if not value:
            continue
        name = _NAMES[int((measure.lastgroup or "m0")[1:])]
        estimate = _number(value.group("value"))
        interval = _INTERVAL.match(plain, value.end())
        low = high = None
        end = value.end()
        if interval:
            low, high = _number(interval.group("low")), _number(interval.group("high"))
            if low <= estimate <= high:
                end = interval.end()
            else:
                low = high = None
        if name in _GENERIC and not (low is not None and interval and interval.group("label")):
            continue
        p_value = _P_VALUE.match(plain, end)
        if p_value:
            end = p_value.end()
        written = measure.group(0)
        # "adjusted odds ratio" or "aOR", not "absolute risk difference"
        adjusted = name != "regression coefficient" and (
            written[:9].lower() == "adjusted " or (written[:1] == "a" and written[1:2].isupper())
        )
        sentence_start = max(starts[bisect_right(starts, measure.start()) - 1], previous_end)
        found.append(
            {
                "measure": f"adjusted {name}" if adjusted and not name.startswith("adjusted") else name,
                "value": estimate,
                "ci_lower": low,
                "ci_upper": high,
                "p_value": _p_text(p_value) if p_value else None,
                "context": _context(plain, measure.start(), sentence_start),
                "start": measure.start(),
                "end": end,
            }
        )
        previous_end = end
    return found
