"""Which part of a work a sentence stands in, and how much it says about the work's own study.

A work's methods and results describe its own study; its introduction and background
describe what others found, and its discussion compares with them. So a value read from
a methods or results sentence ranks above the same value read from the introduction.
Parts are told by Markdown headings ("## 2 Methods", "### Study population") and by the
labels of structured abstracts ("BACKGROUND:", "Results:" at a paragraph's start); a
heading or label no rule knows leaves the neutral weight, as does text before any.

Some parts are never the study's own words at all: affiliations, acknowledgements,
funding, conflicts of interest, author contributions, ethics and data-availability
statements, and reference lists. Their sentences are :data:`EXCLUDED`: extraction does not
read them (:mod:`~hysem_assets.extraction.own_text`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from hysem_assets.retrieval.chunking import markdown_sections

#: Weight of a sentence about the study itself (methods, results, participants, design).
OWN = 1.0
#: Weight of a sentence no heading or label places (an unstructured abstract, a title, conclusions): read as
#: the study's own, so a text without parts ranks as before.
NEUTRAL = OWN
#: Weight of a discussion sentence: it compares with other studies as often as it restates its own.
DISCUSSION = 0.6
#: Weight of an introduction or background sentence: mostly what other works found.
BACKGROUND = 0.4
#: Weight of a part that is never evidence (affiliations, funding, references ...).
EXCLUDED = 0.0

#: Heading or label words -> weight; the first rule that matches decides.
_RULES: tuple[tuple[re.Pattern[str], float], ...] = (
    (
        re.compile(
            r"affiliation|author information|correspondence|corresponding author|acknowledg|funding|financial "
            r"support|grant support|sources? of support|conflicts? of interest|competing interests?|declaration of "
            r"interests?|disclosures?|author(?:s'?)? contributions?|contributors|references|bibliography|"
            r"literature cited|works cited|reference list|supplementary material|abbreviations|data availability|"
            r"availability of data|^ethic"
        ),
        EXCLUDED,
    ),
    (
        re.compile(r"introduction|background|rationale|context|state of the art|related work|literature review"),
        BACKGROUND,
    ),
    (re.compile(r"discussion|limitations|strengths|comparison with|implications"), DISCUSSION),
    (
        re.compile(
            r"method|material|design|participants|patients|population|subjects|setting|data|sample|cohort|"
            r"procedure|intervention|exposure|outcome|measure|statistic|analys|result|finding|model|conclusion|"
            r"summary|objective|\baims?\b|purpose|hypothes"
        ),
        OWN,
    ),
)
#: A label at a line's start, as structured abstracts write them ("METHODS:", "Setting and participants:"),
#: or alone on its line; or a capitalised label after a sentence, as a one-paragraph abstract runs them on
#: ("... common. METHODS: We conducted ...").
_LABEL = re.compile(
    r"(?:^[ \t>*_#]*(?P<line>[A-Z][A-Za-z ,&/'-]{2,48}?)[*_]*[ \t]*:[*_]*(?:[ \t]+(?=\S)|[ \t]*$))"
    r"|(?:(?<=[.!?] )(?P<inline>[A-Z][A-Z ,&/'-]{2,48}?):[ \t]+(?=\S))",
    re.MULTILINE,
)


#: A heading of more words than this is a title or a statement, not the name of a part.
HEADING_WORDS = 6


def heading_weight(heading: str) -> float | None:
    """The weight a heading or label gives the text below it; None when no rule knows it (a title, say)."""
    words = re.sub(r"^[\W\d_]+", "", heading.lower()).strip()
    if not words or len(words.split()) > HEADING_WORDS:
        return None
    for pattern, weight in _RULES:
        if pattern.search(words):
            return weight
    return None


def _markers(text: str) -> list[tuple[int, float, int, int]]:
    """Where parts start, in text order: (position, weight, where an excluded one ends at the latest, where
    its heading line or label begins).

    A heading's part runs to the next heading or label; a label's excluded part ("Funding: ...")
    also ends with its paragraph."""
    markers: dict[int, tuple[float, int, int]] = {}
    for section in markdown_sections(text):
        weight = heading_weight(section.path.rsplit(" > ", 1)[-1]) if section.path else None
        heading = text.rfind("\n", 0, max(section.start - 1, 0)) + 1 if section.path else section.start
        markers[section.start] = (NEUTRAL if weight is None else weight, len(text), heading)
    for label in _LABEL.finditer(text):
        weight = heading_weight(label.group("line") or label.group("inline"))
        if weight is not None:
            paragraph = text.find("\n\n", label.end())
            markers[label.start()] = (weight, len(text) if paragraph < 0 else paragraph, label.start())
    return [(position, *markers[position]) for position in sorted(markers)]


def sentence_weights(text: str, spans: Sequence[tuple[int, int]]) -> list[float]:
    """The weight of each sentence span of ``text`` by the part it stands in (:data:`NEUTRAL` outside any)."""
    markers = _markers(text)
    positions = [marker[0] for marker in markers]
    found = []
    for start, _ in spans:
        index = bisect_right(positions, start) - 1
        found.append(markers[index][1] if index >= 0 else NEUTRAL)
    return found


def excluded_parts(text: str) -> list[tuple[int, int]]:
    """(start, end) of every part of ``text`` that is never evidence, from its heading's body or label on."""
    markers = _markers(text)
    parts = []
    for index, (position, weight, latest, _) in enumerate(markers):
        if weight == EXCLUDED:
            following = markers[index + 1][3] if index + 1 < len(markers) else len(text)
            parts.append((position, min(following, latest)))
    return parts
