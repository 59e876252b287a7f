"""The shipped span tagger at run time: ONNX Runtime over the packaged model files, no torch.

:func:`load` opens ``model/tagger-int8.onnx`` beside this module (built by ``hysem train
tagger``) with the packaged MiniLM's tokenizer, once each file's sha256 is the one the card
(``tagger.json``) records: weights damaged in place, even at their size, are refused, never run;
:meth:`Tagger.tag` reads texts in windows of whole sentences, as training cut them, each
window alone, and returns each text's spans per class with character offsets and the mean
and highest probability of their words (a word's probability is the mean over its word pieces).
Each class has two cuts, which the build chose and the card records: a word whose probability
reaches the class's threshold joins a run, and a run is a span only if its surest word reaches
the class's peak. Low thresholds find a span's whole extent, high peaks keep the runs that are
surely of the class (hysteresis, as edge detectors keep weak edges only where joined to strong ones).
:meth:`Tagger.read` reads one document within a budget of word pieces.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from hysem_assets.core.filehash import CardMismatch, card_sha256, stamp
from hysem_assets.core.text import sentence_spans
from hysem_assets.embedding.minilm import PACKAGE, tokenizer_file, wordpiece_tokenizer
from hysem_assets.pico.corpus import CLASSES

#: Where the shipped weights live, and what rebuilds them.
MODEL_DIR = Path(__file__).parent / "model"
MODEL_FILE = "tagger-int8.onnx"
CARD_FILE = "tagger.json"
REBUILD = "make tagger"
#: Most word pieces in one window, [CLS] and [SEP] included (training cuts the same windows).
WINDOW = 256
#: Longest text the tagger reads, in characters; the rest of a longer one is left out.
MAX_CHARS = 60_000
#: The opening of a text (title and abstract) read whole, in word pieces.
OPENING = 512
#: Headings of the sections of a full text that name participants, interventions and outcomes.
_SECTIONS = re.compile(
    r"method|material|patient|participant|subject|population|design|intervention|procedure|outcome|endpoint|result",
    re.IGNORECASE,
)
_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=[ \t]*\n\s*\n|\s*\Z)", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class TaggerUnavailable(RuntimeError):
    """The weights are missing, unreadable or not the card's; the message names the file and what restores it."""


def verified(path: Path, expected: str | None, fix: str) -> str:
    """The sha256 of ``path`` (hashed once per version of the file), if it is the one the card records."""
    try:
        return card_sha256(path, expected, "the span tagger", fix)
    except CardMismatch as mismatch:
        raise TaggerUnavailable(str(mismatch)) from None


@dataclass(frozen=True)
class Span:
    """A tagged span: its class, character range in the text, words, and its words' mean and highest probability."""

    label: str
    start: int
    end: int
    text: str
    score: float
    peak: float = 1.0  # the probability of its surest word


