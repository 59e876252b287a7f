"""Choosing a category field's value: cue phrases from the protocol, then sentence similarity.

Each allowed value's description in the protocol holds comma-separated cue phrases
("prospective or retrospective cohort study, longitudinal follow-up of participants").
A value is chosen by the cues the text uses, weighted by where they stand: the title, a
"design" heading or a sentence about this work count more, an introduction sentence less
(:mod:`~hysem_assets.extraction.sections`); a cue governed by another
("meta-analysis of randomised trials", "a cohort study nested in a trial", "cross-sectional
analysis of a cohort") or in the plural (studies the work reviews; once per sentence) counts less.
A list of adjectives reads as one phrase ("a prospective, randomized, double-blind study"). A value
with cues always wins over one without; between cued values, the similarity of the
sentences holding the cues to each value's name and description adds to the count. Without
any cue, the value whose name and description are most similar to a sentence wins,
when similar enough; otherwise the field stays empty.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hysem_assets.core.matcher import TermMatcher, matchable
from hysem_assets.extraction.reading import Reading

#: What may stand between a governing cue and the one it governs ("of", "nested within", "based on data from").
_GOVERNS = re.compile(
    r"^\s*(?:(?:of|in|within|nested\s+(?:in|within)|embedded\s+in|from|including|included|using|based\s+on|"
    r"among|alongside|conducted\s+(?:in|within)|ancillary\s+to|within\s+(?:the|a|an))\b)[\w\s,'-]{0,50}$",
    re.IGNORECASE,
)
_ABOUT_THIS_WORK = re.compile(r"\b(?:we|our|this|the present|the current|here(?:in)?)\b", re.IGNORECASE)
_DESIGN_HEADING = re.compile(r"\bdesign\b", re.IGNORECASE)
_OTHER_WORK = re.compile(r"\b(?:previous|prior|earlier|other|few|existing|published)\b", re.IGNORECASE)
_SPELLINGS = ((r"is(e|ed|es|ing|ation|ations)\b", r"iz\1"), (r"iz(e|ed|es|ing|ation|ations)\b", r"is\1"))
#: A comma between two words: a list of a design's adjectives ("a prospective, randomized, double-blind study")
#: reads as the phrase it qualifies.
_LIST_COMMA = re.compile(r"(?<=\w),(?=\s+\w)")
#: The first word naming a study from a cue on, across its adjectives only ("randomized, double-blind clinical
#: studies"): plural, they are the studies a work reviews.
_STUDY_NOUN = re.compile(
    r"(?:(?!(?:to|in|into|of|with|for|from|on|at|by|as|were|was|is|are|that|which)\b)[\w/-]+[\s,]+){0,8}?"
    r"(?:(?P<plural>studies|trials)|study|trial)\b",
    re.IGNORECASE,
)
#: A value chosen by similarity alone must be at least this similar to a sentence, and ahead of the next by this.
MIN_SIMILARITY = 0.45
MIN_MARGIN = 0.03
#: Weight of similarity beside cue counts when cues are found.
SIMILARITY_WEIGHT = 1.0


def cue_phrases(description: str) -> list[str]:
    """The cue phrases of a value description: its comma- or semicolon-separated parts, with their variants.

    "prospective or retrospective cohort study" also yields "prospective cohort study" and
    "retrospective cohort study"; British and American spellings (-ise/-ize) both count.
    """
    cues: list[str] = []
    for part in re.split(r"[,;]\s*", description):
        part = part.strip().rstrip(".")
        if not part or len(part.split()) > 6:
            continue
        alternatives = re.match(r"^([\w-]+) or ([\w-]+) (.+)$", part)
        forms = [part] + (
            [f"{alternatives[1]} {alternatives[3]}", f"{alternatives[2]} {alternatives[3]}"] if alternatives else []
        )
        for form in forms:
            cues.append(form)
            for pattern, replacement in _SPELLINGS:
                variant = re.sub(pattern, replacement, form)
                if variant != form:
                    cues.append(variant)
    return list(dict.fromkeys(cues))


@lru_cache(maxsize=64)
def _cues(values: tuple[tuple[str, str], ...]) -> dict[str, list[str]]:
    """Each value's cues: its name and its description's cue phrases."""
    return {name: [name, *cue_phrases(description)] for name, description in values}


@lru_cache(maxsize=64)
def _matcher(values: tuple[tuple[str, str], ...]) -> TermMatcher:
    return TermMatcher.from_mapping(_cues(values))


def values_matcher(values: Mapping[str, str]) -> TermMatcher:
    """The matcher of every value's cues, finding value names; built once per set of values."""
    return _matcher(tuple(values.items()))


def value_matcher(value: str, description: str) -> TermMatcher:
    """The matcher of one value's cues (its name and its description's cue phrases), built once per value."""
    return _matcher(((value, description),))


