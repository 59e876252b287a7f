"""Numbers the extractive backend reads with regular expressions: sample sizes, durations, quantities, metrics.

Counts are written many ways ("n = 1,234", "12 045 participants", "a total of 812 women",
"3.4 million adults", "Thirteen runners", "data from 2,345 patients", "enrolled 512"); every
candidate is scored by what surrounds it, so the study's analysed total beats subgroup
and background counts. Cases and controls counted side by side add up: a case-control
study analyses both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hysem_assets.core.matcher import TermMatcher, matchable

_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_POPULATION = (
    "participants|patients|adults|children|schoolchildren|adolescents|individuals|people|persons|residents|subjects|"
    "women|men|males|females|girls|boys|beneficiaries|pairs|births|infants|newborns|neonates|pregnancies|mothers|"
    "workers|employees|students|members|enrollees|admissions|visits|cases|controls|deaths|discharges|episodes|arrests|"
    "volunteers|respondents|outpatients|inpatients|veterans|survivors|recipients|donors|users|smokers|twins|"
    "households|dyads|families|nurses|physicians|clinicians"
)
_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_WORD = "|".join([*_UNITS, *_TENS, "hundred"])
#: A number in words: "thirteen", "twenty-two", "one hundred and twelve", "ten thousand", "a thousand".
_WORDS = rf"(?:(?:{_WORD})(?:[\s-]+(?:and\s+)?(?:{_WORD}))*\b|a(?=\s+(?:hundred|thousand|million)\b))"
_SEPARATED = r"\d{1,3}(?:(?:,|[ \u00a0\u2009\u202f](?=\d{3}(?!\d)))\d{3})+"
_DIGITS = rf"(?:{_SEPARATED}|\d+(?:\.\d+)?)"
_AMOUNT = rf"(?P<amount>{_DIGITS}|{_WORDS})(?:\s+(?P<scale>thousand|million|billion))?"
_N_EQUALS = re.compile(rf"(?<![\w])[nN]\s*[=:]\s*(?P<amount>{_SEPARATED}|\d+)(?!\d|\.\d)")
_COUNT = re.compile(
    rf"(?<![\w.,]){_AMOUNT}(?:\s*\([^()]{{0,60}}\))?"
    rf"\s+(?:(?:(?!\d)[\w'-]+|\([^()]{{0,30}}\))\s+){{0,5}}?(?P<noun>{_POPULATION})\b",
    re.IGNORECASE,
)
_STRONG_CUE = re.compile(
    r"\b(?:a\s+total\s+of|in\s+total|overall|total|include[sd]?|including|enrol(?:l)?(?:ed|ing)?|recruit(?:ed|ing)?|"
    r"comprised|comprising|consisted\s+of|involv(?:ed|ing)|stud(?:ied|ying)|analy[sz](?:ed|ing)|examined|"
    r"surveyed|invited|followed|data\s+(?:from|on|of)|records\s+of|sample\s+of|cohort\s+of|population\s+of)\W*$",
    re.IGNORECASE,
)
_AFTER_CUE = re.compile(
    r"^[^.;]{0,40}?\b(?:were|was)\s+(?:included|enrolled|recruited|analy[sz]ed|studied|examined|followed|"
    r"randomi[sz]ed|surveyed|identified|eligible)",
    re.IGNORECASE,
)
_BACKGROUND = re.compile(
    r"\b(?:expect(?:ed)?|estimated|estimates|annually|each\s+year|every\s+year|per\s+year|worldwide|globally|affects?)\b",
    re.IGNORECASE,
)
_SUBGROUP = re.compile(r"\((?:[^()]*\b(?:with|without|of whom|among)\b[^()]*)?\s*$", re.IGNORECASE)
#: A count of studies right before a count of people: the people are a pooled sample ("a meta-analysis of 12 trials
#: with 45,000 participants", "8 cohort studies (1.2 million adults)").
_POOLED = re.compile(
    rf"\b(?:{_DIGITS}|{_WORDS})\s+(?:[\w-]+\s+){{0,2}}?(?:trials|studies|cohorts|RCTs|datasets|registries)\s*"
    r"(?:\(|\b(?:with|including|involving|enrolling|comprising|of|totall?ing)\b)"
    r"(?:\s*(?:a\s+total\s+of|over|more\s+than|nearly|almost|about|approximately))?\s*$",
    re.IGNORECASE,
)
_META_ANALYSIS = re.compile(r"\b(?:meta-?analys[ie]s|pooled\s+analys[ie]s|systematic\s+reviews?)\b", re.IGNORECASE)
#: How a text cites another work's result: an earlier one ("a previous meta-analysis"), or what it found.
_CITED = re.compile(
    r"\b(?:previous|prior|earlier|recent|published|existing|found|showed|shown|shows|reported|reports|suggested|"
    r"suggests|demonstrated|demonstrates|concluded|indicated|indicates|confirmed)\b",
    re.IGNORECASE,
)
_OWN = re.compile(r"\b(?:we|our|this|the present)\b", re.IGNORECASE)
_AND_MORE = re.compile(rf"\s*(?:\([^()]{{0,60}}\)\s*)?,?\s*and\s+{_AMOUNT}\b", re.IGNORECASE)


def words_to_number(words: str) -> int | None:
    """The value of a number written in words ("twenty-two", "one hundred and twelve"), None if it is not one."""
    total, current, seen = 0, 0, False
    for word in re.split(r"[\s-]+", words.lower()):
        if word in ("and", ""):
            continue
        if word == "a":
            current = max(current, 1)
        elif word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        else:
            return None
        seen = True
    return total + current if seen else None


def parse_amount(amount: str, scale: str | None = None) -> float | None:
    """A written number ("12,045", "12 045", "3.4", "ten") times its scale word ("million")."""
    digits = re.sub(r"[,\s\u00a0\u2009\u202f]", "", amount)
    value = float(digits) if re.fullmatch(r"\d+(?:\.\d+)?", digits) else words_to_number(amount)
    if value is None:
        return None
    return value * _SCALES.get((scale or "").lower(), 1)


@dataclass(frozen=True)
class Count:
    """One count of people or events in a text, with how strongly its wording marks it as the study's total."""

    value: int
    start: int
    end: int
    score: float


