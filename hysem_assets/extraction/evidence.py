"""Where each extracted value stands in its document: the evidence sentence and its offsets.

One function serves every backend. A model server returns values only, and the embedded
extractor's values are taken from the text, so both are located the same way: a phrase
exactly, then case- and spacing-insensitively, then the sentence sharing most of its
words; a number by the ways it is written (48213, 48,213, 48 213, 3.4 million; a duration
in any time unit); an effect estimate by its value near its interval; a design column's
category by the cue phrases of its value in the protocol or its dictionary. Where a value
stands several times, the sentence in the part of the work that says most about its own
study (methods or results before introduction, :mod:`~hysem_assets.extraction.sections`)
is its evidence, the first one among equals.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from hysem_assets.core.matcher import fold
from hysem_assets.core.text import sentence_spans
from hysem_assets.extraction.categories import value_matcher
from hysem_assets.extraction.designs import categories, is_design
from hysem_assets.extraction.numbers import parse_amount
from hysem_assets.extraction.sections import sentence_weights
from hysem_assets.settings.protocols import Protocol, ProtocolField

#: Least share of a value's words a sentence must hold to be its evidence when the value is not found as written.
MIN_OVERLAP = 0.5
_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:(?:,|[ \u00a0\u2009\u202f])\d{3})+|\d+(?:\.\d+)?|\.\d+)(?:\s+(thousand|million|billion))?"
)
_TIME_UNIT = re.compile(r"\s*(?:-\s*)?(years?|months?|weeks?|days?)\b", re.IGNORECASE)
_IN_YEARS = {"year": 1.0, "month": 1 / 12, "week": 7 / 365.25, "day": 1 / 365.25}
#: A number written in a text: its value, its position, and the time unit right after it, if any.
_Number = tuple[float, int, str | None]


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", fold(text).lower()) if w not in ENGLISH_STOP_WORDS]


class _Text:
    """A document's text with what locating reads from it (sentences, numbers, folded form),
    each computed once for all its fields: a full text holds thousands of sentences and numbers."""

    def __init__(self, text: str, parts: bool = True) -> None:
        self.text = text
        self.parts = parts

    @cached_property
    def spans(self) -> list[tuple[int, int]]:
        return sentence_spans(self.text)

    @cached_property
    def _starts(self) -> list[int]:
        return [start for start, _ in self.spans]

    @cached_property
    def numbers(self) -> list[_Number]:
        return _numbers(self.text)

    @cached_property
    def signed_numbers(self) -> list[_Number]:
        """The numbers with a minus sign read as a hyphen-minus, as estimates are compared."""
        return _numbers(self.text.replace("−", "-"))

    @cached_property
    def folded(self) -> str:
        return fold(self.text)

    @cached_property
    def weights(self) -> list[float]:
        return sentence_weights(self.text, self.spans) if self.parts else [1.0] * len(self.spans)

    def best(self, positions: list[int]) -> int | None:
        """Of the places a value stands, the one in the best-weighted sentence; the first among equals."""
        if not positions:
            return None

        def weight(position: int) -> float:
            index = bisect_right(self._starts, position) - 1
            return self.weights[index] if index >= 0 else 0.0

        return max(positions, key=lambda position: (weight(position), -position))

    def sentence_at(self, position: int) -> tuple[int, int] | None:
        index = bisect_right(self._starts, position) - 1
        return self.spans[index] if index >= 0 and position < self.spans[index][1] else None

    def nearest_sentence(self, position: int) -> tuple[int, int]:
        """The sentence holding ``position``, else the one whose start is nearest (the earlier on a tie)."""
        if (found := self.sentence_at(position)) is not None:
            return found
        after = bisect_right(self._starts, position)
        near = [i for i in (after - 1, after) if 0 <= i < len(self.spans)]
        return self.spans[min(near, key=lambda i: abs(self._starts[i] - position))]


def _entry(text: _Text, value: Any, position: int) -> dict[str, Any]:
    start, end = text.nearest_sentence(position)
    return {"value": value, "sentence": text.text[start:end], "start": start, "end": end}


def _find_phrase(text: _Text, phrase: str) -> int | None:
    """Where ``phrase`` stands in ``text``: as written, else in any case or with other spacing and hyphens."""
    written = [m.start() for m in re.finditer(re.escape(phrase), text.text)] if phrase else []
    if written:
        return text.best(written)
    words = re.findall(r"\w+", phrase)
    if not words:
        return None
    pattern = r"[\W_]{0,3}".join(re.escape(w) for w in words)
    return text.best([m.start() for m in re.finditer(rf"(?<!\w){pattern}(?!\w)", text.text, re.IGNORECASE)])


def _best_sentence(text: _Text, phrase: str) -> int | None:
    wanted = set(_words(phrase))
    spans = text.spans
    if not wanted or not spans:
        return None
    overlaps = [len(wanted & set(_words(text.text[s:e]))) / len(wanted) for s, e in spans]
    best = max(range(len(spans)), key=lambda i: overlaps[i])
    return spans[best][0] if overlaps[best] >= MIN_OVERLAP else None


def _numbers(text: str) -> list[_Number]:
    """Every number written in ``text``: (value, position, the time unit right after it, if any)."""
    found = []
    for match in _NUMBER.finditer(text):
        value = parse_amount(match.group(1), match.group(2))
        if value is None:
            continue
        unit = _TIME_UNIT.match(text, match.end())
        found.append((value, match.start(), unit.group(1).lower().rstrip("s") if unit else None))
    return found


def _number_positions(numbers: list[_Number], value: float, unit: str | None = None) -> list[int]:
    """Where ``value`` is written among ``numbers``; with a time ``unit``, a duration written in any time unit counts."""
    target = _IN_YEARS.get((unit or "").lower().rstrip("s"))
    found = []
    for number, position, written_unit in numbers:
        if target and written_unit:
            if abs(number * _IN_YEARS[written_unit] - value * target) <= 0.01 * max(abs(value * target), 1e-9):
                found.append(position)
        elif abs(number - value) <= 1e-9 * max(1.0, abs(value)):
            found.append(position)
    return found


def _find_number(numbers: list[_Number], value: float, unit: str | None = None) -> int | None:
    """Where ``value`` is first written among ``numbers`` (see :func:`_number_positions`)."""
    return next(iter(_number_positions(numbers, value, unit)), None)


def _find_estimate(text: _Text, record: Mapping[str, Any]) -> int | None:
    value = record.get("value")
    if not isinstance(value, (int, float)):
        return None
    bounds = [record.get(k) for k in ("ci_lower", "ci_upper", "ci_low", "ci_high") if record.get(k) is not None]
    candidates = []
    for number, position, _ in text.signed_numbers:
        if abs(abs(number) - abs(value)) <= 1e-9 * max(1.0, abs(value)):
            end = (text.sentence_at(position) or (position, position + 1))[1]
            window = _numbers(text.text[position : min(end, position + 80)])
            held = sum(1 for b in bounds if _find_number(window, abs(float(b))) is not None)
            candidates.append((-held, position))
    return min(candidates)[1] if candidates else None


def _find_category(text: _Text, choices: Mapping[str, str], value: str) -> int | None:
    matcher = value_matcher(value, choices.get(value, ""))
    plain = text.folded
    found = [start for _, start, _ in matcher.matches(plain)] if len(plain) == len(text.text) else []
    return text.best(found) if found else _find_phrase(text, value)


def locate_evidence(
    text: str, field: ProtocolField, value: Any, choices: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """The evidence of one field's value: ``[{value, sentence, start, end}]``, one per item it could place.

    ``start``/``end`` are character offsets of the evidence sentence in ``text``
    (``text[start:end] == sentence``). An item that cannot be placed has no entry. ``choices``
    are a design column's categories with their cues (a category field's values by default).
    """
    return _located(_Text(text), field, value, field.values or {} if choices is None else choices)


def _located(text: _Text, field: ProtocolField, value: Any, choices: Mapping[str, str]) -> list[dict[str, Any]]:
    if value is None or value == [] or value == "" or not text.spans:
        return []
    items = value if isinstance(value, list) else [value]
    entries = []
    for item in items:
        position: int | None
        if isinstance(item, Mapping):
            position = _find_estimate(text, item)
        elif isinstance(item, bool):
            position = None
        elif isinstance(item, (int, float)):
            unit = field.unit if field.number_kind == "duration" else None
            position = text.best(_number_positions(text.numbers, float(item), unit))
        elif choices:
            position = _find_category(text, choices, str(item))
        else:
            position = _find_phrase(text, str(item))
            if position is None:
                position = _best_sentence(text, str(item))
        if position is not None:
            entries.append(_entry(text, item, position))
    return entries


def evidence_for(
    text: str, protocol: Protocol, values: Mapping[str, Any], *, parts: bool = True
) -> dict[str, list[dict[str, Any]]]:
    """Evidence of every field of ``protocol`` with a value in ``values``: field -> list of entries.

    Without ``parts``, the first place a value stands is its evidence, whatever part of the work it is in."""
    document = _Text(text, parts)
    found = {}
    for field in protocol.fields:
        choices = categories(protocol, field) if is_design(field) else {}
        entries = _located(document, field, values.get(field.name), choices)
        if entries:
            found[field.name] = entries
    return found