@lru_cache(maxsize=64)
def _literal(values: tuple[tuple[str, str], ...]) -> dict[str, frozenset[str]]:
    """Each value's cues as the protocol writes them, in lower case (a cue written in the plural is meant so)."""
    return {name: frozenset(cue.lower() for cue in cues) for name, cues in _cues(values).items()}


@dataclass(frozen=True)
class CueMatch:
    """One cue of ``value`` in sentence ``sentence`` at ``start``-``end`` of its matchable text, and its weight."""

    value: str
    sentence: int
    start: int
    end: int
    weight: float


def cue_matches(reading: Reading, values: Mapping[str, str]) -> list[CueMatch]:
    """Every cue of every value in the text, weighted by where it stands."""
    matcher = _matcher(tuple(values.items()))
    literal = _literal(tuple(values.items()))
    found: list[CueMatch] = []
    for index, sentence in enumerate(reading.sentences):
        plain = matchable(sentence)
        matches = list(matcher.matches(_LIST_COMMA.sub(" ", plain)))  # same length: offsets hold
        weight = reading.weights[index]
        if index == reading.title_index:
            weight *= 2.0
        if _DESIGN_HEADING.search(plain):
            weight *= 2.0
        elif _ABOUT_THIS_WORK.search(plain):
            weight *= 1.5
        if _OTHER_WORK.search(plain):
            weight *= 0.5
        reviewed: set[str] = set()  # values this sentence already named in the plural
        for position, (value, start, end) in enumerate(matches):
            own = weight
            if _plural(plain, start, end, literal[value]):
                if value in reviewed:  # "randomized, controlled trials (RCTs)": one mention of the studies
                    continue
                reviewed.add(value)
                own *= 0.4  # a plural: the studies a work reviews or includes, not its own design
            for earlier in matches[:position]:
                if earlier[0] != value and _GOVERNS.match(plain[earlier[2] : start]):
                    own *= 0.2
            found.append(CueMatch(value, index, start, end, own))
    return found


def _plural(plain: str, start: int, end: int, literal: frozenset[str]) -> bool:
    """Whether the cue at ``start``-``end`` names studies in the plural ("RCTs", "randomized, double-blind
    studies"); a cue the protocol writes in the plural ("studies included") is meant so."""
    if plain[start:end].lower() in literal:
        return False
    if plain[end - 1 : end].lower() == "s":
        return True
    noun = _STUDY_NOUN.match(plain, start)
    return bool(noun and noun.group("plural"))


def value_texts(values: Mapping[str, str]) -> list[str]:
    """What a category value is compared with: its name and its description."""
    return [f"{name}: {description}" for name, description in values.items()]


def value_vectors(reading: Reading, values: Mapping[str, str]) -> np.ndarray:
    return reading.embed_constant(value_texts(values))


def choose_category(reading: Reading, values: Mapping[str, str]) -> tuple[str, int] | None:
    """The chosen value and the index of the sentence that decided it, or None."""
    if not reading.sentences or not values:
        return None
    names = list(values)
    matches = cue_matches(reading, values)
    if matches:
        scores: dict[str, float] = {}
        for match in matches:
            scores[match.value] = scores.get(match.value, 0.0) + match.weight
        if not _decided(scores):  # embedding costs more than the rest of the field: only the cued sentences
            cued = sorted({match.sentence for match in matches})
            similarity = reading.embed([reading.sentences[i] for i in cued]) @ value_vectors(reading, values).T
            for column, name in enumerate(names):
                if name in scores:
                    scores[name] += SIMILARITY_WEIGHT * float(similarity[:, column].max())
        value = max((name for name in names if name in scores), key=lambda name: scores[name])  # ties: protocol order
        strongest = max((m for m in matches if m.value == value), key=lambda m: m.weight)
        return value, strongest.sentence
    similarity = reading.sentence_similarity(value_vectors(reading, values), value_texts(values))
    best_sentence = similarity.argmax(axis=0)
    top = similarity.max(axis=0)
    order = np.argsort(-top)
    first = int(order[0])
    second = float(top[order[1]]) if len(order) > 1 else -1.0
    if top[first] < MIN_SIMILARITY or top[first] - second < MIN_MARGIN:
        return None
    return names[first], int(best_sentence[first])


def _decided(scores: Mapping[str, float]) -> bool:
    """Whether the cue scores of the cued values alone name the winner: each gains between -1 and +1 times
    :data:`SIMILARITY_WEIGHT` from similarity (cosines). A value without cues never wins over one with."""
    top, *others = sorted(scores.values(), reverse=True)
    return not others or top - SIMILARITY_WEIGHT > others[0] + SIMILARITY_WEIGHT