def _sentence_bounds(text: str, position: int) -> tuple[int, int]:
    start = max(text.rfind(". ", 0, position), text.rfind("\n", 0, position))
    end = min(i for i in (text.find(". ", position), text.find("\n", position), len(text)) if i >= 0)
    return start + 1, end


def _pooled_elsewhere(before: str, after: str) -> bool:
    """Whether a count is the sample another work's meta-analysis pooled ("a previous meta-analysis of 12 trials
    with 45,000 participants found..."): a count of studies leads to it, in a sentence citing a meta-analysis that is
    not the text's own. A review's own pooled sample ("36 cohort studies with 5,630,221 participants were included")
    is its sample; the others are no study's."""
    return bool(
        _POOLED.search(before)
        and _META_ANALYSIS.search(before)
        and (_CITED.search(before) or _CITED.search(after))
        and not _OWN.search(before)
    )


def counts(text: str) -> list[Count]:
    """Every count of people or events in ``text`` (already :func:`matchable`) that may be its study's, scored."""
    found: list[Count] = []
    for match in _COUNT.finditer(text):
        value = parse_amount(match.group("amount"), match.group("scale"))
        if value is None or value < 1 or (value != int(value) and not match.group("scale")):
            continue
        sentence_start, sentence_end = _sentence_bounds(text, match.start())
        before, after = text[sentence_start : match.start()], text[match.end() : sentence_end]
        if _pooled_elsewhere(before, after):
            continue
        score = 1.0
        if _STRONG_CUE.search(before[-40:]) or _AFTER_CUE.match(after):
            score += 2
        if re.search(r"\b(?:we|our|this|the present)\b", before, re.IGNORECASE):
            score += 0.5
        if _BACKGROUND.search(text[sentence_start:sentence_end]):
            score -= 2
        if _SUBGROUP.search(before[-60:]) or re.match(r"^\s*of\s+\d", after) or re.search(r"\d\s+of\s*$", before):
            score -= 1
        total, end = value, match.end()
        more = _AND_MORE.match(text, match.end())
        if more:
            tail = _COUNT.match(text, more.start("amount"))
            extra = parse_amount(more.group("amount"), more.group("scale"))
            if extra and (tail or re.match(r"\s+(?:with|without)\b", text[more.end() :])):
                total, end = total + extra, tail.end() if tail else more.end()
                score += 0.5
        found.append(Count(int(round(total)), match.start(), end, score))
    for match in _N_EQUALS.finditer(text):
        value = parse_amount(match.group("amount"))
        sentence_start, sentence_end = _sentence_bounds(text, match.start())
        if not value or _pooled_elsewhere(text[sentence_start : match.start()], text[match.end() : sentence_end]):
            continue
        before = text[max(0, match.start() - 60) : match.start()]
        score = 1.5 - (1 if re.search(r"\b(?:with|without|group|arm)\b[^()]*\(?\s*$", before) else 0)
        found.append(Count(int(value), match.start(), match.end(), score))
    return sorted(found, key=lambda count: count.start)


