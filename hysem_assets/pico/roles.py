"""From tagged spans to a protocol's values: participants, interventions, comparators and outcomes.

The tagger marks spans; a review wants values. A value is a span's text as written (so it
can be found again as evidence), without the function words and punctuation it opens or
ends on ("of death" -> "death"), never a structure label ("BACKGROUND:") nor a word that
says nothing alone ("mean"), and kept once per spelling (case aside). Interventions split
by role: a span is a comparator when it names a control condition (:data:`CONTROL_WORDS`;
one given with another arm in the same span is cut from it) or when its spelling first
appears after "versus", "compared with" and the like following another intervention in the
same sentence (the second arm of "A versus B") or paired with it after a comparing word ("a
comparison of A and B", "comparing A with B"); the rest are the interventions under study.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from hysem_assets.core.sentences import glued_labels, strict_label
from hysem_assets.core.text import sentence_spans
from hysem_assets.settings.fields import ROLES, Role

if TYPE_CHECKING:
    from hysem_assets.pico.tagger import Span


#: Nouns that make "control" an arm of a study ("control group", "control subjects"), not an object of
#: controlling ("glycaemic control", "infection control").
_ARM_NOUNS = (
    r"groups?|arms?|conditions?|subjects|participants|patients|individuals|volunteers|cohorts?|cases|samples?|"
    r"animals|mice|rats|cells|cultures|eyes|sites?|clusters?|schools|practices|wards?|communities|villages|plots|"
    r"periods?|phases?|interventions?|treatments?|diets?|women|men|children|infants|populations?"
)
#: Right after a comparison word or a colon: "versus control", "randomised to intervention or control".
_AFTER_COMPARISON = (
    "(?:"
    + "|".join([r"(?<=:\s)", *(rf"(?<=\b{w}\s)" for w in ("versus", r"vs\.", "vs", "with", "to", "or", "and", "than"))])
    + ")"
)
#: What follows a bare "control" or "vehicle" that names an arm: a clause end, a preposition, a conjunction or a
#: verb ("versus control in ...", "controls were ..."); an object of controlling goes on ("control of ...").
_ARM_END = (
    r"(?=\s*(?:[.,;:()\[\]]|$)|\s+(?:in|on|at|with|without|from|during|after|before|alone|only|and|or|were|was|"
    r"had|did|who|showed|received|is|are)\b)"
)
#: Words that make an intervention span a control condition rather than a treatment under study. "Control" and
#: "vehicle" count only as arms: qualified (healthy controls, control group, vehicle-treated), after a comparison
#: word (versus control), or as a group that acts (controls were); "untreated" and "unexposed" only as an arm
#: ("untreated patients", "treated or untreated."), not of a condition ("untreated depression", "HIV-unexposed").
CONTROL_WORDS = re.compile(
    r"\b(?:placebos?|sham|usual(?:[- ](?!source\b)\w+)?[- ]care|usual (?:practice|treatment)|standard care|"
    r"standard of care|standard (?:treatment|practice)|routine care|"
    r"conventional (?:care|treatment|therapy)|(?:treatment|care)[- ]as[- ]usual|"
    r"pre-?intervention (?:periods?|phases?|groups?)|no (?:treatment|intervention|therapy|exposure)|"
    rf"(?<![\w-])(?:untreated|unexposed|non-?exposed)(?=[- ](?:{_ARM_NOUNS})\b|{_ARM_END})|"
    r"non-?users?|never[- ]users?|"
    r"wait(?:ing)?[- ]?list|attention control|best supportive care|"
    r"(?:healthy|matched|normal|negative|positive|untreated|unaffected)[- ]controls?|"
    r"(?:community|hospital|population|sibling|concurrent|historical)[- ]controls|"
    rf"control[- ](?:{_ARM_NOUNS})|vehicle[- ](?:treated|controls?|groups?|arms?|alone)|"
    r"controls(?=\s+(?:were|was|had|did|showed|received|who)\b))\b"
    rf"|{_AFTER_COMPARISON}(?:controls?|vehicle){_ARM_END}"
    rf"|(?<=\bthe\s)controls{_ARM_END}"
    r"|^(?:controls\b|(?:control|vehicle)$)",
    re.IGNORECASE,
)
#: What stands between the two arms of a comparison ("A versus B", "A compared with those who received B").
_VERSUS = re.compile(
    r"(?:(?:\b(?:versus|compared (?:with|to)|in comparison (?:with|to)|relative to|against|than)\b|\bvs\b\.?)"
    r"(?:\s+(?:[^\s.;]|\.(?=\S))+){0,8}?|\bor|\bwith or without)\s*(?:the\s+|a\s+|an\s+)?$",
    re.IGNORECASE,
)
_SIDE_BY_SIDE = r",|,?\s*and|&"
#: Between two arms listed side by side ("A and B", "A, B"): not yet a comparison.
_LISTED = re.compile(rf"\s*(?:{_SIDE_BY_SIDE})\s*", re.IGNORECASE)
#: Between two arms paired by a comparing word before them ("a comparison of A and B", "comparing A with B").
_PAIRED = re.compile(rf"\s*(?:{_SIDE_BY_SIDE}|with|to)\s*(?:the\s+|a\s+|an\s+)?", re.IGNORECASE)
#: A comparing word a few words before the first of two paired arms ("compared the efficacy of A and B").
_COMPARING = re.compile(r"\bcompar(?:e|es|ed|ing|isons?|ative)\b(?:\s+[^\s.,;]+){0,5}?\s*$", re.IGNORECASE)
#: Where a span of interventions is cut into arms: between two compared ones ("A versus B"), and before a control
#: condition given with or beside the other ("quality improvement interventions with usual practice").
_BETWEEN_ARMS = re.compile(
    r"\s+(?:versus|vs\.?|compared (?:with|to)|or)\s+"
    rf"|\s+(?:with|plus|and|added to|in addition to)\s+(?=(?:{CONTROL_WORDS.pattern}))",
    re.IGNORECASE,
)
_SEMICOLON = re.compile(r"\s*;\s*")
#: The word after a span, across anything but a sentence or clause end.
_NEXT_WORD = re.compile(r"[^\w.;]*\w*")
_NOTHING = re.compile(r"(?!)")
_LEADING = re.compile(r"^[^\w(\[]+")
_TRAILING = re.compile(r"[^\w)\]%]+$")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
#: Most words of the participant value put first: longer ones are sentences, not descriptions.
MAIN_WORDS = 15
#: Most values per role: only a pathological text comes near it.
LIMIT = 50


_OPENING_OF = {")": "(", "]": "["}


def _unbracketed(value: str) -> str:
    """``value`` cut at its first unmatched bracket, so a span cut inside a bracket keeps what lies
    outside it ("salmochelin), aerobactin" -> ", aerobactin", "thresholds (BLRTs" -> "thresholds ") and
    the value is still a piece of its text; a bracket at an edge of the span is dropped alone."""
    opened: list[tuple[str, int]] = []
    for index, char in enumerate(value):
        if char in "([":
            opened.append((char, index))
        elif char in ")]":
            if opened and opened[-1][0] == _OPENING_OF[char]:
                opened.pop()
            else:
                return value[:index] if index == len(value) - 1 else value[index + 1 :]
    if opened:
        index = opened[0][1]
        return value[1:] if index == 0 else value[:index]
    return value


#: Words that say nothing as a value on their own: a measure without what it measures ("mean", "rate"), a group
#: without whom it holds, a role's own name ("intervention", "outcomes").
_EMPTY_ALONE = frozenset(
    """mean median average number proportion percentage rate rates level levels score scores change changes
    difference total ratio value values effect effects result results outcome outcomes measure measures data group
    groups arm arms intervention interventions treatment treatments""".split()
)


def cleaned(text: str) -> str:
    """A span as a value: whitespace collapsed, edge punctuation and a leading article off, no unmatched bracket;
    empty when no word of it says anything alone."""
    value = " ".join(text.split())
    while True:
        before = value
        value = _unbracketed(_ARTICLE.sub("", _LEADING.sub("", _TRAILING.sub("", value))))
        if value == before:
            break
    if value.casefold() in _EMPTY_ALONE:
        return ""
    words = re.findall(r"[^\W\d_]+", value.lower())
    return value if any(len(word) > 1 and word not in ENGLISH_STOP_WORDS for word in words) else ""


def comparator_spans(
    text: str, interventions: Sequence[Span], sentences: Sequence[tuple[int, int]] | None = None
) -> set[int]:
    """Indices of the intervention spans in the comparator role (``sentences``: the text's
    :func:`~hysem_assets.core.text.sentence_spans`, when the caller has them).

    A span naming a control condition is one. Otherwise a spelling is a comparator when it
    first appears as the second arm of a comparison, so an intervention named first in the
    title stays one wherever it is later compared. A spelling first listed beside another arm
    ("a study of clozapine and risperidone") is not compared there: where it is next named decides,
    unless a comparing word stands a few words before the pair ("a comparison of clozapine and risperidone").
    """
    sentences = sentence_spans(text) if sentences is None else sentences
    controls = {index for index, span in enumerate(interventions) if names_control(text, span)}
    role_of: dict[str, bool] = {}  # spelling -> comparator, decided where it first appears
    paired: set[int] = set()  # arms after the first of a pair or list that a comparing word opens
    for index, span in enumerate(interventions):
        start = next((start for start, end in sentences if start <= span.start < end), 0)
        earlier = [i for i in range(index) if start <= interventions[i].start and interventions[i].end <= span.start]
        between = text[interventions[earlier[-1]].end : span.start] if earlier else None
        if between is not None and _PAIRED.fullmatch(between):
            if earlier[-1] in paired or _COMPARING.search(text, start, interventions[earlier[-1]].start):
                paired.add(index)
        key = span.text.casefold()
        if key in role_of or index in controls:
            continue
        if between is not None and _LISTED.fullmatch(between) and index not in paired:
            continue
        role_of[key] = index in paired or (between is not None and bool(_VERSUS.search(between)))
    return controls | {index for index, span in enumerate(interventions) if role_of.get(span.text.casefold(), False)}


def names_control(text: str, span: Span) -> bool:
    """Whether ``span`` names a control condition, read with the word after it ("the serum control" + "group")."""
    if CONTROL_WORDS.search(span.text):
        return True
    window = text[span.start : _NEXT_WORD.match(text, span.end).end()]
    return any(match.start() < len(span.text) for match in CONTROL_WORDS.finditer(window))


def _widened(text: str, span: Span) -> Span:
    """``span`` grown leftwards to the whole control condition it ends ("care" of "usual care"); one that names
    a condition itself stays as tagged ("control", not "control group")."""
    if CONTROL_WORDS.search(span.text):
        return span
    for match in CONTROL_WORDS.finditer(text, max(0, span.start - 40), span.end):
        if match.start() < span.start < match.end():
            return replace(span, start=match.start(), text=text[match.start() : span.end])
    return span


#: An adjective made of an arm ("placebo-controlled", "haloperidol-treated"): the arm before it is the comparator.
_ARM_ADJECTIVE = re.compile(r"^(?P<arm>.*\w)[- ](?:controlled|treated)$", re.IGNORECASE)


def _arm_named(value: str) -> str:
    """The arm an adjective is made of ("placebo-controlled" -> "placebo"); any other value as it is."""
    match = _ARM_ADJECTIVE.match(value)
    return match.group("arm") if match else value


def _arm(span: Span) -> Span:
    arm = _arm_named(span.text)
    return replace(span, end=span.start + len(arm), text=arm)


def control_mentions(text: str) -> list[str]:
    """Control conditions the text names anywhere ("placebo", "usual care"), in text order."""
    return [match.group() for match in CONTROL_WORDS.finditer(text)]


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


#: A class is in a text only where one of its words is at least this sure. The tagger's thresholds, chosen on
#: trial abstracts where every class is present, are lower for some classes and find more of them there; in a text
#: with no word that sure of a class (an editorial, a physics paper), what they find is noise ("EPR", "quality").
#: A class whose peak (the card's ``peaks``) is at least this already has no span without such a word; the rule
#: acts on the others (outcomes, peak 0.4).
PRESENT = 0.5


def _label_ranges(text: str, sentences: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character ranges of the structure labels that open ``sentences`` ("BACKGROUND: ", "Main outcome measures: ",
    a run-in "Interventions ") or are glued to the sentence they open ("BackgroundThe"): they announce a part of
    the abstract and are no value of it."""
    ranges = glued_labels(text)
    for start, end in sentences:
        label, rest = strict_label(text[start:end])
        if label is not None:
            ranges.append((start, end - len(rest)))
    return ranges