class Tagger:
    """One ONNX Runtime session of the tagger, one thread per call: extraction reads several documents at once,
    and on two cores two single-threaded calls outran one two-threaded call at a time by about 15%."""

    def __init__(
        self,
        folder: Path = MODEL_DIR,
        threshold: float | None = None,
        model_file: str = MODEL_FILE,
        card: dict | None = None,
    ) -> None:
        from hysem_assets.embedding.onnx_encoder import single_thread_session

        path = folder / model_file
        try:
            self.card = card if card is not None else json.loads((folder / CARD_FILE).read_text(encoding="utf-8"))
            weights = verified(path, self.card.get("sha256"), f"rebuild it with `{REBUILD}`, or reinstall hysem")
            self.session = single_thread_session(path)
        except TaggerUnavailable:
            raise
        except Exception as error:  # onnxruntime raises its own classes for a bad file
            raise TaggerUnavailable(
                f"the span tagger cannot be loaded from {path} ({type(error).__name__}); rebuild it with `{REBUILD}`"
            ) from None
        vocabulary = tokenizer_file()
        words = verified(
            vocabulary,
            self.card.get("tokenizer_sha256"),
            f"the tagger was trained with another tokenizer: reinstall the {PACKAGE} version it was trained with, "
            f"or rebuild it with `{REBUILD}`",
        )
        self.tokenizer = wordpiece_tokenizer(vocabulary)
        #: Per class, the mean word probability that puts a word in a run: ``threshold`` for every class when
        #: given, else the ones the build chose on its development split (the card's ``thresholds``), else 0.5.
        chosen = self.card.get("thresholds", {})
        self.thresholds = np.array(
            [threshold if threshold is not None else chosen.get(label, 0.5) for label in CLASSES], dtype=np.float32
        )
        #: Per class, the probability a run's surest word must reach to make it a span (the card's ``peaks``).
        self.peaks = np.array([self.card.get("peaks", {}).get(label, 0.0) for label in CLASSES], dtype=np.float32)
        #: Names these weights and cuts in the ids of extraction caches: new weights or cuts, new answers. The
        #: hashes are the files' own, so restored or retrained weights never meet answers of others.
        self.version: str = "-".join(
            [weights[:12], words[:12], *(f"{t:g}" for t in self.thresholds), *(f"{p:g}" for p in self.peaks)]
        )

    def tag(self, texts: Sequence[str]) -> list[list[Span]]:
        """The spans of each text, in text order.

        Each window runs alone: int8 activations are scaled per call, so a window's spans never depend on
        its neighbours, and no call computes padding (windows of one abstract differ in length by half).
        """
        pieces = [self._pieces(text[:MAX_CHARS]) for text in texts]
        probabilities = [np.zeros((len(ids), len(CLASSES)), dtype=np.float32) for ids, *_ in pieces]
        for (ids, _, cuts, _), found in zip(pieces, probabilities, strict=True):
            for first, end in itertools.pairwise(cuts):
                window = np.array([[101, *ids[first:end], 102]], dtype=np.int64)
                feed = {"input_ids": window, "attention_mask": np.ones_like(window)}
                (logits,) = self.session.run(None, feed)
                found[first:end] = 1 / (1 + np.exp(-logits[0, 1:-1]))
        return [
            _spans(text[:MAX_CHARS], offsets, ends, p, self.thresholds, self.peaks)
            for text, (_, offsets, _, ends), p in zip(texts, pieces, probabilities, strict=True)
        ]

    def read(self, text: str, budget: int) -> list[Span]:
        """The spans of one document: its opening, then the sections named like methods or results, until
        ``budget`` word pieces are read (0: all of it). Offsets are into ``text``; control characters are read
        as spaces."""
        text = _CONTROL.sub(" ", text[:MAX_CHARS])
        parts = reading_parts(text, budget, lambda part: len(self.tokenizer.encode(part, add_special_tokens=False)))
        tagged = self.tag([text[start:end] for start, end in parts])
        return [
            Span(span.label, span.start + start, span.end + start, span.text, span.score, span.peak)
            for (start, _), spans in zip(parts, tagged, strict=True)
            for span in spans
        ]

    def _pieces(self, text: str) -> tuple[list[int], list[tuple[int, int]], list[int], list[int]]:
        """Word-piece ids and offsets of ``text``, where its windows of whole sentences start and end (in pieces),
        and where its sentences end (in characters)."""
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        ids, offsets = encoding.ids, encoding.offsets
        sentence_ends = sorted({end for _, end in sentence_spans(text)})
        room, cuts, sentence_start, next_end = WINDOW - 2, [0], 0, 0
        for piece, (start, _) in enumerate(offsets):
            while next_end < len(sentence_ends) and sentence_ends[next_end] <= start:  # this piece opens a sentence
                next_end += 1
                sentence_start = piece
            if piece - cuts[-1] >= room:
                cuts.append(sentence_start if cuts[-1] < sentence_start < piece else piece)
        if offsets:
            cuts.append(len(ids))
        return ids, offsets, cuts, sentence_ends


