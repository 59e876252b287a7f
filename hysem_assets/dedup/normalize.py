"""Field normalization for duplicate matching.

Sources spell the same paper differently: markup in titles, translated titles in
brackets, accents dropped or mangled, authors as "Surname, Given", "Given Surname",
"Surname GN" or glued together, page ranges abbreviated, journals abbreviated. Every
function here maps such variants onto one comparable form; none of them guesses.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from typing import Any

import pandas as pd

# -- text -------------------------------------------------------------------------------

_LETTERS = str.maketrans(
    {
        "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "ł": "l", "ı": "i", "þ": "th",
        "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon",
        "κ": "kappa", "λ": "lambda", "μ": "mu", "π": "pi", "σ": "sigma", "τ": "tau",
        "ω": "omega", "‐": "-", "‑": "-", "–": "-", "—": "-", "’": "'", "‘": "'",
    }
)  # fmt: skip
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
_ELISION = re.compile(r"(?<![\w'])([a-z])'(?=[a-z])")
_WORD = re.compile(r"[^\W_]+")


def is_missing(value: Any) -> bool:
    """True for None, NaN/NA and blank strings (pandas hands all of them over)."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if hasattr(value, "__len__"):  # lists, tuples, arrays of names
        return len(value) == 0
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def text_or_empty(value: Any) -> str:
    """The value as a stripped string; missing values become ""."""
    return "" if is_missing(value) else str(value).strip()


def decode_entities(text: str) -> str:
    """Decode HTML entities, also double-escaped ones ("&amp;lt;")."""
    return html.unescape(html.unescape(text)) if "&" in text else text


def strip_markup(text: str) -> str:
    """Decode entities and drop HTML/JATS/MathML tags."""
    text = decode_entities(text)
    return _TAG.sub(" ", text) if "<" in text else text


def fold(text: str) -> str:
    """Case- and accent-insensitive form: NFKD, combining marks dropped, casefolded."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return _COMBINING.sub("", decomposed).translate(_LETTERS)


def tokens(text: str) -> list[str]:
    """Word tokens of an already folded text. Punctuation separates words, except
    apostrophes ("Langenbeck's" is "langenbecks"); elisions split ("d'anesthesie")."""
    if "'" in text:
        text = _ELISION.sub(" ", text).replace("'", "")
    return _WORD.findall(text)


# -- titles -----------------------------------------------------------------------------

#: Titles that stand for "no title" in exports.
_PLACEHOLDER_TITLES = frozenset({"unknown", "untitled", "no title", "na", "n a", "none", "title"})
#: "RETRACTED: X" is the retracted article itself, so the flag is not part of its title.
_RETRACTED_FLAG = re.compile(r"^\W*retracted(?: article)?\s*[:.-]\s*")
#: Database annotations after a title: "[Review] [45 refs]", "[Erratum appears in ...]",
#: "(Provisional abstract)", MEDLINE's "(author's transl)".
_TRAILING_BRACKET = re.compile(r"\s*\.?\s*\[[^\[\]]*\]\W*$")
_TRAILING_NOTE = re.compile(
    r"\s*\((?:authors?'?s? transl\w*|provisional abstract|structured abstract|abstract"
    r"|review|editorial|letter|author abstract)\)\W*$"
)
#: Separators between the language versions of a bilingual title.
_PARALLEL = re.compile(r"\s*<original>\s*|\s+to:\s+|;\s+|\s+=\s+|(?<=\])\s+")
#: Language versions shorter than this are too unspecific to match on their own.
MIN_VARIANT_WORDS = 6


def _strip_annotations(text: str) -> str:
    """Remove trailing annotations; a fully bracketed (translated) title stays."""
    while True:
        stripped = _TRAILING_NOTE.sub("", _TRAILING_BRACKET.sub("", text))
        if stripped == text or not tokens(stripped):
            return text
        text = stripped


def _title_text(value: Any) -> str:
    """Folded title with entities decoded, retraction flag and annotations removed."""
    text = fold(decode_entities(text_or_empty(value))).strip(" \"'")
    return _strip_annotations(_RETRACTED_FLAG.sub("", text)).replace("&", " and ")


def _words(text: str) -> str:
    title = " ".join(tokens(_TAG.sub(" ", text)))
    return "" if title in _PLACEHOLDER_TITLES else title


def normalize_title(value: Any) -> str:
    """Comparable title: folded words separated by single spaces; "" when unusable.

    Markup, brackets of translated titles, trailing periods and all other punctuation
    disappear with the non-word characters; placeholders such as "UNKNOWN" become "".
    """
    return _words(_title_text(value))


def title_variants(value: Any) -> tuple[str, ...]:
    """The normalized title, then each language version of a bilingual title
    ("English <ORIGINAL> Original", "[English] TO: Original", "Original; English")
    that is long enough to identify a paper by itself."""
    text = _title_text(value)
    full = _words(text)
    parts = (_words(part) for part in _PARALLEL.split(text))
    variants = [part for part in parts if len(part.split()) >= MIN_VARIANT_WORDS]
    return tuple(dict.fromkeys([full, *variants])) if full else ()


_NOTICE = re.compile(
    r"^(erratum|errata|corrigend(?:um|a)|correction|retraction|expression of concern"
    r"|withdrawal|comments?|commentary|response|reply|in reply|authors?'?s? reply|re)"
    r"(?:\s+(?:notice|note|statement))?"
    r"\s*(?::|\bto\b|\bon\b|\bregarding\b|\bof\b\s+(?:the\s+)?(?:article|paper)|\W*$)"
)
_NOTICE_TYPES = {
    "erratum": "erratum", "correction": "erratum", "corrigendum": "erratum",
    "retraction": "retraction", "expression-of-concern": "retraction",
    "comment": "comment", "reply": "reply",
}  # fmt: skip


def notice_kind(title: Any, item_type: Any = None) -> str:
    """ "erratum", "retraction", "comment", "reply"... for notices about a paper; "" otherwise.

    A notice shares most of its title with the paper it is about but is a separate
    record, so two records only match when their notice kinds are equal.
    """
    kind = fold(text_or_empty(item_type)).replace(" ", "-")
    for marker, name in _NOTICE_TYPES.items():
        if marker in kind:
            return name
    match = _NOTICE.match(_TAG.sub(" ", _title_text(title)).lstrip(" [(\"'"))
    if not match:
        return ""
    word = match.group(1)
    if word.startswith(("errat", "corrig", "correction")):
        return "erratum"
    if word in ("retraction", "expression of concern", "withdrawal"):
        return "retraction"
    return "comment" if word.startswith("comment") or word == "re" else "reply"


def notice_subject(title: Any) -> str:
    """The normalized title a notice names after its label ("Erratum: <title> (Journal ...)" gives
    "<title> journal ..."); "" when the title is no notice's."""
    text = _TAG.sub(" ", _title_text(title)).lstrip(" [(\"'")
    match = _NOTICE.match(text)
    return _words(text[match.end() :]) if match else ""


