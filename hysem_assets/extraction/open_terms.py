"""Open-vocabulary terms: the noun phrases of a text that name a field's entities, without a dictionary.

Every noun phrase of the text is a candidate. It scores for a field by the field's cue
phrases (a phrase right after "exposure to" or "risk of"), by mentions in the title and
across the text (cues and mentions count by the weight of their sentence's part, so an
introduction's phrases rank below the methods' and results'), and by embedding similarity: close to the field's description, and
closer to it than to any other field's (so "older adults" goes to the population, not
to the outcomes). A bounded number of the best, clean, non-overlapping phrases is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hysem_assets.extraction.phrases import Phrase
from hysem_assets.extraction.reading import Reading

#: Most terms one field keeps per excerpt.
KEEP = 6
#: Least score a phrase needs to be kept.
MIN_SCORE = 0.75
_WEIGHTS = {"cue_after": 1.0, "cue_inside": 0.4, "title": 0.35, "mention": 0.15, "own": 1.0, "margin": 2.0}


@dataclass(frozen=True)
class Term:
    """A kept phrase: its text (abbreviations spelled out), where it was first seen, and its score."""

    text: str
    start: int
    end: int
    score: float


#: Text between a cue and a phrase it still governs: a few modifiers, or a list ("X, Y and/or Z").
_GOVERNED = re.compile(
    r"^(?:\s*(?:[\w'-]+\s+){0,3}?|(?:[^.;:()]{0,120}?(?:,|\band\b|\bor\b|\band/or\b)\s*(?:[\w'-]+\s+){0,2}?))$",
    re.IGNORECASE,
)


def _governed(between: str) -> bool:
    """Whether a phrase after ``between`` (the text since a cue) is still what the cue announces."""
    if re.search(r"[.;:]|\b(?:was|were|is|are|had|has|have|than|but|while|whereas|which|that)\b", between):
        return False
    return bool(_GOVERNED.match(between))


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


@lru_cache(maxsize=4096)
def _cue_pattern(cue: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(cue)}(?![\w-])", re.IGNORECASE)


def cue_positions(sentence: str, cues: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of every cue in ``sentence``, case-insensitive, on word boundaries.

    A substring test first, where ASCII makes it exact (``re``'s case folding differs from
    ``str.lower`` beyond it): a full text has hundreds of sentences and most hold no cue.
    """
    ascii_text, lowered = sentence.isascii(), sentence.lower()
    found = []
    for cue in sorted(cues, key=len, reverse=True):
        if not (ascii_text and cue.isascii()) or cue.lower() in lowered:
            found += [(m.start(), m.end()) for m in _cue_pattern(cue).finditer(sentence)]
    return found


def prototypes(description: str) -> list[str]:
    """The description and the examples it lists ("(a drug, a procedure, a programme)", "e.g. ..."):
    a short phrase is compared with each, since it resembles an example more than a whole explanation."""
    examples = [description]
    for group in re.findall(r"\(([^()]+)\)|e\.g\.,?\s*([^.;]+)", description):
        for part in re.split(r",\s*|\s+or\s+|;\s*", " ".join(group)):
            part = part.strip(" .\"'")
            if len(part) > 2 and not part.startswith(("e.g", "i.e")):
                examples.append(part)
    return list(dict.fromkeys(examples))


def field_fit(reading: Reading, texts: Sequence[str], own: str, others: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Similarity of each text to the ``own`` field (its description or an example in it), and the margin
    over the closest of ``others``."""
    if not texts:
        return np.zeros(0), np.zeros(0)
    vectors = reading.embed(list(texts))
    columns = []
    for description in (own, *others):
        columns.append((vectors @ reading.embed_constant(prototypes(description)).T).max(axis=1))
    similarity = np.stack(columns, axis=1)
    own_similarity = similarity[:, 0]
    closest_other = similarity[:, 1:].max(axis=1) if len(others) else np.zeros(len(texts))
    return own_similarity, own_similarity - closest_other


def rank_terms(
    reading: Reading, description: str, cues: Sequence[str], others: Mapping[str, str], keep: int = KEEP
) -> list[Term]:
    """The field's terms in ``reading``, best first."""
    expansions = reading.abbreviations
    first: dict[str, Phrase] = {}
    mentions: dict[str, int] = {}
    weighted: dict[str, float] = {}  # mentions, each by its sentence's weight
    cue_after: dict[str, float] = {}
    in_title: set[str] = set()
    for index, (sentence_start, sentence_end) in enumerate(reading.spans):
        weight = reading.weights[index]
        sentence = reading.text[sentence_start:sentence_end]
        cue_spans = [(sentence_start + s, sentence_start + e) for s, e in cue_positions(sentence, cues)]
        for phrase in reading.phrases[index]:
            text = expansions.get(phrase.text, phrase.text)
            key = _key(text)
            if not key:
                continue
            first.setdefault(key, Phrase(text, phrase.start, phrase.end))
            mentions[key] = mentions.get(key, 0) + 1
            weighted[key] = weighted.get(key, 0.0) + weight
            if index == reading.title_index:
                in_title.add(key)
            for cue_start, cue_end in cue_spans:
                if phrase.start >= cue_end and _governed(reading.text[cue_end : phrase.start]):
                    cue_after[key] = max(cue_after.get(key, 0.0), weight * _WEIGHTS["cue_after"])
                elif phrase.start <= cue_start and cue_end <= phrase.end:
                    cue_after[key] = max(cue_after.get(key, 0.0), weight * _WEIGHTS["cue_inside"])
    defined = {_key(long_form) for long_form in expansions.values()}
    # only phrases with some sign of standing for an entity are embedded: that keeps documents fast
    keys = [key for key in first if key in cue_after or key in in_title or mentions[key] > 1 or key in defined]
    own, margin = field_fit(reading, [first[key].text for key in keys], description, list(others.values()))
    scored = []
    for row, key in enumerate(keys):
        score = (
            cue_after.get(key, 0.0)
            + _WEIGHTS["title"] * (key in in_title)
            + _WEIGHTS["mention"] * min(weighted[key] - 1, 3)
            + _WEIGHTS["own"] * float(own[row])
            + _WEIGHTS["margin"] * float(margin[row])
        )
        if score >= MIN_SCORE and (float(margin[row]) > 0 or key in cue_after):
            phrase = first[key]
            scored.append(Term(phrase.text, phrase.start, phrase.end, score))
    kept: list[Term] = []
    for term in sorted(scored, key=lambda t: -t.score):
        words = set(_key(term.text).split())
        if any(words <= set(_key(k.text).split()) or set(_key(k.text).split()) <= words for k in kept):
            continue
        kept.append(term)
        if len(kept) == keep:
            break
    return kept
