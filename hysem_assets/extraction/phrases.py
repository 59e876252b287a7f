"""Candidate phrases of a sentence: noun phrases from part-of-speech chunks, cleaned, with their offsets.

The open-vocabulary extractor names entities the way the text names them, so it needs
the text's noun phrases. TextBlob's English parser (the Pattern tagger and chunker, whose
lexicon ships in the wheel) tags offline on a CPU in well under a millisecond per
sentence. Phrases are cleaned of leading articles, numbers and trailing function words,
and abbreviations defined in brackets (:mod:`hysem_assets.core.abbreviations`) are read so a
bare "MCI" later on can be named in full.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

#: Parts of speech a phrase neither starts nor ends with (determiners, pronouns, numbers, conjunctions...).
_EDGE_TAGS = {
    "DT",
    "PDT",
    "PRP",
    "PRP$",
    "WDT",
    "WP",
    "WP$",
    "EX",
    "CC",
    "IN",
    "TO",
    "CD",
    "RB",
    "RBR",
    "RBS",
    "MD",
    "POS",
    "UH",
    "LS",
    "SYM",
    "FW",
    ":",
    ",",
    ".",
    "(",
    ")",
    '"',
    "''",
    "``",
    "#",
    "$",
}
_ALSO_NOT_LAST = {"VBD", "VBZ", "VBP", "VB", "JJ", "JJR", "JJS", "VBG"}
#: Research-report words that name no entity on their own.
GENERIC = frozenset(
    """study studies trial trials result results analysis analyses data review reviews evidence finding findings
    effect effects association associations relationship relationships aim aims objective objectives purpose
    method methods conclusion conclusions background introduction paper article report literature approach
    approaches model models factor factors role level levels use group groups sample samples participant
    participants patient patients subject subjects individual individuals people person persons population
    populations case cases control controls number numbers rate rates risk risks increase decrease difference
    differences change changes outcome outcomes measure measures measurement measurements time times year years
    month months day days week weeks period periods value values score scores total p ci or hr rr et al
    addition basis context impact impacts importance need needs way ways term terms type types part parts area
    areas aspect aspects range end point points present current recent new novel future other others first
    second third majority variety lack presence absence set series mean median proportion percentage ratio ratios
    significance significant association interest work works system systems authors author knowledge
    understanding potential implications implication practice practices setting settings strategy strategies
    overview summary focus topic topics issue issues challenge challenges advance advances development
    treatment treatments intervention interventions therapy therapies exposure exposures endpoint endpoints
    guideline guidelines recommendation recommendations management diagnosis option options mechanism
    mechanisms measure measures version versions test tests tool tools assessment assessments condition
    conditions disease diseases disorder disorders health care outcome outcomes consequence consequences
    higher lower greater increased decreased elevated reduced subsequent shorter longer larger smaller better
    worse high low early late overall several various different multiple common main primary secondary key
    major minor important possible specific general certain relevant available selected particular initial
    final total whole additional further similar respective individual""".split()
)
_LETTERS = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class Token:
    """One word of a parsed sentence: text, part of speech, chunk tag and offsets in the sentence."""

    word: str
    tag: str
    chunk: str
    start: int
    end: int


@dataclass(frozen=True)
class Phrase:
    """A candidate phrase: its text as written and its offsets in the text it was read from."""

    text: str
    start: int
    end: int


@lru_cache(maxsize=4096)
def tag(sentence: str) -> tuple[Token, ...]:
    """The sentence's tokens with part-of-speech and chunk tags, aligned to character offsets."""
    from textblob.en import parse

    parsed = parse(sentence, tokenize=True, tags=True, chunks=True, relations=False, lemmata=False)
    tokens: list[Token] = []
    cursor = 0
    for chunk in parsed.split():
        for word, pos, chunk_tag, *_ in chunk:
            found = sentence.find(word, cursor)
            if found < 0 or found - cursor > 20:  # the tokenizer rewrote it: skip rather than misplace
                continue
            tokens.append(Token(word, pos, chunk_tag, found, found + len(word)))
            cursor = found + len(word)
    return tuple(tokens)


