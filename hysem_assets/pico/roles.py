"""From tagged spans to a protocol's values: participants, interventions, comparators and outcomes.

The tagger marks spans; a review wants values. A value is a span's text as written (so it
can be found again as evidence), trimmed of edge punctuation and a leading article, and
kept once per spelling (case aside). Interventions split by role: a span is a comparator
when it names a control condition (:data:`CONTROL_WORDS`) or when it follows "versus",
"compared with" and the like after another intervention in the same sentence (the second
arm of "A versus B"); the rest are the interventions under study.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from hysem_assets.extraction.text import sentence_spans

if TYPE_CHECKING:
    from hysem_assets.pico.tagger import Span

Role = Literal["participants", "interventions", "comparators", "outcomes"]
ROLES: tuple[Role, ...] = ("participants", "interventions", "comparators", "outcomes")

#: Words that make an intervention span a control condition rather than a treatment under study.
CONTROL_WORDS = re.compile(
    r"\b(placebos?|sham|usual care|standard care|standard of care|standard treatment|routine care|"
    r"conventional (?:care|treatment|therapy)|no (?:treatment|intervention|therapy)|untreated|"
    r"wait(?:ing)?[- ]?list|controls?|control group|vehicle|attention control|best supportive care)\b",
    re.IGNORECASE,
)
#: What stands between the two arms of a comparison ("A versus B", "A compared with those who received B").
_VERSUS = re.compile(
    r"(?:\b(?:versus|vs\.?|compared (?:with|to)|in comparison (?:with|to)|relative to|against|than)\b"
    r"(?:\s+[^\s.;]+){0,8}?|\bor|\bwith or without)\s*(?:the\s+|a\s+|an\s+)?$",
    re.IGNORECASE,
)
_SENTENCE_END = r"(?<=[.!?])\s+(?=[A-Z0-9(])|\s*;\s*"
_BETWEEN_SENTENCES = re.compile(_SENTENCE_END)
_BETWEEN_ARMS = re.compile(_SENTENCE_END + r"|\s+(?:versus|vs\.?|compared (?:with|to)|or)\s+", re.IGNORECASE)
_BETWEEN_ITEMS = re.compile(_SENTENCE_END + r"|\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|and/or)\s+", re.IGNORECASE)
_LEADING = re.compile(r"^[^\w(\[]+")
_TRAILING = re.compile(r"[^\w)\]%]+$")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
#: Most words of the participant span put first: longer ones are sentences, not descriptions.
MAIN_WORDS = 15
#: Most values per role: beyond these, spans repeat what the first ones say.
LIMITS = {"participants": 8, "interventions": 8, "comparators": 3, "outcomes": 15}


def cleaned(text: str) -> str:
    """A span as a value: whitespace collapsed, edge punctuation and a leading article off, brackets balanced."""
    value = " ".join(text.split())
    while True:
        before = value
        value = _ARTICLE.sub("", _LEADING.sub("", _TRAILING.sub("", value)))
        for opening, closing in ("()", "[]"):
            if value.count(opening) != value.count(closing):
                if value.startswith(opening) or value.endswith(closing):
                    value = value[1:] if value.startswith(opening) else value[:-1]
                else:
                    value = " ".join(value.replace(opening, " ").replace(closing, " ").split())
        if value == before:
            break
    words = re.findall(r"[^\W\d_]+", value.lower())
    return value if any(len(word) > 1 and word not in ENGLISH_STOP_WORDS for word in words) else ""


def comparator_spans(text: str, interventions: Sequence[Span]) -> set[int]:
    """Indices of the intervention spans in the comparator role."""
    sentences = sentence_spans(text)
    found: set[int] = set()
    for index, span in enumerate(interventions):
        if CONTROL_WORDS.search(span.text):
            found.add(index)
            continue
        sentence_start = next((start for start, end in sentences if start <= span.start < end), 0)
        earlier = [
            other for other in interventions[:index] if other.end <= span.start and other.start >= sentence_start
        ]
        if earlier and _VERSUS.search(text[earlier[-1].end : span.start]):
            found.add(index)
    return found


def split(span: Span, separators: re.Pattern) -> list[Span]:
    """``span`` cut at every match of ``separators`` (the matches left out)."""
    parts: list[Span] = []
    start = 0
    for match in [*separators.finditer(span.text), None]:
        end = match.start() if match else len(span.text)
        if span.text[start:end].strip():
            parts.append(replace(span, start=span.start + start, end=span.start + end, text=span.text[start:end]))
        start = match.end() if match else start
    return parts


def role_values(text: str, spans: Sequence[Span]) -> dict[Role, list[str]]:
    """Each role's values, in the order a reader wants them: the main participants first, then text order.

    Spans are cut where a sentence ends or a semicolon stands; interventions also between two arms
    ("ginger versus placebo"), outcomes also between the items of a list ("weight, blood pressure and
    quality of life"), so each value names one thing.
    """
    cut = {"participants": _BETWEEN_SENTENCES, "interventions": _BETWEEN_ARMS, "outcomes": _BETWEEN_ITEMS}
    parts = {
        label: [part for span in spans if span.label == label for part in split(span, cut[label])] for label in cut
    }
    interventions = parts["interventions"]
    comparators = comparator_spans(text, interventions)
    grouped: dict[Role, list[Span]] = {
        "participants": _main_first(parts["participants"]),
        "interventions": [span for i, span in enumerate(interventions) if i not in comparators],
        "comparators": [span for i, span in enumerate(interventions) if i in comparators],
        "outcomes": parts["outcomes"],
    }
    return {role: _distinct(grouped[role], LIMITS[role]) for role in ROLES}


def _main_first(spans: Sequence[Span]) -> list[Span]:
    """The participant span that says most in a phrase first (the longest confident one of at most
    :data:`MAIN_WORDS` words), then the rest in text order."""
    if not spans:
        return []
    confident = [span for span in spans if span.score >= 0.6] or list(spans)
    phrases = [span for span in confident if len(span.text.split()) <= MAIN_WORDS] or confident
    main = max(phrases, key=lambda span: (len(span.text.split()), -span.start))
    return [main, *(span for span in spans if span is not main)]


def _distinct(spans: Sequence[Span], limit: int) -> list[str]:
    values: dict[str, str] = {}
    for span in spans:
        value = cleaned(span.text)
        if value and value.casefold() not in values and len(values) < limit:
            values[value.casefold()] = value
    return list(values.values())