def sample_size(text: str) -> int | None:
    """The study's analysed total: the best-scored count; on a tie the larger, then the earlier."""
    found = counts(matchable(text))
    if not found:
        return None
    return max(found, key=lambda count: (count.score, count.value, -count.start)).value


_TIME_UNITS = {"year": 1.0, "month": 1 / 12, "week": 7 / 365.25, "day": 1 / 365.25}
_UNIT_WORD = r"(?P<unit>years?|months?|weeks?|days?|yrs?|mo)\b"
#: "a median of", "(median, 10.9 years)", "about": what may stand before the amount.
_QUALIFIER = (
    r"(?:[(\[]\s*)?(?:(?:a|the)\s+)?(?:(?:median|mean|average|maximum|total)\s*,?\s+(?:\w+\s+)?(?:of\s+)?)?"
    r"(?:(?:more than|over|about|approximately|around|up to|nearly|almost|at least|~)\s+)?"
)
#: A spread after the amount: bracketed ("(SD 1.2)", "[range 2-9]") or a plus-minus ("24.3 +/- 1.1").
_DISPERSION = (
    r"(?:\s*[\[(](?:SD|IQR|s\.d\.|range|interquartile range|±)?[^()\[\]]{0,40}[\])]"
    r"|\s*(?:±|\+/-|\+-)\s*\d+(?:\.\d+)?)?"
)
#: Not the spread of another number ("67.1 +/- 10.6 years").
_NOT_A_SPREAD = r"(?<!±)(?<!± )(?<!\+/-)(?<!\+/- )(?<![\d.])"
_DURATION = rf"{_QUALIFIER}{_NOT_A_SPREAD}(?P<amount>\d+(?:\.\d+)?|{_WORDS}){_DISPERSION}\s*[- ]?{_UNIT_WORD}"
#: An age, not a follow-up: "aged 67 years", "a mean age of 67.1 +/- 10.6 years".
_AGE_BEFORE = re.compile(r"\bage[ds]?\b[^.;\d]{0,20}$", re.IGNORECASE)
_FOLLOW_UP_PATTERNS = [
    re.compile(rf"follow(?:ed)?[- ]?up\s*(?:period|time|duration)?\s*(?:was|of|:|,|lasted|=)?\s*{_DURATION}", re.I),
    re.compile(rf"followed(?:\s+up)?\s+(?:for|during|over)\s+{_DURATION}", re.I),
    re.compile(rf"{_DURATION}(?:\s+of)?\s+(?:\w+\s+)?follow[- ]?up", re.I),
    re.compile(rf"\b(?:over|during|within)\s+{_DURATION}(?!\s+(?:of\s+age|old|older|younger))", re.I),
    # the study's own length: "a 12-week, double-blind, randomised trial", "the 6-month intervention"
    re.compile(
        rf"\b{_DURATION}(?![-,\s]+(?:baseline|run-in|washout|wash-out|screening|lead-in)\b)[-,\s]+(?:[\w-]+,?\s+){{0,4}}?"
        r"(?:trial|study|intervention|period)\b",
        re.I,
    ),
    # the last assessment: "assessed at 3, 6 and 12 months", "after 12 weeks of treatment", "at week 24"
    re.compile(
        rf"\b(?:at|after|by|until)\s+(?:(?:\d+(?:\.\d+)?(?:\s*[- ]?(?:week|month|year|day)s?)?|and|or)\s*,?\s+)*"
        rf"(?:{_DURATION}|(?P<unit_first>week|month|year|day)s?\s+(?:\d+\s*,?\s+(?:and\s+|or\s+)?)*(?P<amount_after>\d+))\b"
        r"(?!\W{0,3}(?:postmenstrual|post-menstrual|gestation\w*|corrected|of\s+age|old|older|younger)\b)",
        re.I,
    ),
]
_FOLLOW_UP_CONTEXT = re.compile(r"follow|prospectiv|cohort|incidence|observ|surviv|recurrence", re.I)
#: What a sentence says when a time point in it is when outcomes were measured.
_ASSESSMENT_CONTEXT = re.compile(
    r"\b(?:assess|measur|evaluat|examin|outcome|visit|follow[- ]?up|followed up|interview|score|end of|endpoint|primary|secondary|"
    r"reduc|improv|increas|decreas|chang|differ|signific|remission|respon|rates?\b)",
    re.I,
)
#: A sentence about doses: its time points are a schedule ("at week 4, doses were titrated"), not assessments.
_DOSING = re.compile(r"\b(?:titrat\w*|doses?|dosage|dosing|mg|(?:increased|reduced|decreased) to)\b", re.I)
#: Ranks of :data:`_FOLLOW_UP_PATTERNS` that need a context in their sentence, and the rank where the longest wins.
_NEEDS_CONTEXT = {3: _FOLLOW_UP_CONTEXT, 5: _ASSESSMENT_CONTEXT}
_LAST_ASSESSMENT = 5