def _unlabelled(span: Span, labels: Sequence[tuple[int, int]]) -> Span | None:
    """``span`` without the structure label it opens on (None when it is all label)."""
    for start, end in labels:
        if start <= span.start < end:
            if span.end <= end:
                return None
            return replace(span, start=end, text=span.text[end - span.start :])
    return span


#: A word and the apostrophes or hyphens that join it to the next part of a word ("children'", "24-", "Kaplan-").
_JOINED_BEFORE = re.compile(r"(?<![\w'’–-])(?:\w+['’–-])+$")
_JOINERS = "'’–-"


def _whole_word_first(text: str, span: Span) -> Span:
    """``span`` from the start of the word it opens inside of: a span the tagger began after an apostrophe or
    hyphen ("s behaviour" of "children's behaviour", "h pH-metry" of "24-h pH-metry", "-Meier survival" of
    "Kaplan-Meier survival", "unexposed" of "HIV-unexposed") is read from where the word begins."""
    first = span.start + len(span.text) - len(span.text.lstrip(_JOINERS))  # its first letter or digit
    if first >= span.end or not text[first].isalnum():
        return span
    joined = _JOINED_BEFORE.search(text, max(0, first - 40), first)
    if joined is None:
        return span
    return replace(span, start=joined.start(), text=text[joined.start() : span.end])