_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7",
          "viii": "8", "ix": "9", "x": "10"}  # fmt: skip
#: Words after which a numeral or a letter labels one of several ("phase II", "cohort A").
ORDINAL_QUALIFIERS = frozenset(
    "phase part type stage grade class series section volume vol chapter study trial cohort arm group".split()
)


def title_numbers(title: str) -> frozenset[str]:
    """Numbers a normalized title carries (digits, and roman numerals after "phase",
    "part", ...), so that "phase I"/"phase II" or "2019 update"/"2021 update" differ.
    Digits are read across spaces: "10 000" and "10000" are one number.
    """
    words = title.split()
    found = {str(int(n)) for n in re.findall(r"\d+", "".join(words)) if len(n) < 12}
    found.update(
        _ROMAN[word] for before, word in zip(words, words[1:]) if word in _ROMAN and before in ORDINAL_QUALIFIERS
    )
    return frozenset(found)


# -- people -----------------------------------------------------------------------------

_PLACEHOLDER_NAMES = frozenset({"unknown", "anonymous", "anon", "et al", "n a", "na", "none"})
_AUTHOR_SEPARATOR = re.compile(r"\s+and\s+|\s*;\s*|\s*\|\s*")
#: Exports that lose separators glue names: "Tan A.Schulze A.O'Donnell C. P."
_GLUED_NAMES = re.compile(r"(?<=[A-Z]\.)(?=[A-Z][a-z'’])")
_INITIALS = re.compile(r"^(?:[A-Z]{1,3}|(?:[A-Z][a-z]?\.-?\s?){1,4})$")
PARTICLES = frozenset("da das de del della der di do dos du la le st ten ter van von zu".split())
_SUFFIXES = frozenset("jr jr. sr sr. ii iii iv 2nd 3rd".split())


def _is_initials(word: str) -> bool:
    return bool(_INITIALS.match(word.strip(",")))


