"""The EBM-NLP span corpus in CoNLL form, read into documents of words and per-class labels.

Two files make the training data: abstracts whose crowd labels cover all three span types,
and abstracts whose labels cover interventions only. A document keeps, per class, whether
its labels speak for that class at all (``known``), so training can leave the unknown ones
out of the loss instead of teaching that every participant there is outside a span.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

#: The span classes, in the order of the model's outputs.
CLASSES = ("participants", "interventions", "outcomes")
_LABELS = {"I-PAR": "participants", "I-INT": "interventions", "I-OUT": "outcomes"}
#: The shared folder's two files: abstracts labelled for all three classes, and for interventions only.
THREE_CLASSES = "crowd_960.conll"
INTERVENTIONS_ONLY = "interventions_1978.conll"


@dataclass(frozen=True)
class Document:
    """One abstract: its words, one flag per class and word, and the classes its labels cover."""

    pmid: str
    words: tuple[str, ...]
    tags: tuple[tuple[bool, ...], ...]  # tags[class][word]
    known: tuple[bool, ...]  # known[class]


def read_conll(path: Path, known: Sequence[str] = CLASSES) -> list[Document]:
    """The documents of an EBM-NLP CoNLL file (label in the last column); ``known`` the classes it labels."""
    documents: list[Document] = []
    pmid, words, labels = None, [], []

    def close() -> None:
        if pmid is not None and words:
            tags = tuple(tuple(_LABELS.get(label) == name for label in labels) for name in CLASSES)
            documents.append(Document(pmid, tuple(words), tags, tuple(name in known for name in CLASSES)))

    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("-DOCSTART-"):
            close()
            pmid, words, labels = line.partition("(")[2].rstrip(")").strip(), [], []
            continue
        parts = line.split()
        if not parts:
            continue
        if pmid is None:
            raise ValueError(f"{path}:{number}: a token before the first -DOCSTART- line")
        words.append(parts[0])
        labels.append(parts[-1])
    close()
    return documents


def training_corpus(folder: Path) -> list[Document]:
    """Every labelled abstract of the shared folder: the three-class file, then the interventions-only one.

    An abstract in both files is kept once, from the three-class file.
    """
    full = read_conll(folder / THREE_CLASSES)
    seen = {document.pmid for document in full}
    interventions = read_conll(folder / INTERVENTIONS_ONLY, known=("interventions",))
    return full + [document for document in interventions if document.pmid not in seen]


def relabelled(documents: Sequence[Document], others: Sequence[Document]) -> list[Document]:
    """The ``documents`` that ``others`` labels too, word for word, with the labels of ``others`` for the
    classes it covers: a second, independent reading of the same abstracts to score against.

    The interventions-only file labels 416 of the three-class abstracts a second time, apart from their
    three-class labels; a document whose words differ between the two files is left out.
    """
    by_pmid = {other.pmid: other for other in others}
    found = []
    for document in documents:
        other = by_pmid.get(document.pmid)
        if other is None or other.words != document.words:
            continue
        tags = tuple(other.tags[c] if other.known[c] else document.tags[c] for c in range(len(CLASSES)))
        found.append(replace(document, tags=tags))
    return found


def split(documents: Sequence[Document], share: float = 0.12, seed: int = 13) -> tuple[list, list]:
    """(train, validation): a fixed, seeded share of the three-class abstracts held out, never trained on.

    Only abstracts labelled for all three classes are held out, so the validation split scores every class.
    """
    full = sorted({document.pmid for document in documents if all(document.known)})
    held = set(random.Random(seed).sample(full, round(len(full) * share)))
    train = [document for document in documents if document.pmid not in held]
    validation = [document for document in documents if document.pmid in held and all(document.known)]
    return train, validation


def spans(flags: Sequence[bool]) -> Iterator[tuple[int, int]]:
    """(start, end) word ranges of the runs of True in ``flags``."""
    start = None
    for index, flag in enumerate([*flags, False]):
        if flag and start is None:
            start = index
        elif not flag and start is not None:
            yield start, index
            start = None