def role_values(text: str, spans: Sequence[Span]) -> dict[Role, list[str]]:
    """Each role's values, in the order a reader wants them: the main participants first, then text order.

    Interventions are cut between two arms ("ginger versus placebo") and outcomes at semicolons; otherwise
    a span stays as the tagger marked it, lists included ("weight, blood pressure and quality of life"),
    since a reader finds it so in the text (cutting lists and sentences cost up to 0.04 token F1 on
    training abstracts).
    """
    cut = {"participants": _NOTHING, "interventions": _BETWEEN_ARMS, "outcomes": _SEMICOLON}
    sentences = sentence_spans(text)
    labels = _label_ranges(text, sentences)
    spans = [_whole_word_first(text, kept) for span in spans if (kept := _unlabelled(span, labels))]
    present = {span.label for span in spans if span.peak >= PRESENT}
    parts = {
        label: [part for span in spans if span.label == label for part in split(span, cut[label])]
        if label in present
        else []
        for label in cut
    }
    interventions = parts["interventions"]
    comparators = comparator_spans(text, interventions, sentences)
    grouped: dict[Role, list[Span]] = {
        "participants": _main_first(parts["participants"]),
        "interventions": [span for i, span in enumerate(interventions) if i not in comparators],
        "comparators": [_arm(_widened(text, span)) for i, span in enumerate(interventions) if i in comparators],
        "outcomes": parts["outcomes"],
    }
    values = {role: _distinct(grouped[role]) for role in ROLES}
    if not values["comparators"] and interventions:  # a control arm the tagger left out of its spans
        values["comparators"] = list(dict.fromkeys(_arm_named(mention) for mention in control_mentions(text)))
    return values


