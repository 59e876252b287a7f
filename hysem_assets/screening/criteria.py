"""Ranking before any decision: each record's similarity to the protocol's eligibility criteria.

Active learning needs one included and one excluded record to learn from; until a reviewer
has made both decisions, records are ordered by how much of the inclusion criteria's
vocabulary they share (TF-IDF cosine, the corpus's own term weights), less half their
similarity to the exclusion criteria. The same words are the key terms the screening page
highlights.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

#: How much resembling the exclusion criteria counts against a record.
EXCLUSION_WEIGHT = 0.5
#: Words of criteria that say how a criterion is phrased, not what it is about.
CRITERIA_WORDS = frozenset(
    "study studies report reports reported reporting include includes included including exclude excludes excluded "
    "excluding published article articles paper papers using use used based english language".split()
)
STOP_WORDS = sorted(ENGLISH_STOP_WORDS | CRITERIA_WORDS)
_WORD = re.compile(r"(?u)\b\w\w+\b")


def criteria_relevance(texts: Sequence[str], inclusion: Sequence[str], exclusion: Sequence[str] = ()) -> np.ndarray:
    """Per record of ``texts``: cosine similarity to the inclusion criteria, less
    ``EXCLUSION_WEIGHT`` times that to the exclusion criteria."""
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, stop_words=STOP_WORDS)
    try:
        records = vectorizer.fit_transform([text or " " for text in texts])
    except ValueError:  # no record has a word beyond stop words
        return np.zeros(len(texts))
    score = (records @ vectorizer.transform([" ".join(inclusion)]).T).toarray().ravel()
    if exclusion:
        score -= EXCLUSION_WEIGHT * (records @ vectorizer.transform([" ".join(exclusion)]).T).toarray().ravel()
    return score


def key_terms(criteria: Sequence[str]) -> list[str]:
    """The content words of ``criteria``, in order of first use, for highlighting."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(" ".join(criteria).lower()):
        if word not in STOP_WORDS and len(word) > 2 and not word.isdigit():
            seen.setdefault(word, None)
    return list(seen)
