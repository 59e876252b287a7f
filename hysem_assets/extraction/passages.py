"""Text fields with cues: the short span a cue announces, else the sentence most like the field.

"adults aged 65 years or older without dementia", "compared with usual care", "conducted in
primary care practices in Scotland": the span runs from the cue (kept when it is part of
the noun phrase, as in "patients with", dropped when it only links, as in "compared with")
over the noun phrase and its prepositional attachments, up to a clause boundary. Spans
are scored by how close they are to the field's description and how much closer than to
any other field's; without a good span, the most similar sentence answers when it is
similar enough.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from hysem_assets.extraction.open_terms import cue_positions, field_fit
from hysem_assets.extraction.phrases import tag
from hysem_assets.extraction.reading import Reading

_STOP_WORDS = {
    "was",
    "were",
    "is",
    "are",
    "between",
    "during",
    "since",
    "until",
    "when",
    "where",
    "which",
    "that",
    "whereas",
    "while",
    "but",
    "because",
    "although",
    "however",
    "to",
    "using",
    "by",
    "as",
    "than",
    "compared",
    "versus",
    "vs",
    "vs.",
    "respectively",
    "after",
    "before",
}
_STOP_TAGS = {"VBD", "VBZ", "VBP", "MD", ",", ".", ":", "(", ")", '"', "CC"}
_KEEP_TAGS = {
    "IN",
    "DT",
    "JJ",
    "JJR",
    "JJS",
    "NN",
    "NNS",
    "NNP",
    "NNPS",
    "CD",
    "VBN",
    "VBG",
    "POS",
    "PRP$",
    "RB",
    "TO",
    "WP",
    "HYPH",
    "FW",
}
MAX_WORDS = 16
#: "than" after these words compares amounts, not groups ("more than 2 years", "rather than").
_NOT_A_COMPARISON = re.compile(r"\b(?:more|less|fewer|rather|other|older|younger)\s*$", re.IGNORECASE)
#: A cue span needs this similarity to the field's description, and this margin over other fields'.
MIN_SIMILARITY = 0.05
MIN_MARGIN = {1.0: -0.3, 0.6: -0.1, 0.2: 0.0}
#: A sentence answers a cued field only when at least this similar to its description.
FALLBACK_SIMILARITY = 0.45


@dataclass(frozen=True)
class Span:
    text: str
    start: int
    end: int
    score: float


def _span_after(sentence: str, cue_start: int, cue_end: int) -> tuple[int, int] | None:
    """The phrase a cue announces in ``sentence``: (start, end) in the sentence."""
    tokens = tag(sentence)
    first = next((i for i, t in enumerate(tokens) if t.end > cue_start), None)
    if first is None:
        return None
    inside_noun = tokens[first].chunk.endswith("NP") and tokens[first].tag not in ("IN",)
    if inside_noun:  # the cue names the entity ("patients with", "placebo"): start at its noun phrase
        while (
            first > 0
            and tokens[first - 1].chunk == "I-NP"
            or (first > 0 and tokens[first].chunk == "I-NP" and tokens[first - 1].chunk.endswith("NP"))
        ):
            first -= 1
        while first < len(tokens) and tokens[first].tag in ("DT", "CD", "PRP$"):
            first += 1
        start_index = first
    else:  # the cue links ("compared with", "conducted in"): start after it
        start_index = next((i for i, t in enumerate(tokens) if t.start >= cue_end), None)
        if start_index is None:
            return None
        while start_index < len(tokens) and tokens[start_index].tag in ("DT", "PRP$", "IN"):
            start_index += 1
    end_index = start_index
    for index in range(start_index, len(tokens)):
        token = tokens[index]
        if token.start < cue_end and index >= start_index:
            end_index = index + 1
            continue
        word = token.word.lower()
        relative = index > 0 and tokens[index - 1].word.lower() == "who" and token.tag.startswith("VB")
        if not relative and (word in _STOP_WORDS or token.tag in _STOP_TAGS) or index - start_index >= MAX_WORDS:
            break
        if token.tag not in _KEEP_TAGS and word != "who" and not token.tag.startswith("VB"):
            break
        end_index = index + 1
    while end_index > start_index and (
        tokens[end_index - 1].tag in ("IN", "DT", "CC", "TO", "WP", "RB", "POS", "PRP$")
        or tokens[end_index - 1].word.lower() in ("who", "and", "or")
    ):
        end_index -= 1
    if end_index <= start_index or start_index >= len(tokens):
        return None
    return tokens[start_index].start, tokens[end_index - 1].end


def cue_strength(cue: str) -> float:
    """How much a cue alone says: several words most, one content word less, one function word ("in") least."""
    words = cue.split()
    if len(words) > 1:
        return 1.0
    return 0.2 if cue.lower() in ENGLISH_STOP_WORDS or len(cue) <= 3 else 0.6


def cue_spans(reading: Reading, cues: Sequence[str]) -> list[tuple[str, int, int, float]]:
    """Every span a cue announces: (text, start, end, the cue's strength) in the reading's text."""
    found = []
    for sentence_start, sentence_end in reading.spans:
        sentence = reading.text[sentence_start:sentence_end]
        for cue_start, cue_end in cue_positions(sentence, cues):
            if _NOT_A_COMPARISON.search(sentence[:cue_start]) and sentence[cue_start:cue_end].lower() == "than":
                continue
            span = _span_after(sentence, cue_start, cue_end)
            if span:
                text = sentence[span[0] : span[1]]
                if re.search(r"[^\W\d_]{3}", text):
                    strength = cue_strength(sentence[cue_start:cue_end])
                    found.append((text, sentence_start + span[0], sentence_start + span[1], strength))
    best: dict[tuple[str, int, int], float] = {}
    for text, start, end, strength in found:
        best[(text, start, end)] = max(strength, best.get((text, start, end), 0.0))
    return [(text, start, end, strength) for (text, start, end), strength in best.items()]


def best_span(
    reading: Reading,
    description: str,
    cues: Sequence[str],
    others: Mapping[str, str],
    other_cues: Sequence[str] = (),
) -> Span | None:
    """The cue span that fits the field best, or the most similar sentence, or None.

    A span right after another field's cue of several words ("compared with") answers that
    field, not this one, and is left out.
    """
    taken = {
        reading.spans[index][0] + end
        for index, (start, end) in enumerate(reading.spans)
        for _, end in cue_positions(reading.text[start:end], [c for c in other_cues if len(c.split()) > 1])
    }
    spans = [
        span
        for span in cue_spans(reading, cues)
        if not any(0 <= span[1] - end <= 6 and not reading.text[end : span[1]].strip(" ,:") for end in taken)
    ]
    if spans:
        own, margin = field_fit(reading, [text for text, _, _, _ in spans], description, list(others.values()))
        scored = [
            Span(text, start, end, strength + float(own[row]) + float(margin[row]) + 0.02 * len(text.split()))
            for row, (text, start, end, strength) in enumerate(spans)
            if margin[row] > MIN_MARGIN[strength] and own[row] > MIN_SIMILARITY
        ]
        if scored:
            return max(scored, key=lambda span: span.score)
    if not reading.sentences:
        return None
    similarity = reading.sentence_similarity(reading.embed_constant([description])[0], [description, *cues])
    best = int(similarity.argmax())
    if similarity[best] < FALLBACK_SIMILARITY:
        return None
    start, end = reading.spans[best]
    return Span(reading.text[start:end], start, end, float(similarity[best]))