def _chunks(tokens: tuple[Token, ...]) -> list[list[Token]]:
    """Noun-phrase chunks, each extended over "of" + the noun phrase that follows ("risk of stroke")."""
    chunks: list[list[Token]] = []
    for index, token in enumerate(tokens):
        inside = token.chunk.endswith("-NP") and token.word.lower() not in ("vs", "vs.", "versus")
        # a hyphenated participle before a noun phrase modifies it ("community-acquired pneumonia")
        modifier = "-" in token.word and token.tag.startswith("VB") and index + 1 < len(tokens)
        if modifier and tokens[index + 1].chunk.endswith("-NP"):
            chunks.append([token])
            continue
        follows = chunks and chunks[-1][-1] is tokens[index - 1]
        joins = token.chunk.startswith("I-") or (
            follows and "-" in chunks[-1][-1].word and chunks[-1][-1].tag.startswith("VB")
        )
        if inside and joins and follows and token.tag not in ("CC", "CD"):
            chunks[-1].append(token)
        elif inside and token.tag != "CC":
            chunks.append([token])
    merged: list[list[Token]] = []
    for chunk in chunks:
        if merged:
            last = merged[-1][-1]
            between = [t for t in tokens if last.end <= t.start < chunk[0].start]
            if len(between) == 1 and between[0].word.lower() == "of":
                merged[-1] = [*merged[-1], between[0], *chunk]
                continue
        merged.append(list(chunk))
    return merged


#: Words that only qualify a phrase ("higher risk", "available drugs"): dropped from its start.
_LEADING_QUALIFIERS = frozenset(
    """higher lower greater increased decreased elevated reduced subsequent significant several various different
    multiple common main primary secondary key major important possible potential specific certain relevant
    available selected particular initial final total whole additional further similar respective current recent
    new novel other such many most more less""".split()
)


def _clean(tokens: list[Token]) -> list[Token]:
    while tokens and (
        tokens[0].tag in _EDGE_TAGS
        or tokens[0].word.lower() in ENGLISH_STOP_WORDS
        or (tokens[0].word.lower() in _LEADING_QUALIFIERS and len(tokens) > 1)
    ):
        tokens = tokens[1:]
    while (
        tokens
        and (tokens[-1].tag in _EDGE_TAGS | _ALSO_NOT_LAST or tokens[-1].word.lower() in ENGLISH_STOP_WORDS)
        and not tokens[-1].word.isupper()
    ):
        tokens = tokens[:-1]
    return tokens


def is_clean(text: str) -> bool:
    """A phrase worth offering: some letters, not only generic report words, not a whole clause."""
    words = re.findall(r"[\w'-]+", text.lower())
    if re.search(r"[=<>|%]", text) or text.count("(") != text.count(")") or text.count("[") != text.count("]"):
        return False
    if not words or len(_LETTERS.findall(text)) < 3 or len(words) > 8:
        return False
    return any(word not in GENERIC and word not in ENGLISH_STOP_WORDS and not word.isdigit() for word in words)


def noun_phrases(sentence: str, offset: int = 0) -> list[Phrase]:
    """Clean noun phrases of ``sentence`` in order; offsets are shifted by ``offset`` (the sentence's start)."""
    phrases = []
    for chunk in _chunks(tag(sentence)):
        # a chunk running over an "of" is also offered without it: its head alone is often the entity
        pieces = [chunk]
        of_positions = [i for i, token in enumerate(chunk) if token.word.lower() == "of"]
        if of_positions:
            pieces += [chunk[: of_positions[0]], chunk[of_positions[-1] + 1 :]]
        for piece in pieces:
            cleaned = _clean(piece)
            if not cleaned:
                continue
            start, end = cleaned[0].start, cleaned[-1].end
            text = sentence[start:end].strip(" -/")
            if is_clean(text):
                phrases.append(Phrase(text, offset + start, offset + start + len(text)))
    return list(dict.fromkeys(phrases))
