"""Merging what each chunk yields into one record per document, deterministically.

Rules, by field type:

* list: values of later chunks are appended in first-seen order, skipping values equal
  to one already kept once case and whitespace are ignored (the first spelling wins);
* text: the more specific value is kept, i.e. the one with more distinct words; on a tie
  the earlier value stays, so a re-statement never churns the record;
* structured value: the first non-null value is kept (the main analysis is usually
  stated first: abstract and methods come before subgroup counts);
* structured records (``many``): appended as whole structures, unique by all their
  properties compared like list values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hysem_assets.settings.fields import FieldSpec

_SPACES = re.compile(r"\s+")
_WORDS = re.compile(r"\w+")


def normalized(value: Any) -> Any:
    """The identity of a value for uniqueness: strings casefolded with collapsed whitespace."""
    if isinstance(value, str):
        return _SPACES.sub(" ", value).strip().casefold()
    if isinstance(value, dict):
        return tuple(sorted((key, normalized(item)) for key, item in value.items()))
    return value


def append_unique(kept: list[Any], new: list[Any]) -> list[Any]:
    """``kept`` followed by the values of ``new`` not already there (as :func:`normalized`)."""
    seen = {normalized(value) for value in kept}
    merged = list(kept)
    for value in new:
        key = normalized(value)
        if key in seen or key == "":
            continue
        seen.add(key)
        merged.append(value.strip() if isinstance(value, str) else value)
    return merged


def specificity(text: str | None) -> int:
    """How informative a text value is: its number of distinct words."""
    return len({word.casefold() for word in _WORDS.findall(text or "")})


def more_specific(kept: str | None, new: str | None) -> str | None:
    """The more specific of two text values; the kept one on a tie."""
    return new.strip() if new and specificity(new) > specificity(kept) else kept


def merge_records(fields: Sequence[FieldSpec], kept: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The record after adding one chunk's values ``new`` to the record so far ``kept``."""
    merged = dict(kept)
    for spec in fields:
        before, after = kept.get(spec.name), new.get(spec.name)
        if spec.type == "list" or spec.is_records:
            merged[spec.name] = append_unique(before or [], after or [])
        elif spec.type == "text":
            merged[spec.name] = more_specific(before, after)
        else:
            merged[spec.name] = before if before is not None else after
    return merged
