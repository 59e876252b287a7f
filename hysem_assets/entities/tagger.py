"""The shipped entity model at run time: ONNX Runtime over the packaged model files, no torch.

:func:`load` opens ``model/entities-int8.onnx`` (built by ``hysem train entities``) with the
packaged MiniLM's tokenizer once each file's sha256 is the one the card (``entities.json``)
records. One pass of the encoder gives every head: the scientific-entity tags (task, method,
metric, material, other scientific term, generic), the disease tags and the relation
projections. Tags are read at each word's first piece; each head's tags for a sentence are the
likeliest valid BIO sequence (no ``I-`` after anything but its own type; on the validation files
this lifted entity F1 by 0.02 to 0.05 over the best tag per word), and an abbreviation defined
after an entity takes its type throughout the document. Where a disease span and a
scientific span share a word, the disease span is kept: the scientific tagger learned on
computer-science abstracts and reads clinical terms as materials or generic terms.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from hysem_assets.core.filehash import CardMismatch, card_sha256, stamp
from hysem_assets.core.text import sentence_spans
from hysem_assets.embedding.minilm import PACKAGE, tokenizer_file, wordpiece_tokenizer
from hysem_assets.entities.corpus import DISEASE, FIRST, RELATIONS, SCIENTIFIC, SECOND, spans, tag_names
from hysem_assets.entities.windows import CLS, SEP, WINDOW, Pieces, pieces, windows

MODEL_DIR = Path(__file__).parent / "model"
MODEL_FILE = "entities-int8.onnx"
CARD_FILE = "entities.json"
REBUILD = "make entities-model"
#: Every entity type the model tags, scientific types first.
TYPES = (*SCIENTIFIC, *DISEASE)
#: Most windows read of one document; the rest of a longer one is left out and the result says so.
MAX_WINDOWS = 64
_SCIENTIFIC_TAGS, _DISEASE_TAGS = tag_names(SCIENTIFIC), tag_names(DISEASE)
_WORD = re.compile(r"[^\W_]+|[^\w\s]|_")


class EntityModelUnavailable(RuntimeError):
    """The weights are missing, unreadable or not the card's; the message names the file and what restores it."""


class MarkersMissing(ValueError):
    """A relation input without both entity markers."""


@dataclass(frozen=True)
class Entity:
    """A tagged entity: its type, character range in the text and its words."""

    type: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Tagged:
    """One text's words (with character offsets), their BIO tags, and how much of it was read."""

    words: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    tags: tuple[str, ...]
    windows: int
    truncated: bool

    def entities(self, text: str) -> list[Entity]:
        """The spans of :attr:`tags` as entities of ``text``, in text order."""
        found = []
        for first, end, kind in sorted(spans(self.tags)):
            start, stop = self.offsets[first][0], self.offsets[end - 1][1]
            found.append(Entity(kind, start, stop, text[start:stop]))
        return found