def _split_comma_list(text: str) -> list[str]:
    """PubMed "Zuna RE, Wang SS" and Scopus "Zuna, R.E., Wang, S.S." name lists."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if len(parts) > 1 and all(len(part.split()) > 1 and _is_initials(part.split()[-1]) for part in parts):
        return parts
    if len(parts) > 2 and len(parts) % 2 == 0 and all(_is_initials(p) for p in parts[1::2]):
        return [f"{surname}, {given}" for surname, given in zip(parts[::2], parts[1::2])]
    return [text]


def _is_placeholder_name(name: str) -> bool:
    return len(name) < 16 and " ".join(tokens(fold(name))) in _PLACEHOLDER_NAMES


def split_authors(value: Any) -> list[str]:
    """Author names from a list or a BibTeX/RIS/PubMed-style author string, without
    placeholders such as "UNKNOWN" or "Anonymous"."""
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        text = strip_markup(text_or_empty(value))
        names = [n.strip(" ,") for n in _AUTHOR_SEPARATOR.split(_GLUED_NAMES.sub(";", text))]
        names = [name for name in names if name]
        if len(names) == 1:
            names = _split_comma_list(names[0])
    else:
        names = [str(name).strip() for name in value if not is_missing(name)]
    return [name for name in names if not _is_placeholder_name(name)]


def surname(name: str) -> str:
    """The surname in a "Surname, Given", "Surname GN" or "Given [particles] Surname" name."""
    name = strip_markup(name).strip()
    if "," in name:
        return name.split(",", 1)[0].strip()
    words = name.split()
    if len(words) > 2:
        words = [word for word in words if word.lower().strip(".,") not in _SUFFIXES]
    if len(words) <= 1:
        return name
    if _is_initials(words[-1]) and not _is_initials(words[0]):
        end = len(words)
        while end > 1 and _is_initials(words[end - 1]):
            end -= 1
        return " ".join(words[:end])
    start = len(words) - 1
    while start > 1 and words[start - 1].lower() in PARTICLES:
        start -= 1
    return " ".join(words[start:])


def name_is_ordered(name: str) -> bool:
    """Whether the surname position is certain: a comma, or initials on one side."""
    words = name.split()
    return "," in name or len(words) < 2 or _is_initials(words[0]) or _is_initials(words[-1])


# -- venue, volume, pages, year ----------------------------------------------------------

_PARENTHETICAL = re.compile(r"\([^)]*\)|\[[^\]]*\]")
#: Embase writes a conference abstract's venue as "Blood. Conference: 58th Annual Meeting
#: of the ASH. United States": the journal whose supplement printed it, then the meeting.
_CONFERENCE_TAIL = re.compile(r"\.\s*conference\s*:.*$", re.DOTALL)
_VENUE_STOPWORDS = frozenset("the of and in for on de d la le l der des du und fur et an".split())


@lru_cache(maxsize=1 << 14)
def _journal_variants(text: str) -> tuple[str, ...]:
    text = _PARENTHETICAL.sub(" ", fold(strip_markup(text)))
    variants = []
    for part in text.split("="):
        for piece in (part, re.split(r"[;:]", part, maxsplit=1)[0], _CONFERENCE_TAIL.sub("", part)):
            words = [w for w in tokens(piece.replace("&", " and ")) if w not in _VENUE_STOPWORDS]
            if words:
                variants.append(" ".join(words))
    return tuple(dict.fromkeys(variants))


def normalize_journal(value: Any) -> tuple[str, ...]:
    """The journal's name variants as folded words, stopwords removed.

    PubMed writes "Ai zheng = Aizheng = Chinese journal of cancer" and "Stroke; a
    journal of cerebral circulation": each "=" alternative is a variant, and so is
    the head before ";" or ":". Embase's "Blood. Conference: <meeting>" (an abstract
    printed in the journal's supplement) also yields the journal, "blood". Qualifiers such as "(Amsterdam, Netherlands)" or
    "[Electronic Resource]", "The", "&"/"and" and punctuation do not count.
    """
    return _journal_variants(text_or_empty(value))


def _abbreviates(short: str, full: str) -> bool:
    """ "opin" abbreviates "opinion", "natl" abbreviates "national" (same first letter,
    letters in order)."""
    if short == full:
        return True
    if not short or not full or short[0] != full[0] or len(short) >= len(full):
        return False
    position = 0
    for char in short:
        position = full.find(char, position) + 1
        if not position:
            return False
    return True


def _abbreviation_of(short: list[str], full: list[str]) -> bool:
    """Every word of ``short`` abbreviates the word at the same position of ``full``."""
    return len(short) == len(full) and all(map(_abbreviates, short, full))


def _acronym_of(short: list[str], full: list[str]) -> bool:
    """ "bmj" for "british medical journal", "jama" for "journal american medical association"."""
    return len(short) == 1 and len(full) >= 3 and short[0] == "".join(w[0] for w in full)


def journals_agree(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two normalized journal names can denote the same journal.

    Equal names, ISO-style abbreviations ("Curr Opin Lipidol"), acronyms ("BMJ") and
    names where one variant's words (three or more) are all contained in the other's
    agree; a conference name never agrees with a journal name.
    """
    for left in a:
        for right in b:
            if left == right:
                return True
            lw, rw = left.split(), right.split()
            if _is_conference(lw) != _is_conference(rw):
                continue
            if any(test(x, y) for test in (_abbreviation_of, _acronym_of) for x, y in ((lw, rw), (rw, lw))):
                return True
            smaller, larger = sorted((set(lw), set(rw)), key=len)
            if len(smaller) >= 3 and smaller <= larger:
                return True
    return False


