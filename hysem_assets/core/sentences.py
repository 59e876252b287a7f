"""Which sentences of a source can be quoted as a claim, and in what form.

An abstract or a parsed paper carries lines that state no finding: structure labels
("Conclusions:" before a sentence, or alone), section headings, keyword lists, copyright and
licence lines, funding, registration and conflict-of-interest statements, captions, and
fragments cut at a chunk border. A claim is a whole sentence that reports something, with a
leading structure label removed, so "Conclusions: X" and "X" are one claim, not two. The rules
read the form of a line (labels, punctuation, list shape), never its subject.
"""

from __future__ import annotations

import re

#: Fewer words than this is a label, a heading or a fragment, not a finding.
MIN_CLAIM_WORDS = 6

_LABEL = re.compile(r"^\s*(?P<label>[A-Za-z][A-Za-z&/,'\- ]{0,60}?)\s*[:：]\s*")
#: A heading run into its first sentence, as PDF text often has it: one or two capitalised words, glued to the
#: sentence in some sources' abstracts ("BackgroundThe test ...").
_RUN_IN = re.compile(r"^\s*(?P<label>[A-Z][a-z]+(?: [a-z]+)?|[A-Z]{3,}(?: [A-Z]{2,})?)\s*(?=[A-Z][a-z])")
#: Last words of the labels of a structured abstract or paper: they announce a part, not a finding.
_STRUCTURE_WORDS = frozenset(
    """abstract aim aims background conclusion conclusions context design discussion evidence exposure exposures
    finding findings importance implication implications interpretation intervention interventions introduction
    limitation limitations measure measures measurement measurements method methods methodology objective objectives
    outcome outcomes participants patients population purpose question questions rationale relevance result results
    selection setting settings significance source sources statement subjects summary synthesis extraction
    analysis analyses""".split()
)
#: Last words of labels whose line is metadata about the work, never evidence.
_METADATA_WORDS = frozenset(
    """keyword keywords abbreviation abbreviations funding support sponsor sponsors sponsorship registration registry
    interest interests disclosure disclosures declaration declarations acknowledgment acknowledgement acknowledgments
    acknowledgements availability sharing approval contributions contribution correspondence copyright license
    licence received accepted published citation doi editor editors reviewers trial number erratum errata corrigendum
    correction retraction concern""".split()
)
_COPYRIGHT = re.compile(
    r"©|\(c\)\s*\d{4}|\bcopyright\b|\ball rights reserved\b|\blicensee\b|\bcreative commons\b"
    r"|\bopen[- ]access article\b|\bpublished by\b",
    re.IGNORECASE,
)
#: Statements about the work rather than findings: conflicts of interest, funding, ethics approval.
_STATEMENT = re.compile(
    r"\b(?:competing|conflicts?\s+of)\s+interests?\b"
    r"|\b(?:supported|funded|financed|sponsored)\s+(?:in\s+part\s+)?by\s+(?:\w+\s+){0,4}?(?:grants?|awards?|funds?"
    r"|funding|foundations?|councils?|ministry|agency|fellowships?|scholarships?)\b"
    r"|\bth(?:is|e)\s+(?:work|study|research|project|trial|review)\s+was\s+(?:\w+\s+)?(?:supported|funded|financed)\b"
    r"|\b(?:approved|reviewed)\s+by\s+(?:the\s+)?(?:\w+\s+){0,4}(?:ethics|review)\s+(?:committee|board)\b"
    r"|\bregistered\s+(?:at|with|in|on)\b.{0,40}\b(?:registry|register|NCT\d+|CRD\d+)",
    re.IGNORECASE,
)
_CAPTION = re.compile(r"^\s*(?:fig(?:ure)?s?|table|supplementa(?:ry|l)|appendix|box)\.?\s*[A-Z]?\d", re.IGNORECASE)
_LINK = re.compile(r"https?://|www\.|\b\S+@\S+\.\w+|\bdoi\s*:", re.IGNORECASE)
_TERMINAL = re.compile(r"[.!?][\"')\]]*$")
_WORD = re.compile(r"[^\W\d_][\w'\-]*")
_NOT_ALNUM = re.compile(r"[\W_]+")


def split_label(sentence: str) -> tuple[str | None, str]:
    """``(label, rest)`` when the sentence opens with a structure or metadata label ("Results: ...",
    "KEYWORDS: ...", or a run-in heading without a colon, "Methods We analysed ..."); ``(None,
    sentence)`` when its colon is part of the sentence."""
    match = _LABEL.match(sentence)
    if not match:
        run_in = _RUN_IN.match(sentence)
        if run_in and run_in.group("label").casefold().split()[-1] in _STRUCTURE_WORDS:
            return run_in.group("label"), sentence[run_in.end() :]
        return None, sentence
    label = " ".join(match.group("label").split())
    words = label.split()
    last = words[-1].casefold() if words else ""
    is_label = len(words) <= 6 and (
        label.isupper() or last in _STRUCTURE_WORDS or last in _METADATA_WORDS or last.rstrip("s") in _METADATA_WORDS
    )
    return (label, sentence[match.end() :].strip()) if is_label else (None, sentence)


#: Words besides the structure words that strict labels are made of ("Main outcome measures", "Materials and methods").
_LABEL_FILLERS = frozenset("and or of main primary secondary study materials data".split())


