"""Ranking before any decision: each record's similarity to the protocol's eligibility criteria.

Active learning needs one included and one excluded record to learn from; until a reviewer
has made both decisions, records are ordered by how much of the inclusion criteria's
content words and word pairs they share (cosine of TF-IDF vectors, in the ranker's own
features and term weights), less half their similarity to what the exclusion criteria add:
their words that the inclusion criteria do not use, since exclusions are often negations of
inclusions ("no eligible outcome reported") whose topic words must not count against a record.
The inclusion criteria's content words are the key terms the screening page highlights.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from hysem_assets.screening.ranker import Records

#: How much resembling the exclusion criteria counts against a record.
EXCLUSION_WEIGHT = 0.5
#: Words of criteria that say how a criterion is phrased, not what it is about.
CRITERIA_WORDS = frozenset(
    "study studies report reports reported reporting include includes included including exclude excludes excluded "
    "excluding published article articles paper papers using use used based english language".split()
)
STOP_WORDS = ENGLISH_STOP_WORDS | CRITERIA_WORDS
_WORD = re.compile(r"(?u)\b\w\w+\b")


def criteria_relevance(records: Records, inclusion: Sequence[str], exclusion: Sequence[str] = ()) -> np.ndarray:
    """Per record: cosine similarity to the inclusion criteria's content words, less
    ``EXCLUSION_WEIGHT`` times that to the exclusion criteria's words the inclusion ones lack."""
    if records.vectorizer is None:
        return np.zeros(records.words.shape[0])

    def similarity(words: list[str]) -> np.ndarray:
        criteria_vector = records.vectorizer.transform([" ".join(words)])
        return (records.words @ criteria_vector.T).toarray().ravel()

    included = _content_words(inclusion)
    score = similarity(included)
    stems = {_stem(word) for word in included}
    excluded = [word for word in _content_words(exclusion) if _stem(word) not in stems]
    if excluded:
        score -= EXCLUSION_WEIGHT * similarity(excluded)
    return score


def key_terms(criteria: Sequence[str]) -> list[str]:
    """The content words of ``criteria``, in order of first use, for highlighting."""
    return list(dict.fromkeys(word for word in _content_words(criteria) if len(word) > 2 and not word.isdigit()))


def _stem(word: str) -> str:
    """A word less a plural ending: enough to see that "methods" and "method" are one criterion's word."""
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _content_words(criteria: Sequence[str]) -> list[str]:
    """The words of ``criteria`` in order, stop words and criteria phrasing left out."""
    return [word for word in _WORD.findall(" ".join(criteria).lower()) if word not in STOP_WORDS]
