"""Numbers the extractive backend reads with regular expressions: sample sizes and metric values."""

from __future__ import annotations

import re
from typing import Any

from hysem_assets.terms.matcher import TermMatcher, matchable

_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_POPULATION = (
    "participants|patients|adults|children|schoolchildren|individuals|people|persons|residents|subjects|"
    "women|men|beneficiaries|pairs|births|infants|newborns|pregnancies|mothers|workers|students|members|"
    "enrollees|admissions|visits|cases|deaths|discharges|episodes|arrests"
)
_N_EQUALS = re.compile(r"(?<![\w])[nN]\s*=\s*(\d{1,3}(?:,\d{3})+|\d+)(?![\d.])")
_COUNT = re.compile(
    rf"(?<![\w.,])(\d{{1,3}}(?:,\d{{3}})+|\d+(?:\.\d+)?)(?:\s+(thousand|million|billion))?"
    rf"\s+(?:[A-Za-z-]+\s+){{0,3}}?(?:{_POPULATION})\b",
    re.IGNORECASE,
)
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_VALUE_AFTER_NAME = re.compile(rf"\s*[(,:=]?\s*(?:(?:of|was|were|is|reached|achieved)\s+)?{_NUMBER}\s*(%)?")
_INTERVAL = re.compile(
    rf"\s*\(\s*95\s*%\s*(?:CI|confidence interval|credible interval|CrI)\s*:?\s*{_NUMBER}\s*%?\s*(?:-|–|to|,)\s*{_NUMBER}",
    re.IGNORECASE,
)


def _to_number(digits: str, scale: str | None) -> int:
    return round(float(digits.replace(",", "")) * _SCALES.get((scale or "").lower(), 1))


def sample_size(text: str) -> int | None:
    """The first explicit "n = 1,234", else the first count of people or events ("3.4 million adults")."""
    plain = matchable(text)
    explicit = _N_EQUALS.search(plain)
    if explicit:
        return _to_number(explicit.group(1), None)
    counted = _COUNT.search(plain)
    return _to_number(counted.group(1), counted.group(2)) if counted else None


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