class EntityModel:
    """One ONNX Runtime session of the entity model and its tokenizer."""

    def __init__(self, folder: Path = MODEL_DIR, model_file: str = MODEL_FILE, card: dict | None = None) -> None:
        from hysem_assets.embedding.onnx_encoder import single_thread_session

        path = folder / model_file
        try:
            self.card = card if card is not None else json.loads((folder / CARD_FILE).read_text(encoding="utf-8"))
            weights = _verified(path, self.card.get("sha256"), f"rebuild it with `{REBUILD}`, or reinstall hysem")
            self.session = single_thread_session(path)
        except EntityModelUnavailable:
            raise
        except Exception as error:  # a missing card or weights, or onnxruntime's own classes for a bad file
            raise EntityModelUnavailable(
                f"the entity model cannot be loaded from {path} ({type(error).__name__}); rebuild it with `{REBUILD}`"
            ) from None
        words = _verified(
            tokenizer_file(),
            self.card.get("tokenizer_sha256"),
            f"the entity model was trained with another tokenizer: reinstall the {PACKAGE} version it was trained "
            f"with, or rebuild it with `{REBUILD}`",
        )
        self.tokenizer = wordpiece_tokenizer(tokenizer_file())
        #: Names these weights in the ids of what is computed from them.
        self.version = f"{weights[:12]}-{words[:12]}"

    def _logits(self, ids: Sequence[int]) -> np.ndarray:
        window = np.array([ids], dtype=np.int64)
        (logits,) = self.session.run(None, {"input_ids": window, "attention_mask": np.ones_like(window)})
        return logits[0]

    def tag_sentences(
        self, sentences: Sequence[Sequence[str]], documents: Sequence[int], max_windows: int = 0
    ) -> tuple[list[list[str]], int, bool]:
        """BIO tags of each sentence's words, sentences of one document read together in windows; with
        ``max_windows``, at most that many windows are read and later words are tagged ``O``.
        Returns the tags, the windows read and whether any were left out."""
        encoded: list[Pieces] = [pieces(self.tokenizer, words) for words in sentences]
        scientific = [np.zeros((len(words), len(_SCIENTIFIC_TAGS)), dtype=np.float32) for words in sentences]
        disease = [np.zeros((len(words), len(_DISEASE_TAGS)), dtype=np.float32) for words in sentences]
        cut = windows(encoded, documents)
        read = cut[:max_windows] if max_windows else cut
        for window in read:
            logits = self._logits(window.ids(encoded))
            at = 1
            for index, first, end in window.parts:
                owners = encoded[index].words
                for piece in range(first, end):
                    if piece == 0 or owners[piece] != owners[piece - 1]:
                        split = np.split(
                            logits[at], [len(_SCIENTIFIC_TAGS), len(_SCIENTIFIC_TAGS) + len(_DISEASE_TAGS)]
                        )
                        scientific[index][owners[piece]], disease[index][owners[piece]] = split[0], split[1]
                    at += 1
        tags = [_merged(_best(s, _SCIENTIFIC_TAGS), _best(d, _DISEASE_TAGS)) for s, d in zip(scientific, disease)]
        return carried_abbreviations(sentences, tags, documents), len(read), len(read) < len(cut)

    def tag(self, text: str, max_windows: int = MAX_WINDOWS) -> Tagged:
        """The words of ``text`` (runs of letters and digits, each other character alone), sentence by sentence,
        with their tags."""
        words, offsets, sentences = [], [], []
        for start, end in sentence_spans(text) or [(0, len(text))]:
            found = [(m.start(), m.end()) for m in _WORD.finditer(text, start, end)]
            if found:
                sentences.append([text[a:b] for a, b in found])
                offsets.extend(found)
        tags, read, truncated = self.tag_sentences(sentences, [0] * len(sentences), max_windows)
        words = [word for sentence in sentences for word in sentence]
        flat = [tag for sentence in tags for tag in sentence]
        return Tagged(tuple(words), tuple(offsets), tuple(flat), read, truncated)

    def relate(self, text: str) -> tuple[str, float]:
        """The relation between the two entities marked in ``text`` (``[[ … ]]`` and ``<< … >>``) and its
        probability; :class:`MarkersMissing` when a marker is not there."""
        ids, where = marked_input(self.tokenizer, text)
        logits = self._logits(ids)
        offset, half = len(_SCIENTIFIC_TAGS) + len(_DISEASE_TAGS), len(RELATIONS)
        scores = logits[where[0], offset : offset + half] + logits[where[1], offset + half : offset + 2 * half]
        probabilities = np.exp(scores - scores.max())
        probabilities /= probabilities.sum()
        best = int(probabilities.argmax())
        return RELATIONS[best], float(probabilities[best])


def marked_input(tokenizer: Tokenizer, text: str) -> tuple[list[int], tuple[int, int]]:
    """A marked sentence as the model reads it, in training and at run time: word-piece ids (each marker a word
    of its own) and the positions of the pieces opening the two markers; :class:`MarkersMissing` without both."""
    spaced = text
    for marker in (*FIRST, *SECOND):
        spaced = spaced.replace(marker, f" {marker} ")
    words = spaced.split()
    missing = [marker for marker in (*FIRST, *SECOND) if marker not in words]
    if missing:
        raise MarkersMissing(f"no {' or '.join(missing)} marker: mark the two entities [[ like this ]] and << this >>")
    encoded = pieces(tokenizer, words)
    ids = [CLS, *encoded.ids[: WINDOW - 2], SEP]
    first_piece = {owner: at + 1 for at, owner in reversed(list(enumerate(encoded.words)))}
    first, second = (min(first_piece[words.index(marker)], len(ids) - 2) for marker in (FIRST[0], SECOND[0]))
    return ids, (first, second)


