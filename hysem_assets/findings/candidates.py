"""The sentences of an article that may state a comparison's result, ranked by the words they share with it.

A full text has hundreds of sentences and the model reads each beside the comparison, so a
cheap first pass keeps the few that share the comparison's words: an outcome's words count
twice (a result sentence always names its outcome, often not its arms), and a word counts by
how rare it is within the article (every sentence of a trial of aspirin says "aspirin").
Section headings are kept beside each sentence: the evidence's location, and where a
result may stand.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hysem_assets.core.matcher import fold
from hysem_assets.core.text import sentence_spans

#: A heading line: the corpus' plain-text form ("ABSTRACT.RESULTS:", "BODY.METHODS.DESIGN:") or Markdown's.
_HEADING = re.compile(r"^(?:#{1,6}[ \t]+(?P<markdown>[^\n]+)|(?P<plain>[A-Z][A-Z0-9 .&/-]{2,80}):+)[ \t]*$", re.M)
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
#: Words that name no outcome or arm; they rank nothing.
_STOP = frozenset(
    """a an and are as at be by for from group groups in into is it its of on or than that the their these this to
    was were with without versus vs compared patients participants subjects treatment treated control""".split()
)
#: A sentence that reports something (a number, a test, a change) and one under a results heading rank this much higher.
_REPORTS = re.compile(r"\d|signific|differ|\bp\s*[<=>]|increas|decreas|reduc|improv|higher|lower|similar", re.I)
_RESULTS = re.compile(r"result|conclusion|finding", re.I)
_PRIOR = 1.3
#: Shortest text a sentence needs to state a result.
_SHORTEST = 25


@dataclass(frozen=True)
class Sentence:
    """One sentence: its character range in the article, its text and the heading it stands under."""

    start: int
    end: int
    text: str
    section: str


def words(text: str) -> list[str]:
    """Content words of ``text``, folded, a plural's final s dropped."""
    found = []
    for word in _WORD.findall(fold(text)):
        if word in _STOP:
            continue
        found.append(word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word)
    return found


def sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` with their section; heading lines are none."""
    found: list[Sentence] = []
    bounds = [(m.end(), _section_name(m)) for m in _HEADING.finditer(text)]
    starts = [(0, ""), *bounds]
    ends = [m.start() for m in _HEADING.finditer(text)] + [len(text)]
    for (start, section), end in zip(starts, ends):
        for first, last in sentence_spans(text[start:end]):
            piece = text[start + first : start + last]
            if len(piece) >= _SHORTEST:
                found.append(Sentence(start + first, start + last, " ".join(piece.split()), section))
    return found


def _section_name(match: re.Match) -> str:
    if match.group("markdown"):
        return match.group("markdown").strip()
    parts = match.group("plain").split(".")
    return ("Abstract: " if parts[0] == "ABSTRACT" else "") + parts[-1].strip().capitalize()


def ranked(article: Sequence[Sentence], intervention: str, comparator: str, outcome: str, keep: int) -> list[int]:
    """Indices of the ``keep`` sentences of ``article`` that share most of the comparison's words, best first."""
    bags = [Counter(words(sentence.text)) for sentence in article]
    documents = Counter(word for bag in bags for word in bag)
    total = len(article) + 1

    def weight(word: str) -> float:
        return math.log(total / (1 + documents.get(word, 0))) + 1.0

    query = Counter({w: 2.0 for w in words(outcome)})
    for word in words(intervention) + words(comparator):
        query[word] = max(query[word], 1.0)
    scores = [
        sum(query[w] * weight(w) for w in query if w in bag)
        / (1 + len(bag)) ** 0.25
        * (_PRIOR if _REPORTS.search(sentence.text) else 1.0)
        * (_PRIOR if _RESULTS.search(sentence.section) else 1.0)
        for sentence, bag in zip(article, bags)
    ]
    return sorted(range(len(article)), key=lambda i: (-scores[i], i))[:keep]