_CONFERENCE_WORDS = frozenset("conference conf workshop symposium congress meeting colloquium".split())
_CONFERENCE_TYPES = frozenset(
    "inproceedings conference proceedings proceedings-article conference-paper "
    "conference-abstract paper-conference cp conf".split()
)
_JOURNAL_TYPES = frozenset("article journal-article article-journal jour ar".split())


def _is_conference(words: list[str]) -> bool:
    """A conference venue: "... Conference ...", "... Workshop ...", "Proceedings"
    with a year ("AMCIS 2017 Proceedings"), or a proceedings series ("Lecture Notes in
    ...", "Procedia ..."); "Proceedings of the National Academy of Sciences" is a journal."""
    return (
        bool(_CONFERENCE_WORDS.intersection(words))
        or ("proceedings" in words and any(re.fullmatch(r"(?:19|20)\d\d", w) for w in words))
        or {"lecture", "notes"} <= set(words)
        or "procedia" in words
    )


_PREPRINT_WORDS = frozenset("arxiv biorxiv medrxiv chemrxiv psyarxiv socarxiv ssrn preprint preprints".split())
_PREPRINT_TYPES = frozenset("posted-content preprint".split())


def venue_kind(journal: tuple[str, ...], item_type: Any) -> str:
    """ "preprint", "conference", "journal" or "" (unknown): from the venue's words,
    else from the item type.

    A conference paper and its journal version, or a preprint and the published
    paper, are different records for a review (they may differ in content).
    """
    words = {word for variant in journal for word in variant.split()}
    kind = fold(text_or_empty(item_type)).replace(" ", "-")
    if words & _PREPRINT_WORDS or {"research", "square"} <= words or kind in _PREPRINT_TYPES:
        return "preprint"
    if any(_is_conference(variant.split()) for variant in journal) or kind in _CONFERENCE_TYPES:
        return "conference"
    return "journal" if kind in _JOURNAL_TYPES else ""


#: A supplement's label where the volume belongs ("Supplement 1", "Suppl. 2", "S1"):
#: some exports of conference abstracts put it in the volume field.
_SUPPLEMENT_VOLUME = re.compile(r"^\W*s(?:upp?l?\w*)?\W*\d*\W*$")


def normalize_volume(value: Any) -> str | None:
    """ "4 (1) (no pagination)" -> "4"; volumes without digits keep their folded words;
    a supplement label alone ("Supplement 1") names no volume: None."""
    text = fold(text_or_empty(value))
    if _SUPPLEMENT_VOLUME.match(text):
        return None
    digits = re.search(r"\d+", text)
    if digits:
        return str(int(digits.group()))
    return " ".join(tokens(text)) or None


_NO_PAGES = frozenset({"np", "n p", "na", "n a", "no pagination", "none", "unknown"})
_PAGE_RANGE = re.compile(r"^\s*(?:pp?\.?\s*)?([^\s\-]+?)\s*(?:-+|\bto\b)\s*([^\s\-]+)")


def _page_token(token: str) -> str | None:
    """ "e0123" -> "e123", "0091" -> "91": article numbers lose zero padding; words
    without digits ("Suppl", a month from a spreadsheet's date guess) are no page."""
    match = re.fullmatch(r"([a-z]*)0*(\d+)([a-z]*)", token)
    if match:
        return f"{match.group(1)}{match.group(2)}{match.group(3)}"
    return token if any(ch.isdigit() for ch in token) else None


def normalize_pages(value: Any) -> str | None:
    """Canonical page range: "288-297" for "288-297", "288-97" and "pp. 288--297";
    "e123" for the article number "e0123"; None for "no pagination"."""
    text = fold(text_or_empty(value)).replace("[", " ").split("]")[-1].strip()
    if not text or " ".join(tokens(text)) in _NO_PAGES:
        return None
    match = _PAGE_RANGE.match(text)
    if not match:
        words = tokens(re.sub(r"^pp?\.\s*", "", text))
        return _page_token(words[0]) if words else None
    first, last = (_page_token(group.strip(".,;:")) for group in match.groups())
    if first is None or last is None or first == last:
        return first
    if first.isdigit() and last.isdigit() and len(last) < len(first):
        last = first[: len(first) - len(last)] + last
    return f"{first}-{last}"


_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")


def parse_year(value: Any) -> int | None:
    """The first plausible four-digit year in 2017, "2017", "2017/05/01" or "[2017]"."""
    if is_missing(value):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(int(value))
    match = _YEAR.search(str(value))
    return int(match.group(1)) if match else None
