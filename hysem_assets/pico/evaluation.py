"""Scores of span tagging against labelled abstracts, token by token, as a reviewer's fields are scored.

Two views of the same labels. :func:`span_scores` asks how well the tagger's own spans
cover the labelled words. :func:`value_scores` asks what a reader of the extracted fields
gets: every occurrence of an extracted value in the abstract marks its tokens, and the
marked tokens of a class are compared with the labelled ones (population against
participants; interventions and comparators together against interventions; outcomes
against outcomes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from hysem_assets.pico.corpus import CLASSES, Document

_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass
class Counts:
    """True positives, false positives and false negatives of one class, over tokens."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, predicted: Sequence[bool], gold: Sequence[bool]) -> None:
        self.tp += sum(p and g for p, g in zip(predicted, gold, strict=True))
        self.fp += sum(p and not g for p, g in zip(predicted, gold, strict=True))
        self.fn += sum(g and not p for p, g in zip(predicted, gold, strict=True))

    def scores(self) -> dict[str, float]:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def document_text(document: Document) -> tuple[str, list[tuple[int, int]]]:
    """The abstract as one text (its words joined by spaces) and each word's character range."""
    ranges, position = [], 0
    for word in document.words:
        ranges.append((position, position + len(word)))
        position += len(word) + 1
    return " ".join(document.words), ranges


def span_scores(documents: Sequence[Document], spans_of: Callable[[list[str]], list[list]]) -> dict[str, dict]:
    """Per class, how the tagged spans (``spans_of(texts)``: spans with ``label``, ``start``, ``end``) cover
    the labelled words; a word counts as tagged when a span of its class overlaps it."""
    texts = [document_text(document) for document in documents]
    counts = {label: Counts() for label in CLASSES}
    for document, (_, ranges), spans in zip(documents, texts, spans_of([t for t, _ in texts]), strict=True):
        for c, label in enumerate(CLASSES):
            own = [(s.start, s.end) for s in spans if s.label == label]
            tagged = [any(start < end_ and start_ < end for start_, end_ in own) for start, end in ranges]
            counts[label].add(tagged, document.tags[c])
    return {label: count.scores() for label, count in counts.items()}


def _tokens(document: Document) -> tuple[list[str], list[int]]:
    """The document's tokens as :data:`_TOKEN` splits them, and the word each belongs to."""
    tokens, owners = [], []
    for index, word in enumerate(document.words):
        for token in _TOKEN.findall(word.lower()):
            tokens.append(token)
            owners.append(index)
    return tokens, owners


def occurrences(tokens: Sequence[str], values: Iterable[str]) -> list[bool]:
    """Tokens covered by any occurrence of any value (tokens compared in lower case)."""
    marked = [False] * len(tokens)
    for value in values:
        wanted = _TOKEN.findall(value.lower())
        if not wanted:
            continue
        for start in range(len(tokens) - len(wanted) + 1):
            if tokens[start : start + len(wanted)] == wanted:
                marked[start : start + len(wanted)] = [True] * len(wanted)
    return marked


def value_scores(
    documents: Sequence[Document], values: Sequence[Mapping[str, Iterable[str]]], fields: Mapping[str, Sequence[str]]
) -> dict[str, dict]:
    """Per class, the tokens marked by the extracted values of the fields ``fields[class]`` names.

    ``values[i]`` holds document i's values per field (strings; lists flattened by the caller).
    """
    counts = {label: Counts() for label in fields}
    for document, found in zip(documents, values, strict=True):
        tokens, owners = _tokens(document)
        for label, names in fields.items():
            gold = [document.tags[CLASSES.index(label)][owner] for owner in owners]
            counts[label].add(occurrences(tokens, [v for name in names for v in found.get(name, [])]), gold)
    return {label: count.scores() for label, count in counts.items()}


#: Which fields of the generic protocol answer for which labelled class.
GENERIC_FIELDS = {
    "participants": ["population"],
    "interventions": ["intervention_or_exposure", "comparator"],
    "outcomes": ["outcomes"],
}
