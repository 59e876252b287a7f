"""The text a work's own fields are read from: what the work says about its study, nothing it shares or borrows.

Three kinds of text are never evidence of a work's fields, and are blanked (turned to
spaces, line breaks kept, so every character offset stays valid) before extraction reads it:

* sentences that stand near-verbatim in :data:`SHARED_WORKS` or more works of the
  partition: a boilerplate introduction, a template methods paragraph or a publisher's
  notice says nothing about one study (:func:`shared_sentences`);
* parts that are not the study's: affiliations, acknowledgements, funding, conflicts of
  interest, author contributions, reference lists (by heading or label,
  :func:`~hysem_assets.extraction.sections.excluded_parts`);
* the lines of a work's front matter that name institutions and addresses, or carry an
  e-mail address, a DOI or a copyright line (:func:`front_matter_lines`): a place there is
  where the authors work, not where the study was done.

So every field, a place as much as an outcome, is read from the study's own population
and setting: the rule holds for all fields alike, and no protocol has to declare it.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hysem_assets.core.matcher import fold
from hysem_assets.core.text import sentence_spans
from hysem_assets.extraction.sections import excluded_parts

#: A sentence standing in this many works or more is shared text, not a work's own.
SHARED_WORKS = 3
#: Sentences of fewer words (numbers aside) are not compared: headings, labels and table rows written as text,
#: whose numbers are each work's own. Markdown table rows are not compared either: a shared header row still
#: heads each work's own numbers.
MIN_WORDS = 6
#: Words per shingle, and the least Jaccard similarity of two sentences' shingle sets that makes them one sentence.
SHINGLE = 3
MIN_JACCARD = 0.5
#: MinHash signature: BANDS bands of ROWS hashes each; two sentences become candidates when one band agrees:
#: with a Jaccard similarity of 0.5 in 93 of 100 pairs, of 0.6 in 99.4, of 0.3 in 42 (checked exactly after).
BANDS, ROWS = 20, 3
_SEEDS = np.random.default_rng(20240611).integers(1, 2**63, size=BANDS * ROWS, dtype=np.uint64)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[^\W_]+")
_INSTITUTION = re.compile(
    r"\b(?:Department|Dept\.|Departamento|Département|Dipartimento|Univers\w*|Facult\w*|Faculdade|Institut\w*|"
    r"School of|College|Cent(?:er|re|ro) (?:for|of|de)|Laborator\w*|Hospital|Hôpital|Ospedale|Klinik\w*|Academy|"
    r"Ministry|Division of|Unit of|Graduate School|Inc\.|Ltd\.?|GmbH)"
)
_STUDY_VERB = re.compile(
    r"\b(?:we|our|was|were|is|are|has|have|had|included|enrolled|recruited|conducted|used|analy[sz]ed|studied|"
    r"admitted|treated|followed|aged|patients|participants|subjects|cases|years)\b",
    re.IGNORECASE,
)
#: An affiliation names its institution within its first words (after a footnote marker).
_INSTITUTION_WORDS = 8
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_BIBLIOGRAPHIC = re.compile(r"\bdoi\s*:|doi\.org/|©|\bcopyright\b|\bcreative commons\b|\bCC[ -]BY\b", re.IGNORECASE)
_MARKER = re.compile(r"^\s*(?:[\d*†‡§¶a-z]{1,3}[\s,)]|\^)")


@dataclass(frozen=True)
class OwnText:
    """A work's text with what is not its own blanked, and how many sentences each rule blanked."""

    text: str
    shared: int = 0
    excluded: int = 0
    front_matter: int = 0


def normal_form(sentence: str) -> list[str]:
    """The words two copies of a sentence share: accents folded, lower case, every number one token, no punctuation.

    "The analysis used 24,779 records" and "The analysis used 18,838 records." read alike: a template
    filled with another work's counts is still the template."""
    return _WORD.findall(_NUMBER.sub(" 0 ", fold(sentence).lower()))


def _shingles(words: Sequence[str]) -> np.ndarray:
    grams = {" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}
    return np.array(
        [int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "little") for g in sorted(grams)],
        dtype=np.uint64,
    )


