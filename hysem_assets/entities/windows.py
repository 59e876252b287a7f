"""Word pieces of tagged sentences and the windows the entity model reads them in, at training and at run time.

A sentence's words become word pieces of the packaged MiniLM's tokenizer; consecutive sentences
of one document share a window of at most :data:`WINDOW` pieces, so a word is read with the
sentences around it, and a sentence longer than a window is cut into windows of its own.
Training and tagging cut the same windows, so the model reads text as it learned it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tokenizers import Tokenizer

#: Most word pieces in one window, [CLS] and [SEP] included.
WINDOW = 256
CLS, SEP, UNKNOWN = 101, 102, 100


@dataclass(frozen=True)
class Pieces:
    """One sentence's word-piece ids and, per piece, the index of its word (a word's first piece carries its tag)."""

    ids: tuple[int, ...]
    words: tuple[int, ...]


def pieces(tokenizer: Tokenizer, words: Sequence[str]) -> Pieces:
    """The word pieces of ``words`` (a word the vocabulary cannot spell is one unknown piece)."""
    if not words:
        return Pieces((), ())
    encoding = tokenizer.encode(list(words), is_pretokenized=True, add_special_tokens=False)
    ids, owners = list(encoding.ids), list(encoding.word_ids)
    missing = sorted(set(range(len(words))) - set(owners))
    for word in missing:  # a word of characters the tokenizer drops (control, some symbols) keeps one piece
        at = next((i for i, owner in enumerate(owners) if owner > word), len(owners))
        ids.insert(at, UNKNOWN)
        owners.insert(at, word)
    return Pieces(tuple(ids), tuple(owners))


@dataclass(frozen=True)
class Window:
    """A slice of a document's sentences: ``(sentence, first piece, end piece)`` per part, in order."""

    parts: tuple[tuple[int, int, int], ...]

    def ids(self, sentences: Sequence[Pieces]) -> list[int]:
        """The window's model input: [CLS], its pieces, [SEP]."""
        return [CLS, *(i for s, a, b in self.parts for i in sentences[s].ids[a:b]), SEP]


def windows(sentences: Sequence[Pieces], documents: Sequence[int], window: int = WINDOW) -> list[Window]:
    """Windows over ``sentences`` (``documents[i]`` names sentence i's document): whole sentences of one
    document packed in order while they fit, a sentence longer than a window cut into windows of its own."""
    room = window - 2
    found: list[Window] = []
    open_parts: list[tuple[int, int, int]] = []
    used = 0
    for index, sentence in enumerate(sentences):
        size = len(sentence.ids)
        starts_document = index > 0 and documents[index] != documents[index - 1]
        if open_parts and (used + size > room or starts_document):
            found.append(Window(tuple(open_parts)))
            open_parts, used = [], 0
        if size > room:
            found.extend(Window(((index, a, min(a + room, size)),)) for a in range(0, size, room))
            continue
        open_parts.append((index, 0, size))
        used += size
    if open_parts:
        found.append(Window(tuple(open_parts)))
    return found