def _best(logits: np.ndarray, names: Sequence[str]) -> list[str]:
    """The likeliest sequence of valid BIO tags (Viterbi over each word's log-probabilities): an ``I-`` only after
    a ``B-`` or ``I-`` of its type, so a stray inside tag never opens a span of its own."""
    if not len(logits):
        return []
    scores = logits - logits.max(axis=1, keepdims=True)
    scores = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    kind = [name[2:] for name in names]
    inside = np.array([name.startswith("I-") for name in names])
    allowed = np.array([[not inside[b] or kind[a] == kind[b] for b in range(len(names))] for a in range(len(names))])
    blocked = np.where(allowed, 0.0, -np.inf)
    best = np.where(inside, -np.inf, scores[0])
    back = []
    for row in scores[1:]:
        total = best[:, None] + blocked
        back.append(total.argmax(axis=0))
        best = total.max(axis=0) + row
    path = [int(best.argmax())]
    for pointers in reversed(back):
        path.append(int(pointers[path[-1]]))
    return [names[i] for i in reversed(path)]


def _merged(scientific: list[str], disease: list[str]) -> list[str]:
    """Valid BIO of both heads' tags: a scientific span sharing a word with a disease span gives way to it."""
    tags = ["O"] * len(scientific)
    taken = set()
    for first, end, kind in spans(disease):
        tags[first:end] = [f"B-{kind}"] + [f"I-{kind}"] * (end - first - 1)
        taken.update(range(first, end))
    for first, end, kind in spans(scientific):
        if not taken.intersection(range(first, end)):
            tags[first:end] = [f"B-{kind}"] + [f"I-{kind}"] * (end - first - 1)
    return tags


def carried_abbreviations(
    sentences: Sequence[Sequence[str]], tags: Sequence[list[str]], documents: Sequence[int]
) -> list[list[str]]:
    """``tags`` with each abbreviation a document defines after an entity ("ataxia telangiectasia ( A-T )") given
    that entity's type, there and wherever else in the document its words stand untagged.

    A short form is one to four words in brackets right after the span, with a capital letter and the span's first
    letter as its own (Schwartz and Hearst's first test). The model reads a bare abbreviation with little to go
    on; its definition says what it is.
    """
    defined: dict[int, dict[tuple[str, ...], str]] = {}
    for words, found, document in zip(sentences, tags, documents, strict=True):
        for first, end, kind in spans(found):
            close = next((i for i in range(end + 2, min(end + 6, len(words))) if words[i] == ")"), None)
            if close is None or words[end] != "(":
                continue
            short = tuple(words[end + 1 : close])
            letters = "".join(short)
            if any(c.isupper() for c in letters) and letters[0].lower() == words[first][0].lower():
                defined.setdefault(document, {})[short] = kind
    carried = [list(found) for found in tags]
    for words, found, document in zip(sentences, carried, documents, strict=True):
        for short, kind in defined.get(document, {}).items():
            size = len(short)
            for at in range(len(words) - size + 1):
                if tuple(words[at : at + size]) == short and all(tag == "O" for tag in found[at : at + size]):
                    found[at : at + size] = [f"B-{kind}"] + [f"I-{kind}"] * (size - 1)
    return carried


def _verified(path: Path, expected: str | None, fix: str) -> str:
    try:
        return card_sha256(path, expected, "the entity model", fix)
    except CardMismatch as mismatch:
        raise EntityModelUnavailable(str(mismatch)) from None
    except FileNotFoundError:
        raise EntityModelUnavailable(f"the entity model's {path} is missing; {fix}") from None


def keep_types(tags: Iterable[str], types: Sequence[str]) -> list[str]:
    """``tags`` with every span of a type outside ``types`` turned to ``O``."""
    return [tag if tag == "O" or tag[2:] in types else "O" for tag in tags]


def load(folder: Path | None = None) -> EntityModel:
    """The process' entity model of ``folder`` (default :data:`MODEL_DIR`), loaded and checked on first use and
    again only once its weights, card or tokenizer change on disk."""
    where = Path(folder or MODEL_DIR)
    return _load(str(where), stamp(where / MODEL_FILE), stamp(where / CARD_FILE), stamp(tokenizer_file()))


@lru_cache(maxsize=2)
def _load(folder: str, *versions: object) -> EntityModel:
    return EntityModel(Path(folder))