def _signature(shingles: np.ndarray) -> np.ndarray:
    """The MinHash signature: per seed, the least of the shingles' mixed hashes (splitmix64's finaliser)."""
    with np.errstate(over="ignore"):
        mixed = shingles[:, None] ^ _SEEDS[None, :]
        mixed = (mixed ^ (mixed >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        mixed = (mixed ^ (mixed >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        mixed ^= mixed >> np.uint64(31)
    return mixed.min(axis=0)


def shared_sentences(texts: Sequence[str], works: int = SHARED_WORKS) -> list[list[tuple[int, int]]]:
    """Per text, the (start, end) of its sentences that stand near-verbatim in at least ``works`` texts.

    Near-verbatim means that the sets of word 3-shingles of the normal forms
    (:func:`normal_form`) overlap by a Jaccard similarity of at least :data:`MIN_JACCARD`: a copy
    with one changed phrase, other numbers or other punctuation is still a copy, while two
    sentences that only share a few common phrases stay apart. Comparing every pair would be quadratic in a
    corpus of hundreds of thousands of full-text sentences, so MinHash signatures in
    :data:`BANDS` bands of :data:`ROWS` propose candidates (locality-sensitive hashing): within
    a band's bucket each sentence joins the first group whose leading sentence it is like by the
    exact Jaccard similarity, and every sentence of a group stands in the group's works. A
    boilerplate sentence in thousands of works so costs one comparison per copy and band. A hash
    of the normal form alone would miss a template filled with another work's words.
    """
    owners: list[int] = []
    places: list[tuple[int, int]] = []
    shingle_sets: list[np.ndarray] = []
    buckets: dict[tuple[int, bytes], list[int]] = defaultdict(list)
    for owner, text in enumerate(texts):
        for start, end in sentence_spans(text):
            words = normal_form(text[start:end])
            if sum(word != "0" for word in words) < MIN_WORDS or text[start:end].lstrip().startswith("|"):
                continue
            shingles = _shingles(words)
            signature = _signature(shingles)
            index = len(owners)
            owners.append(owner)
            places.append((start, end))
            shingle_sets.append(shingles)
            for band in range(BANDS):
                buckets[(band, signature[band * ROWS : (band + 1) * ROWS].tobytes())].append(index)
    holders: list[set[int]] = [{owner} for owner in owners]
    for members in buckets.values():
        if len(members) < 2:
            continue
        groups: list[list[int]] = []  # each led by its first sentence; a sentence joins the first group like it
        for member in members:
            group = next((g for g in groups if _jaccard(shingle_sets[member], shingle_sets[g[0]]) >= MIN_JACCARD), None)
            if group is None:
                groups.append([member])
            else:
                group.append(member)
        for group in groups:
            if len(group) > 1:
                works_of_group = {owners[index] for index in group}
                for index in group:
                    if len(holders[index]) < works:  # decided sentences need no more
                        holders[index] |= works_of_group
    found: list[list[tuple[int, int]]] = [[] for _ in texts]
    for index, owner in enumerate(owners):
        if len(holders[index]) >= works:
            found[owner].append(places[index])
    return found


def _jaccard(first: np.ndarray, second: np.ndarray) -> float:
    common = len(np.intersect1d(first, second, assume_unique=True))
    return common / (len(first) + len(second) - common)


def front_matter_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of the lines that are affiliations, addresses or publication notes, not sentences of the study.

    An affiliation names an institution among its first words and reads as an address (a footnote
    marker first, or commas between its parts) without the verbs and words of a sentence about the
    study ("patients", "admitted", "years"); a line with an
    e-mail address, or a DOI or copyright line without those verbs, is a publication note."""
    found = []
    offset = 0
    for line in text.splitlines(keepends=True):
        body = line.strip()
        plain = not _STUDY_VERB.search(body)
        institution = _INSTITUTION.search(" ".join(body.split()[: _INSTITUTION_WORDS + 1]))
        address = plain and institution and (_MARKER.match(body) or body.count(",") >= 2)
        note = _EMAIL.search(body) and len(body.split()) <= 25 or plain and _BIBLIOGRAPHIC.search(body)
        if address or note:
            found.append((offset, offset + len(line.rstrip("\r\n"))))
        offset += len(line)
    return found


def _blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
    characters = list(text)
    for start, end in spans:
        characters[start:end] = [c if c in "\r\n" else " " for c in text[start:end]]
    return "".join(characters)


def own_texts(texts: Sequence[str], works: int = SHARED_WORKS) -> list[OwnText]:
    """Each text of one partition with its shared sentences, excluded parts and front-matter lines blanked."""
    shared = shared_sentences(texts, works)
    result = []
    for text, common in zip(texts, shared, strict=True):
        excluded = excluded_parts(text)
        front = front_matter_lines(text)
        result.append(
            OwnText(_blank(text, [*common, *excluded, *front]), len(common), _sentences_in(text, excluded), len(front))
        )
    return result


def _sentences_in(text: str, parts: Sequence[tuple[int, int]]) -> int:
    return sum(len(sentence_spans(text[start:end])) for start, end in parts)