def strict_label(sentence: str) -> tuple[str | None, str]:
    """:func:`split_label`, but a label only when about the work's metadata or made of structure words ("Main
    outcome measures:", "Keywords:"), or in capitals with a structure word ("STUDY DESIGN, SIZE, DURATION:"), so
    that a title such as "Smoking cessation interventions: a review" or "HIV/AIDS: an update" keeps its words."""
    label, rest = split_label(sentence)
    if label is None:
        return None, sentence
    words = re.findall(r"[^\W\d_]+", label.casefold())
    strict = (
        is_metadata_label(label)
        or all(w in _STRUCTURE_WORDS or w in _LABEL_FILLERS for w in words)
        or (label.isupper() and any(w in _STRUCTURE_WORDS for w in words))
    )
    return (label, rest) if strict else (None, sentence)


#: Capitalised words run into a next capitalised word without a space ("BackgroundThe", "cohort
#: study.ObjectiveIn", "Study DesignRetrospective"), as some sources deliver a structured abstract's labels.
_GLUED = re.compile(r"(?<![A-Za-z])(?P<label>(?:[A-Z][a-z]+ ){0,3}[A-Z][a-z]+)(?=[A-Z][a-z])")


def glued_labels(text: str) -> list[tuple[int, int]]:
    """Character ranges of the structure labels in ``text`` that are glued to the sentence they open.

    Only structure words make such a label ("Methods", "Study Design"), so a word written in camel case
    ("PubMed", "McDonald") is none.
    """
    ranges = []
    for match in _GLUED.finditer(text):
        words = match.group("label").split(" ")
        if words[-1].casefold() not in _STRUCTURE_WORDS:
            continue
        first = len(words) - 1
        while first > 0 and words[first - 1].casefold() in _STRUCTURE_WORDS | _LABEL_FILLERS:
            first -= 1
        ranges.append((match.end() - len(" ".join(words[first:])), match.end()))
    return ranges


def is_metadata_label(label: str) -> bool:
    """True for labels of lines about the work (keywords, funding, registration, copyright...)."""
    words = label.casefold().split()
    return bool(words) and (words[-1] in _METADATA_WORDS or words[-1].rstrip("s") in _METADATA_WORDS)


def is_keyword_list(text: str) -> bool:
    """A list of short terms ("causal forest; heterogeneity; mortality"), not a sentence."""
    parts = [p for p in re.split(r"[;,·|•]", text) if p.strip()]
    if len(parts) < 3:
        return False
    mean_words = sum(len(p.split()) for p in parts) / len(parts)
    return mean_words <= 3.5 and not _TERMINAL.search(text.strip()) or text.count(";") >= 3 and mean_words <= 3


def metadata_reason(sentence: str) -> str | None:
    """Why a line states no finding (a label, heading or metadata line), or None for a sentence
    that may: the test a claim must pass whoever wrote it."""
    sentence = " ".join(sentence.split())
    label, rest = split_label(sentence)
    if label is not None and is_metadata_label(label):
        return f"a {label!r} line: metadata about the work, not a finding"
    if _COPYRIGHT.search(rest) or _LINK.search(rest):
        return "a copyright, licence or link line, not a finding"
    if _STATEMENT.search(rest):
        return "a funding, ethics, registration or competing-interests statement, not a finding"
    if _CAPTION.match(rest):
        return "a figure or table caption, not a finding"
    if is_keyword_list(rest):
        return "a list of keywords, not a finding"
    words = _WORD.findall(rest)
    if len(words) < MIN_CLAIM_WORDS or len(words) < 0.5 * len(rest.split()):
        return "a label, heading or row of numbers, not a finding"
    return None


def claim_text(sentence: str, *, whole_title: bool = False) -> str | None:
    """The sentence as a claim (a leading structure label removed), or None when it states no
    finding or is not a whole sentence (a heading without a full stop, a fragment cut at a chunk
    border).

    ``whole_title``: the sentence is a work's whole title, the only text of a work without an
    abstract; it may lack a full stop.
    """
    if metadata_reason(sentence) is not None:
        return None
    rest = split_label(" ".join(sentence.split()))[1]
    whole = _TERMINAL.search(rest) and (rest[0].isupper() or rest[0].isdigit() or rest[0] in "\"'(")
    return rest if whole or whole_title else None


def normalized(text: str) -> str:
    """A claim's identity for duplicate checks: label removed, case, punctuation and spacing ignored."""
    return " ".join(_NOT_ALNUM.sub(" ", split_label(text)[1].casefold()).split())


#: Wordings of text addressed to a model rather than reporting a finding: a chunk carrying
#: one is attempting a prompt injection, and quoting it as a claim would pass it on.
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.]{0,60}\b(?:instructions?|prompts?|rules|guidelines)\b"
    r"|\b(?:system|developer) prompt\b"
    r"|\byou are (?:now|an? (?:ai|assistant|chatbot|(?:large )?language model))\b"
    r"|\bas an ai\b"
    r"|\b(?:cite|answer|respond|reply|output|say)\s+only\b"
    r"|\bfor (?:every|each|any) (?:claim|answer|response|question) you\b",
    re.IGNORECASE,
)


def reads_as_instruction(text: str) -> bool:
    """True for text that instructs a model (``Ignore all previous instructions...``)."""
    return bool(_INSTRUCTION.search(text))