def reading_parts(
    text: str, budget: int, pieces: Callable[[str], int], opening: int = OPENING
) -> list[tuple[int, int]]:
    """Character ranges of ``text`` to tag: all of a text within ``budget`` word pieces (or with budget 0), else
    its opening (``opening`` pieces of whole paragraphs) and then, in text order, the paragraphs of the sections
    whose headings :data:`_SECTIONS` names, while the budget lasts. ``pieces`` counts a part's word pieces."""
    # a word piece holds one character at least, so a text no longer than the budget needs no counting
    if budget <= 0 or len(text) <= budget or pieces(text) <= budget:
        return [(0, len(text))] if text.strip() else []
    paragraphs = [(m.start(), m.end()) for m in _PARAGRAPH.finditer(text)]
    headings = [(m.start(), bool(_SECTIONS.search(m.group(1)))) for m in _HEADING.finditer(text)]
    chosen, used = [], 0
    for start, end in paragraphs:
        section = next((wanted for at, wanted in reversed(headings) if at <= start), False)
        if used >= opening and not section:
            continue
        cost = pieces(text[start:end])
        if used + cost > budget:
            if used >= opening:
                continue
            # the opening ends inside this paragraph: its share of the budget left, cut at a space
            end = start + int((end - start) * (budget - used) / cost)
            end = max(text.rfind(" ", start, end), start + 1) if " " in text[start:end] else end
            chosen.append((start, end))
            break
        chosen.append((start, end))
        used += cost
    return chosen


def _spans(
    text: str,
    offsets: Sequence[tuple[int, int]],
    sentence_ends: Sequence[int],
    probabilities: np.ndarray,
    thresholds: np.ndarray,
    peaks: np.ndarray,
) -> list[Span]:
    """Runs of words whose mean probability of a class reaches that class's threshold, per class, kept where
    their surest word reaches the class's peak.

    A word is a run of pieces with no gap between letters or digits ("HbA1c" is one word,
    "type-2" three), so a word is in or out of a span whole. A run ends with its sentence: a low
    threshold would otherwise join a sentence's weak last words to the next one's first.
    """
    if not offsets:
        return []
    firsts = [0] + [
        index
        for index in range(1, len(offsets))
        if not (
            offsets[index - 1][1] == offsets[index][0]
            and text[offsets[index][0]].isalnum()
            and text[offsets[index][0] - 1].isalnum()
        )
    ]
    lasts = [index - 1 for index in firsts[1:]] + [len(offsets) - 1]
    sizes = np.diff([*firsts, len(offsets)])
    words = np.add.reduceat(probabilities, firsts, axis=0) / sizes[:, None]
    sentence = np.searchsorted(sentence_ends, [offsets[first][0] for first in firsts], side="right")
    opens = np.concatenate(([True], sentence[1:] != sentence[:-1]))  # the word opens a sentence
    found: list[Span] = []
    for c, label in enumerate(CLASSES):
        inside = words[:, c] >= thresholds[c]
        joined = np.concatenate(([False], inside[:-1] & inside[1:] & ~opens[1:]))  # the word goes on a run
        starts = np.flatnonzero(inside & ~joined)
        ends = np.flatnonzero(inside & ~np.concatenate((joined[1:], [False]))) + 1
        for first, end in zip(starts, ends, strict=True):
            start, stop = offsets[firsts[first]][0], offsets[lasts[end - 1]][1]
            inside_words = words[first:end, c]
            if inside_words.max() < peaks[c]:
                continue
            found.append(
                Span(label, start, stop, text[start:stop], float(inside_words.mean()), float(inside_words.max()))
            )
    return sorted(found, key=lambda span: (span.start, CLASSES.index(span.label)))


def load(folder: Path | None = None) -> Tagger:
    """The process' tagger of ``folder`` (default :data:`MODEL_DIR`): one session, loaded and checked on first
    use, and again only once its weights, card or tokenizer change on disk."""
    where = Path(folder or MODEL_DIR)
    return _load(str(where), stamp(where / MODEL_FILE), stamp(where / CARD_FILE), stamp(tokenizer_file()))


@lru_cache(maxsize=2)
def _load(folder: str, *versions: object) -> Tagger:
    return Tagger(Path(folder))