def _main_first(spans: Sequence[Span]) -> list[Span]:
    """The participant span the tagger is surest of (the highest mean probability) among those whose value has
    at most :data:`MAIN_WORDS` words, then the rest in text order.

    The surest, not the longest: the longest confident span was often a clause around the participants ("so
    physicians saw 1 SP with major depression and ..." where "patients with depressive symptoms" was surer).
    """
    if not spans:
        return []
    valued = [span for span in spans if _value(span)] or list(spans)
    phrases = [span for span in valued if len(_value(span).split()) <= MAIN_WORDS] or valued
    main = max(phrases, key=lambda span: (span.score, len(_value(span).split())))
    return [main, *(span for span in spans if span is not main)]


#: Words a phrase does not open or end on: prepositions, conjunctions, relatives and auxiliaries.
_FUNCTION_WORDS = (
    "a|among|an|and|are|as|at|before|between|but|by|during|for|from|having|in|into|is|of|on|or|than|that|the|to|"
    "was|were|which|who|whom|whose|with|within|without"
)
#: A function word hyphenated to the next word opens a compound ("at-risk", "on-demand", "in-hospital"), and "in"
#: or "on" after a hyphen closes one ("run-in", "add-on"); any other ending after a hyphen is the stump of a
#: compound the tagger cut ("intention-to", "end-of") and goes.
_OPENING = re.compile(rf"^(?:[^\w(\[]*\b(?:{_FUNCTION_WORDS})\b(?!-\w))+[^\w(\[]*", re.IGNORECASE)
_ENDING = re.compile(rf"(?:[^\w)\]]*\b(?!(?<=\w-)(?:in|on)\b)(?:{_FUNCTION_WORDS})\b)+[^\w)\]]*$", re.IGNORECASE)


def _whole(span: Span) -> Span:
    """``span`` without the function words it opens or ends on ("university students and" -> "university
    students", "of death" -> "death"), so a value reads as a phrase; a span of nothing else stays as it is."""
    start = _OPENING.match(span.text)
    end = _ENDING.search(span.text)
    first, last = start.end() if start else 0, end.start() if end else len(span.text)
    if first >= last:
        return span
    return replace(span, start=span.start + first, end=span.start + last, text=span.text[first:last])


def _value(span: Span) -> str:
    """The value a span makes (empty when it makes none)."""
    return cleaned(_whole(span).text)


def _distinct(spans: Sequence[Span]) -> list[str]:
    values: dict[str, str] = {}
    for span in spans:
        value = _value(span)
        if value and value.casefold() not in values and len(values) < LIMIT:
            values[value.casefold()] = value
    return list(values.values())
