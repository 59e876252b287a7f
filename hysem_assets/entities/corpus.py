"""The shared entity and relation corpora, read into sentences of words with BIO tags and marked pairs.

Entity files are CoNLL: one token a line with its label in the last column, a blank line
between sentences, ``-DOCSTART-`` between documents (the disease corpus has none). SciERC
labels spans in the IO scheme (``I-Method`` throughout, ``B-`` only where two spans of one
type touch), the disease corpus in BIO; both are read as BIO, a span starting wherever the
type changes or a ``B-`` says so. Relation files hold one JSON object a line: ``text`` with
the two entities marked ``[[ … ]]`` and ``<< … >>``, and ``label``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Entity types per tag set, in the order of each head's outputs (after ``O``, a ``B-`` and an ``I-`` per type).
SCIENTIFIC = ("Task", "Method", "Metric", "Material", "OtherScientificTerm", "Generic")
DISEASE = ("Disease",)
#: Relation labels, in the order of the relation head's outputs.
RELATIONS = ("USED-FOR", "FEATURE-OF", "HYPONYM-OF", "PART-OF", "COMPARE", "CONJUNCTION", "EVALUATE-FOR")
#: The markers around a relation's first and second entity.
FIRST, SECOND = ("[[", "]]"), ("<<", ">>")


def tag_names(types: Sequence[str]) -> tuple[str, ...]:
    """The BIO tags of ``types`` in output order: ``O``, then ``B-T`` and ``I-T`` per type."""
    return ("O", *(f"{prefix}-{name}" for name in types for prefix in ("B", "I")))


@dataclass(frozen=True)
class Sentence:
    """One sentence: its words, their BIO tags and the document it belongs to (its index in the file)."""

    words: tuple[str, ...]
    tags: tuple[str, ...]
    document: int


@dataclass(frozen=True)
class Pair:
    """A sentence with two marked entities and the relation between them (``""`` when unlabelled)."""

    text: str
    label: str


def bio(labels: Sequence[str]) -> list[str]:
    """IO or BIO labels as BIO: an ``I-`` after ``O`` or after another type opens a span."""
    tags, previous = [], "O"
    for label in labels:
        kind = label[2:] if label[:2] in ("B-", "I-") else ""
        if not kind:
            tags.append("O")
        elif label.startswith("B-") or previous[2:] != kind:
            tags.append(f"B-{kind}")
        else:
            tags.append(f"I-{kind}")
        previous = tags[-1]
    return tags


def read_conll(path: Path) -> list[Sentence]:
    """The sentences of a CoNLL file (token first, label last; a line of one column has label ``O``)."""
    return list(conll_sentences(path.read_text(encoding="utf-8").splitlines()))


def conll_sentences(lines: Sequence[str]) -> Iterator[Sentence]:
    """Sentences of CoNLL ``lines``; ``-DOCSTART-`` opens a new document and is no sentence."""
    document, words, labels = 0, [], []
    for line in [*lines, ""]:
        parts = line.split()
        if parts and parts[0] == "-DOCSTART-":
            if words:
                yield Sentence(tuple(words), tuple(bio(labels)), document)
                words, labels = [], []
            document += 1
        elif parts:
            words.append(parts[0])
            labels.append(parts[-1] if len(parts) > 1 else "O")
        elif words:
            yield Sentence(tuple(words), tuple(bio(labels)), document)
            words, labels = [], []


def spans(tags: Sequence[str]) -> set[tuple[int, int, str]]:
    """(first word, end, type) of each span of BIO ``tags``; an ``I-`` that opens a span counts as a ``B-``."""
    found, start, kind = set(), None, ""
    for index, tag in enumerate([*tags, "O"]):
        opens = tag.startswith("B-") or (tag.startswith("I-") and tag[2:] != kind)
        if start is not None and (tag == "O" or opens):
            found.add((start, index, kind))
            start, kind = None, ""
        if opens:
            start, kind = index, tag[2:]
    return found


def read_pairs(path: Path) -> list[Pair]:
    """The marked sentences of a relation file, in file order."""
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            pairs.append(Pair(record["text"], record.get("label", "")))
    return pairs
