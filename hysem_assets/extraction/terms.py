"""Synonym dictionaries and finding their terms, with spelling variants, in text.

A dictionary (``config/dictionaries/<field>.yaml``) maps each canonical term to its
synonyms. Every synonym also matches its variants: any case, accents or not, hyphen,
space or nothing between its words and between letters and digits (PM2.5, PM 2.5,
PM-2.5), and a plural ending (forests, CNNs). Short all-capital abbreviations (RF, CO,
US, OR) match only in capitals, because their lower-case forms are ordinary words.
Where terms overlap, the leftmost and then longest wins, so "fine particulate matter"
is PM2.5 and not also "particulate matter" (but "ambulatory blood pressure variability"
is blood pressure: the synonym "ambulatory blood pressure" starts first).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from hysem_assets.extraction.text import fold, matchable

_ATOMS = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+")
_SEPARATOR = r"[\s\-\u2010-\u2013./]{0,2}"
_START = r"(?<![^\W_])"
_END = r"(?![^\W_]|\.\d)"


class DictionaryError(ValueError):
    """A dictionary file that is not a mapping of canonical terms to lists of synonyms."""


def is_abbreviation(term: str) -> bool:
    """Up to four characters, capitals and digits only (RF, NO2, PM10): matched case-sensitively."""
    return len(term) <= 4 and any(char.isupper() for char in term) and not any(char.islower() for char in term)


def _with_plural(body: str, last_atom: str, abbreviation: bool) -> str:
    if not last_atom.isalpha():
        return body
    if last_atom.endswith("y") and not abbreviation:
        return body[:-1] + "(?:y|ies)"
    return body + "(?:s|es)?"


def variant_pattern(term: str) -> str:
    """A regular expression for ``term`` and its spelling variants (see the module docstring)."""
    folded = fold(term).strip()
    atoms = _ATOMS.findall(folded)
    if not atoms:
        raise DictionaryError(f"term {term!r} has no letters or digits")
    abbreviation = is_abbreviation(folded)
    body = _with_plural(_SEPARATOR.join(re.escape(atom) for atom in atoms), atoms[-1], abbreviation)
    return body if abbreviation else f"(?i:{body})"


@dataclass(frozen=True)
class TermDictionary:
    """Canonical terms and one compiled pattern that finds any of their synonyms."""

    canonical: tuple[str, ...]
    pattern: re.Pattern[str]
    #: Canonical term of each synonym's group in ``pattern`` (by group name).
    group_terms: Mapping[str, str]

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, list[str] | None]) -> TermDictionary:
        synonyms = [(str(term), str(term)) for term in mapping] + [
            (str(term), str(synonym)) for term, others in mapping.items() for synonym in others or ()
        ]
        # Longer spellings first: at one position the alternation takes the first that matches.
        synonyms.sort(key=lambda pair: len(fold(pair[1])), reverse=True)
        groups = {f"t{index}": term for index, (term, _) in enumerate(synonyms)}
        alternatives = "|".join(f"(?P<t{index}>{variant_pattern(synonym)})" for index, (_, synonym) in enumerate(synonyms))
        return cls(tuple(str(term) for term in mapping), re.compile(f"{_START}(?:{alternatives}){_END}"), groups)

    def matches(self, folded_text: str) -> Iterator[tuple[str, int, int]]:
        """(canonical term, start, end) of every match in text already passed through :func:`matchable`."""
        for match in self.pattern.finditer(folded_text):
            yield self.group_terms[match.lastgroup or ""], match.start(), match.end()

    def find(self, text: str) -> list[str]:
        """Canonical terms found in ``text``, unique, in order of first appearance."""
        return list(dict.fromkeys(term for term, _, _ in self.matches(matchable(text))))


def read_dictionary_file(path: Path) -> dict[str, list[str] | None]:
    """A dictionary file: a YAML mapping of canonical term to a list of synonyms (possibly empty)."""
    try:
        mapping = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise DictionaryError(f"Cannot read dictionary {path}: {exc}") from exc
    if not isinstance(mapping, dict) or not all(isinstance(v, list | None) for v in mapping.values()):
        raise DictionaryError(f"Dictionary {path} must map each canonical term to a list of synonyms.")
    return mapping


def load_dictionary(path: Path) -> TermDictionary:
    return TermDictionary.from_mapping(read_dictionary_file(path))