def duration(text: str, unit: str | None = "years") -> float | None:
    """The follow-up length in ``unit`` (years, months, weeks or days): median or mean where given.

    Stated follow-up first; then how long the study ran ("a 12-week trial"); then, in a sentence about
    outcomes, the last time point they were measured at ("at 3, 6 and 12 months" -> 12 months).
    """
    plain = matchable(text)
    found: list[tuple[int, int, float]] = []
    for rank, pattern in enumerate(_FOLLOW_UP_PATTERNS):
        for match in pattern.finditer(plain):
            start, end = _sentence_bounds(plain, match.start())
            context = _NEEDS_CONTEXT.get(rank)
            if context and not context.search(plain[start:end]):
                continue
            if rank == _LAST_ASSESSMENT and _DOSING.search(plain[start:end]):
                continue
            groups = match.groupdict()
            if groups["amount"] and _AGE_BEFORE.search(
                plain[max(0, match.start("amount") - 30) : match.start("amount")]
            ):
                continue
            amount = parse_amount(groups["amount"] or groups.get("amount_after") or "")
            if amount is None:
                continue
            years = amount * _TIME_UNITS[_time_unit(groups["unit"] or groups.get("unit_first") or "")]
            central = bool(re.search(r"median|mean|average", match.group(0), re.I))
            order = -years if rank == _LAST_ASSESSMENT else match.start()
            found.append((0 if central else 1, rank * 100_000 + order, years))
    if not found:
        return None
    years = min(found)[2]
    target = _TIME_UNITS.get(_time_unit(unit or "years"), 1.0)
    return round(years / target, 4)


def _time_unit(word: str) -> str:
    word = word.lower().rstrip("s")
    return {"yr": "year", "mo": "month"}.get(word, word) if word not in _TIME_UNITS else word


def quantity(text: str, unit: str | None, cues: list[str]) -> float | None:
    """A number written with ``unit`` ("12.5 mg", "30 %"), the one nearest after a cue first."""
    if not unit:
        return None
    plain = matchable(text)
    pattern = re.compile(rf"(?<![\w.])(?P<amount>{_DIGITS})\s*{re.escape(unit)}(?:e?s)?(?!\w)", re.IGNORECASE)
    matches = list(pattern.finditer(plain))
    if not matches:
        return None
    cue_ends = [m.end() for cue in cues for m in re.finditer(rf"\b{re.escape(cue)}\b", plain, re.IGNORECASE)]

    def distance(match: re.Match[str]) -> int:
        before = [match.start() - end for end in cue_ends if 0 <= match.start() - end <= 80]
        return min(before) if before else 10_000 + match.start()

    return parse_amount(min(matches, key=distance).group("amount"))


_NUMBER = r"(-?\d+(?:\.\d+)?)"
_VALUE_AFTER_NAME = re.compile(rf"\s*[(,:=]?\s*(?:(?:of|was|were|is|reached|achieved)\s+)?{_NUMBER}\s*(%)?")
_INTERVAL = re.compile(
    rf"\s*\(\s*95\s*%\s*(?:CI|confidence interval|credible interval|CrI)\s*:?\s*{_NUMBER}\s*%?\s*(?:-|–|to|,)\s*{_NUMBER}",
    re.IGNORECASE,
)


def metric_values(text: str, metrics: TermMatcher) -> list[dict[str, Any]]:
    """Records for every metric name directly followed by a number ("an R2 of 0.74", "MAPE 7.2%").

    A name separated from its value by other words ("hazard ratio for 12-14 µg/m3 was
    1.21") is skipped: the number right after it would be the wrong one.
    """
    plain = matchable(text)
    records: list[dict[str, Any]] = []
    for name, _, end in metrics.matches(plain):
        value = _VALUE_AFTER_NAME.match(plain, end)
        if not value:
            continue
        interval = _INTERVAL.match(plain, value.end())
        records.append(
            {
                "name": name,
                "value": float(value.group(1)),
                "unit": value.group(2),
                "ci_low": float(interval.group(1)) if interval else None,
                "ci_high": float(interval.group(2)) if interval else None,
                "context": None,
            }
        )
    return records
