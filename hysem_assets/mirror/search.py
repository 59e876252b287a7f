"""Search queries of PubMed, OpenAlex, Scopus and Europe PMC, parsed and evaluated against snapshot records.

The mirror holds a few hundred records, so it needs no index: each query is parsed once into a
small tree and tested against every record. Each source's syntax is read loosely, the way a
searcher expects it to behave rather than to the letter of each engine:

- words and quoted phrases match case-insensitively after light normalisation (diacritics
  folded, possessive ``'s`` dropped, hyphens, spaces and run-together spellings equivalent,
  plural and simple ``-ing``/``-ed`` suffixes stemmed); ``*`` (and, outside PubMed, ``?``)
  is a wildcard; Scopus ``{...}``, OpenAlex ``search.exact`` and ``.search.no_stem`` skip the
  stemming;
- field tags and codes choose what is searched: title, abstract, keywords, MeSH headings,
  authors, journal, publication type; a tag the mirror cannot judge (dates, languages,
  subsets, affiliations) is neutral: it neither keeps nor drops a record;
- operators: PubMed evaluates AND/OR/NOT left to right; Scopus binds OR before AND before
  AND NOT and reads W/n and PRE/n as AND; OpenAlex and Europe PMC bind NOT and AND before OR.
  Juxtaposed words are AND-ed and stop words are ignored, as all the engines do;
- Europe PMC field prefixes (``TITLE:``, ``ABSTRACT:``, ``TITLE_ABS:``, ``KW:``, ``AUTH:``,
  ``JOURNAL:``, ``PUB_TYPE:``) apply to the word, phrase or parenthesised group after them;
  any other prefix (``FIRST_PDATE:[... TO ...]``, ``SRC:``, ``LANG:``, ``BODY:``) is neutral,
  and so is a bare ``[... TO ...]`` range. The mirror evaluates the "added" date clauses of a
  re-search itself (``hysem_assets.mirror.server``).

An unparseable query is not an error: it falls back to the AND of its words, and the fallback
is logged, so a mistyped query still selects something plausible instead of failing a run.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Union

log = logging.getLogger(__name__)

Dialect = Literal["pubmed", "openalex", "scopus", "europepmc"]
DIALECTS: tuple[Dialect, ...] = ("pubmed", "openalex", "scopus", "europepmc")

TITLE, ABSTRACT, KEYWORDS, MESH, AUTHORS, JOURNAL, TYPES = (
    "title",
    "abstract",
    "keywords",
    "mesh",
    "authors",
    "journal",
    "types",
)
FIELDS = (TITLE, ABSTRACT, KEYWORDS, MESH, AUTHORS, JOURNAL, TYPES)
#: What an untagged term searches: the text a reader would call the record's subject.
DEFAULT_FIELDS = frozenset({TITLE, ABSTRACT, KEYWORDS, MESH})
_TIAB = frozenset({TITLE, ABSTRACT, KEYWORDS})
_ALL = DEFAULT_FIELDS | {AUTHORS, JOURNAL}

#: Words all three engines drop from free text (quoted phrases keep them).
STOP_WORDS = frozenset(
    "a an and are as at be but by for from has have in into is it its not of on or such that the their "
    "then there these they this to was were which will with".split()
)

#: A neutral clause: the mirror cannot judge it, so it neither keeps nor drops a record.
IGNORE: frozenset[str] = frozenset()

# PubMed search tags (lower case, inner spaces collapsed) -> fields; unknown tags search _ALL.
_PUBMED_TAGS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("tiab", "title/abstract", "tw", "text word", "text words"), _TIAB),
    **dict.fromkeys(("ti", "title"), frozenset({TITLE})),
    **dict.fromkeys(("ab", "abstract"), frozenset({ABSTRACT})),
    **dict.fromkeys(("ot", "other term", "other terms", "kw", "keyword", "keywords"), frozenset({KEYWORDS})),
    **dict.fromkeys(
        (
            "mh",
            "mesh",
            "mesh terms",
            "mesh term",
            "majr",
            "mesh major topic",
            "mh:noexp",
            "majr:noexp",
            "mesh terms:noexp",
            "mesh:noexp",
            "sh",
            "subheading",
            "mesh subheading",
            "nm",
            "supplementary concept",
            "rn",
            "pa",
            "pharmacological action",
        ),
        frozenset({MESH, KEYWORDS}),
    ),
    **dict.fromkeys(("all", "all fields"), _ALL),
    **dict.fromkeys(
        (
            "au",
            "author",
            "1au",
            "author - first",
            "lastau",
            "author - last",
            "fau",
            "full author name",
            "cn",
            "corporate author",
            "auid",
        ),
        frozenset({AUTHORS}),
    ),
    **dict.fromkeys(("ta", "jour", "journal", "jt"), frozenset({JOURNAL})),
    **dict.fromkeys(("pt", "publication type"), frozenset({TYPES})),
    **dict.fromkeys(
        (
            "dp",
            "pdat",
            "publication date",
            "date - publication",
            "edat",
            "entrez date",
            "date - entrez",
            "crdt",
            "create date",
            "date - create",
            "mhda",
            "mesh date",
            "dcom",
            "date - completion",
            "lr",
            "mdat",
            "date - modification",
            "la",
            "lang",
            "language",
            "sb",
            "subset",
            "filter",
            "pmid",
            "uid",
            "ad",
            "affiliation",
            "pl",
            "place of publication",
            "vi",
            "volume",
            "ip",
            "issue",
            "pg",
            "pagination",
            "si",
            "gr",
            "grant number",
            "aid",
            "lid",
            "location id",
            "doi",
            "is",
            "issn",
        ),
        IGNORE,
    ),
}

# Scopus field codes (upper case) -> fields; another upper-case word before "(" is a plain word.
_SCOPUS_CODES: dict[str, frozenset[str]] = {
    "TITLE-ABS-KEY": DEFAULT_FIELDS,
    "TITLE-ABS-KEY-AUTH": DEFAULT_FIELDS | {AUTHORS},
    "TITLE-ABS": frozenset({TITLE, ABSTRACT}),
    "TITLE": frozenset({TITLE}),
    "ABS": frozenset({ABSTRACT}),
    "KEY": frozenset({KEYWORDS, MESH}),
    "AUTHKEY": frozenset({KEYWORDS}),
    "INDEXTERMS": frozenset({MESH, KEYWORDS}),
    "ALL": _ALL,
    **dict.fromkeys(("AUTH", "AUTHOR-NAME", "AUTHLASTNAME", "AUTHFIRST"), frozenset({AUTHORS})),
    **dict.fromkeys(("SRCTITLE", "EXACTSRCTITLE"), frozenset({JOURNAL})),
    **dict.fromkeys(
        (
            "PUBYEAR",
            "PUBDATETXT",
            "LOAD-DATE",
            "DOCTYPE",
            "SRCTYPE",
            "LANGUAGE",
            "SUBJAREA",
            "AFFIL",
            "AFFILORG",
            "AFFILCITY",
            "AFFILCOUNTRY",
            "AF-ID",
            "AU-ID",
            "DOI",
            "PMID",
            "ISSN",
            "ISBN",
            "EID",
            "OPENACCESS",
            "OA",
            "LIMIT-TO",
            "EXCLUDE",
            "PUBSTAGE",
            "FUND-SPONSOR",
            "FUND-ACR",
            "FUND-NO",
            "REF",
            "REFTITLE",
            "REFAUTH",
            "REFSRCTITLE",
            "REFPUBYEAR",
            "VOLUME",
            "ISSUE",
            "PAGES",
            "CODEN",
            "PUBLISHER",
        ),
        IGNORE,
    ),
}

#: Europe PMC field prefixes (upper case) that search text -> fields; every other prefix is neutral.
_EUROPEPMC_FIELDS: dict[str, frozenset[str]] = {
    "TITLE": frozenset({TITLE}),
    "ABSTRACT": frozenset({ABSTRACT}),
    "TITLE_ABS": frozenset({TITLE, ABSTRACT}),
    "KW": frozenset({KEYWORDS, MESH}),
    "KEYWORD": frozenset({KEYWORDS}),
    "MESH": frozenset({MESH}),
    "CHEM": frozenset({MESH}),
    **dict.fromkeys(("AUTH", "AUTH_FIRST", "AUTH_LAST", "INVESTIGATOR"), frozenset({AUTHORS})),
    **dict.fromkeys(("JOURNAL", "JOUR"), frozenset({JOURNAL})),
    "PUB_TYPE": frozenset({TYPES}),
}
_EUROPEPMC_PREFIX = re.compile(r"([A-Za-z][A-Za-z0-9_]*):(.*)\Z", re.DOTALL)

#: OpenAlex ``filter=`` keys that search text -> fields searched.
OPENALEX_SEARCH_FILTERS: dict[str, frozenset[str]] = {
    "title.search": frozenset({TITLE}),
    "display_name.search": frozenset({TITLE}),
    "abstract.search": frozenset({ABSTRACT}),
    "title_and_abstract.search": frozenset({TITLE, ABSTRACT}),
    "default.search": DEFAULT_FIELDS,
    "fulltext.search": DEFAULT_FIELDS,
    "keyword.search": frozenset({KEYWORDS}),
    "keywords.search": frozenset({KEYWORDS}),
    "raw_author_name.search": frozenset({AUTHORS}),
}
_NO_STEM = ".no_stem"


class QuerySyntaxError(ValueError):
    """The query does not parse; ``compile_query`` falls back to the AND of its words."""


# ----------------------------------------------------------------------------- normalisation

_TOKEN = re.compile(r"[^\W_]+")
_QUERY_TOKEN = re.compile(r"(?:[^\W_]|[*?])+")
_POSSESSIVE = re.compile(r"'s\b")
_DOUBLE_END = re.compile(r"([^aeiouy])\1$")


def fold(text: str) -> str:
    """Lower case without diacritics, typographic quotes or possessive ``'s`` (Müller's -> muller)."""
    decomposed = unicodedata.normalize("NFKD", text.replace("\u2019", "'").replace("\u00df", "ss"))
    plain = "".join(char for char in decomposed if not unicodedata.combining(char)).lower()
    return _POSSESSIVE.sub("", plain.replace("\u00f8", "o").replace("\u00e6", "ae"))


def words(text: str) -> list[str]:
    """Folded words of ``text``: runs of letters and digits, so ``non-users`` is ``non users``."""
    return _TOKEN.findall(fold(text))


def stem(word: str) -> str:
    """A light suffix stemmer, the same on both sides: plurals, ``-ing``, ``-ed``, final ``e``, doubled ends.

    Deliberately crude: it only has to make a query's spelling meet a record's, never to
    produce a real root (``disease``, ``diseases`` -> ``diseas``; ``modelling``, ``model`` -> ``model``).
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3:
        word = _DOUBLE_END.sub(r"\1", word)
    return word


# ----------------------------------------------------------------------------- documents


@dataclass(frozen=True)
class Passage:
    """One searchable string (a title, an abstract, one keyword, one author) as words and stems."""

    words: tuple[str, ...]
    stems: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Passage:
        found = words(text)
        return cls(tuple(found), tuple(stem(word) for word in found))


@dataclass(frozen=True)
class Document:
    """The searchable text of one record, by field; phrases never run across two passages."""

    fields: Mapping[str, tuple[Passage, ...]]

    @classmethod
    def build(
        cls,
        *,
        title: str | Iterable[str] = (),
        abstract: str | Iterable[str] = (),
        keywords: Iterable[str] = (),
        mesh: Iterable[str] = (),
        authors: Iterable[str] = (),
        journal: str | Iterable[str] = (),
        types: Iterable[str] = (),
    ) -> Document:
        """Each argument is one text or several; authors are one string per person (all name parts)."""
        given = {
            TITLE: title,
            ABSTRACT: abstract,
            KEYWORDS: keywords,
            MESH: mesh,
            AUTHORS: authors,
            JOURNAL: journal,
            TYPES: types,
        }
        fields: dict[str, tuple[Passage, ...]] = {}
        for name, texts in given.items():
            items = [texts] if isinstance(texts, str) else list(texts)
            fields[name] = tuple(Passage.of(text) for text in items if text and text.strip())
        return cls(fields)

    def passages(self, names: Iterable[str]) -> Iterator[tuple[str, Passage]]:
        for name in names:
            for passage in self.fields.get(name, ()):
                yield name, passage


# ----------------------------------------------------------------------------- the query tree


@dataclass(frozen=True)
class Term:
    """A word or phrase (consecutive words) to find in any of ``fields``."""

    text: str = field(compare=False)
    words: tuple[str, ...]
    fields: frozenset[str] = DEFAULT_FIELDS
    stemmed: bool = True

    def matches(self, document: Document) -> bool:
        for name, passage in document.passages(sorted(self.fields)):
            if name == AUTHORS:
                if _name_matches(self.words, passage):
                    return True
            elif _sequence_matches(self.words, passage, self.stemmed):
                return True
        return False


@dataclass(frozen=True)
class Ignored:
    """A clause the mirror cannot judge (a date range, a language limit): neutral."""

    text: str = field(compare=False)


@dataclass(frozen=True)
class Not:
    item: Node


@dataclass(frozen=True)
class And:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Node, ...]


Node = Union[Term, Ignored, Not, And, Or]


def evaluate(node: Node, document: Document) -> bool | None:
    """True or False, or None when only neutral clauses decide (they drop out of AND and OR)."""
    if isinstance(node, Term):
        return node.matches(document)
    if isinstance(node, Ignored):
        return None
    if isinstance(node, Not):
        inner = evaluate(node.item, document)
        return None if inner is None else not inner
    results = [result for item in node.items if (result := evaluate(item, document)) is not None]
    if not results:
        return None
    return all(results) if isinstance(node, And) else any(results)


def terms(node: Node) -> Iterator[Term]:
    """Every Term of the tree, in query order."""
    if isinstance(node, Term):
        yield node
    elif isinstance(node, Not):
        yield from terms(node.item)
    elif isinstance(node, (And, Or)):
        for item in node.items:
            yield from terms(item)


def simplify(node: Node) -> Node:
    """The tree without neutral clauses: two queries that differ only in date limits compare equal."""
    if isinstance(node, Not):
        inner = simplify(node.item)
        return inner if isinstance(inner, Ignored) else Not(inner)
    if isinstance(node, (And, Or)):
        kind = type(node)
        items: list[Node] = []
        for item in node.items:
            simpler = simplify(item)
            if not isinstance(simpler, Ignored):
                items.extend(_flatten(simpler, kind))
        if not items:
            return Ignored("")
        return items[0] if len(items) == 1 else kind(tuple(items))
    return node


def _wildcard(word: str) -> re.Pattern[str] | None:
    if "*" not in word and "?" not in word:
        return None
    pattern = "".join(r"\w*" if char == "*" else r"\w" if char == "?" else re.escape(char) for char in word)
    return re.compile(pattern + r"\Z")


def _sequence_matches(query: tuple[str, ...], passage: Passage, stemmed: bool) -> bool:
    """Consecutive words, where ``non users``, ``non-users`` and ``nonusers`` are one spelling."""
    if not query:
        return False
    if any("*" in word or "?" in word for word in query):
        return _wildcard_sequence(query, passage, stemmed)
    wanted = "".join(stem(word) if stemmed else word for word in query)
    tokens = passage.stems if stemmed else passage.words
    for start in range(len(tokens)):
        joined = ""
        for token in tokens[start:]:
            joined += token
            if joined == wanted:
                return True
            if len(joined) >= len(wanted) or not wanted.startswith(joined):
                break
    return False


def _wildcard_sequence(query: tuple[str, ...], passage: Passage, stemmed: bool) -> bool:
    tests = []
    for word in query:
        pattern = _wildcard(word)
        if pattern is not None:
            tests.append(lambda index, p=pattern: bool(p.match(passage.words[index])))
        elif stemmed:
            tests.append(lambda index, s=stem(word): passage.stems[index] == s)
        else:
            tests.append(lambda index, w=word: passage.words[index] == w)
    size = len(tests)
    return any(
        all(test(start + offset) for offset, test in enumerate(tests)) for start in range(len(passage.words) - size + 1)
    )


def _name_matches(query: tuple[str, ...], passage: Passage) -> bool:
    """Every query word is one of the person's name parts or initials, in any order."""
    if not query:
        return False
    present = set(passage.words)
    for word in query:
        pattern = _wildcard(word)
        if pattern is not None:
            if not any(pattern.match(part) for part in present):
                return False
        elif word not in present:
            return False
    return True


# ----------------------------------------------------------------------------- lexing


@dataclass(frozen=True)
class _Token:
    kind: str  # lp, rp, phrase, exact, tag, word, field, op, ignored, range
    text: str
    adjacent: bool = False  # a tag written right after the term (no space)


_SCOPUS_RANGE = re.compile(r"([A-Z][A-Z-]*[A-Z])\s*(>=|<=|>|<|=|AFT\b|BEF\b|IS\b)\s*\d{4}(?:\d{4})?\b", re.IGNORECASE)
_PROXIMITY = re.compile(r"(?:W|PRE)/\d+\Z", re.IGNORECASE)
_QUOTES = {'"': '"', "\u201c": "\u201d", "\u201d": "\u201d"}


def _lex(text: str, dialect: Dialect) -> list[_Token]:
    tokens: list[_Token] = []
    position, length = 0, len(text)
    stops = (
        '()"\u201c\u201d' + ("[" if dialect in ("pubmed", "europepmc") else "") + ("{" if dialect == "scopus" else "")
    )
    while position < length:
        char = text[position]
        if char.isspace():
            position += 1
        elif char in "()":
            tokens.append(_Token("lp" if char == "(" else "rp", char))
            position += 1
        elif char in _QUOTES:
            end = min((i for i in (text.find(q, position + 1) for q in ('"', "\u201d")) if i >= 0), default=-1)
            if end < 0:
                raise QuerySyntaxError(f"unterminated quote at character {position + 1}")
            tokens.append(_Token("phrase", text[position + 1 : end]))
            position = end + 1
        elif char == "{" and dialect == "scopus":
            end = text.find("}", position + 1)
            if end < 0:
                raise QuerySyntaxError(f"unterminated {{ at character {position + 1}")
            tokens.append(_Token("exact", text[position + 1 : end]))
            position = end + 1
        elif char == "[" and dialect == "pubmed":
            end = text.find("]", position + 1)
            if end < 0:
                raise QuerySyntaxError(f"unterminated [ at character {position + 1}")
            adjacent = position > 0 and not text[position - 1].isspace()
            tokens.append(_Token("tag", text[position + 1 : end], adjacent))
            position = end + 1
        elif char == "[" and dialect == "europepmc":
            end = text.find("]", position + 1)
            if end < 0:
                raise QuerySyntaxError(f"unterminated [ at character {position + 1}")
            tokens.append(_Token("range", text[position + 1 : end]))
            position = end + 1
        else:
            if dialect == "scopus" and (found := _SCOPUS_RANGE.match(text, position)):
                tokens.append(_Token("ignored", found.group(0)))
                position = found.end()
                continue
            end = position
            while end < length and not text[end].isspace() and text[end] not in stops:
                end += 1
            word = text[position:end]
            position = end
            operator = _operator(word, dialect)
            if operator:
                tokens.append(_Token("op", operator))
            elif dialect == "scopus" and word.upper() in _SCOPUS_CODES and text[position:].lstrip().startswith("("):
                tokens.append(_Token("field", word.upper()))
            elif dialect == "europepmc" and (prefix := _europepmc_prefix(word)) is not None:
                tokens.append(_Token("field", prefix[0]))
                if prefix[1]:
                    tokens.append(_Token("word", prefix[1]))
            else:
                tokens.append(_Token("word", word))
    return _merge_and_not(tokens) if dialect == "scopus" else tokens


def _europepmc_prefix(word: str) -> tuple[str, str] | None:
    """``TITLE:aspirin`` -> ("TITLE", "aspirin"); a lower-case word before ':' is a prefix only when known."""
    found = _EUROPEPMC_PREFIX.match(word)
    if found is None:
        return None
    code = found.group(1)
    if code.upper() not in _EUROPEPMC_FIELDS and not code.isupper():
        return None
    return code.upper(), found.group(2)


def _operator(word: str, dialect: Dialect) -> str | None:
    """AND/OR/NOT in capitals (Scopus: any case), and Scopus proximity W/n and PRE/n."""
    if dialect == "scopus":
        if word.upper() in ("AND", "OR", "NOT"):
            return word.upper()
        if _PROXIMITY.match(word):
            return "NEAR"
        return None
    return word if word in ("AND", "OR", "NOT") else None


def _merge_and_not(tokens: list[_Token]) -> list[_Token]:
    merged: list[_Token] = []
    for token in tokens:
        previous = merged[-1] if merged else None
        if token.kind == "op" and token.text == "NOT" and previous and previous.kind == "op":
            if previous.text != "AND":
                raise QuerySyntaxError(f"'{previous.text} NOT' is not an operator")
            merged[-1] = _Token("op", "AND NOT")
        else:
            merged.append(token)
    return merged


# ----------------------------------------------------------------------------- parsing

#: Binding power of each binary operator per dialect (higher binds tighter); "" is juxtaposition.
_POWERS: dict[Dialect, dict[str, int]] = {
    "pubmed": {"AND": 1, "OR": 1, "NOT": 1, "": 1},
    "scopus": {"OR": 4, "NEAR": 3, "AND": 2, "": 2, "AND NOT": 1, "NOT": 1},
    "openalex": {"OR": 1, "AND": 2, "NOT": 2, "": 2},
    "europepmc": {"OR": 1, "AND": 2, "NOT": 2, "": 2},
}


class _Parser:
    def __init__(self, tokens: list[_Token], dialect: Dialect, fields: frozenset[str], stemmed: bool) -> None:
        self.tokens = tokens
        self.position = 0
        self.dialect = dialect
        self.fields = fields
        self.stemmed = stemmed

    def peek(self) -> _Token | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def parse(self) -> Node:
        if not self.tokens:
            return Ignored("")
        node = self.expression(0)
        if self.peek() is not None:
            raise QuerySyntaxError(f"unexpected '{self.peek().text}'")  # type: ignore[union-attr]
        return node

    def expression(self, minimum: int) -> Node:
        left = self.unary()
        powers = _POWERS[self.dialect]
        while (token := self.peek()) is not None and token.kind != "rp":
            operator = token.text if token.kind == "op" else ""
            if operator == "NOT" and self.dialect == "scopus":
                operator = "AND NOT"
            power = powers[operator]
            if power < minimum:
                break
            if operator:
                self.take()
            if self.peek() is None or self.peek().kind == "rp":  # type: ignore[union-attr]
                raise QuerySyntaxError(f"'{token.text}' lacks its right-hand side")
            right = self.expression(power + 1)
            left = _combine(operator or "AND", left, right)
        return left

    def unary(self) -> Node:
        token = self.peek()
        if token is None:
            raise QuerySyntaxError("the query ends too early")
        if token.kind == "op" and token.text == "NOT":
            self.take()
            return Not(self.unary())
        if token.kind == "op":
            raise QuerySyntaxError(f"'{token.text}' where a term should be")
        return self.primary()

    def primary(self) -> Node:
        token = self.take()
        if token.kind == "lp":
            inner = self.expression(0)
            closing = self.peek()
            if closing is None or closing.kind != "rp":
                raise QuerySyntaxError("a '(' is never closed")
            self.take()
            self._drop_tag()
            return inner
        if token.kind == "rp":
            raise QuerySyntaxError("a ')' closes nothing")
        if token.kind in ("ignored", "range"):
            return Ignored(token.text)
        if token.kind == "field":
            return self.field(token.text)
        if token.kind == "tag":
            raise QuerySyntaxError(f"a tag [{token.text}] follows no term")
        if token.kind == "exact":
            return self.term(token.text, phrase=True, stemmed=False)
        if token.kind == "phrase":
            return self.tagged(token.text, phrase=True)
        run = [token.text]
        if self.dialect == "pubmed":
            while (following := self.peek()) is not None and following.kind == "word":
                run.append(self.take().text)
        return self.tagged(" ".join(run), phrase=False)

    def field(self, code: str) -> Node:
        opening = self.peek()
        if self.dialect == "europepmc":
            if opening is None or opening.kind in ("rp", "op", "field"):
                raise QuerySyntaxError(f"{code}: needs a value")
            fields = _EUROPEPMC_FIELDS.get(code, IGNORE)
        elif opening is None or opening.kind != "lp":
            raise QuerySyntaxError(f"{code} needs '('")
        else:
            fields = _SCOPUS_CODES[code]
        outer, self.fields = self.fields, fields or self.fields
        try:
            inner = self.primary()
        finally:
            self.fields = outer
        return Ignored(code) if fields is IGNORE else inner

    def tagged(self, text: str, phrase: bool) -> Node:
        """A word run or phrase, with the PubMed tag that follows it, if any."""
        tag = self.peek()
        if self.dialect != "pubmed" or tag is None or tag.kind != "tag":
            return self.term(text, phrase=phrase, stemmed=self.stemmed)
        self.take()
        fields = _PUBMED_TAGS.get(" ".join(tag.text.lower().split()), _ALL)
        if fields is IGNORE:
            self._skip_range()
            return Ignored(f"{text}[{tag.text}]")
        outer, self.fields = self.fields, fields
        try:
            return self.term(text, phrase=True, stemmed=self.stemmed)
        finally:
            self.fields = outer

    def term(self, text: str, phrase: bool, stemmed: bool) -> Node:
        found = tuple(query_words(text, self.dialect))
        if not found:
            return Ignored(text)
        if phrase or self.fields == frozenset({AUTHORS}):
            return Term(text, found, self.fields, stemmed)
        kept = [word for word in found if word not in STOP_WORDS]
        if not kept:
            return Ignored(text)
        single = [Term(word, (word,), self.fields, stemmed) for word in kept]
        return single[0] if len(single) == 1 else And(tuple(single))

    def _skip_range(self) -> None:
        """``"2015/01/01"[PDAT] : "2025/12/31"[PDAT]``: the second half of a neutral range."""
        token = self.peek()
        if token is not None and token.kind == "word" and token.text == ":":
            self.take()
            if self.peek() is not None and self.peek().kind in ("word", "phrase"):  # type: ignore[union-attr]
                self.take()
                self._drop_tag()

    def _drop_tag(self) -> None:
        token = self.peek()
        if token is not None and token.kind == "tag":
            self.take()


def _combine(operator: str, left: Node, right: Node) -> Node:
    if operator in ("NOT", "AND NOT"):
        right = Not(right)
    if operator == "OR":
        return Or((*_flatten(left, Or), *_flatten(right, Or)))
    return And((*_flatten(left, And), *_flatten(right, And)))


def _flatten(node: Node, kind: type[And] | type[Or]) -> tuple[Node, ...]:
    return node.items if isinstance(node, kind) else (node,)


def query_words(text: str, dialect: Dialect) -> list[str]:
    """Folded words of a query string, keeping wildcards ``*`` and ``?`` (PubMed: ``*`` only).

    OpenAlex's fuzzy and proximity suffixes (``~2``) are dropped: the mirror matches exactly.
    """
    folded = re.sub(r"~\d*", " ", fold(text))
    if dialect == "pubmed":
        folded = folded.replace("?", " ")
    return [word for word in _QUERY_TOKEN.findall(folded) if word.strip("*?")]


def parse_query(text: str, dialect: Dialect, fields: frozenset[str] = DEFAULT_FIELDS, stemmed: bool = True) -> Node:
    """The query tree of ``text`` in ``dialect``; QuerySyntaxError when it does not parse."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown query dialect '{dialect}' (one of {', '.join(DIALECTS)})")
    return _Parser(_lex(text, dialect), dialect, fields, stemmed).parse()


# ----------------------------------------------------------------------------- compiled queries


@dataclass(frozen=True)
class Query:
    """A parsed query; ``problem`` says why it fell back to the AND of its words, if it did."""

    text: str
    node: Node
    problem: str | None = None

    def matches(self, document: Document) -> bool:
        """Neutral-only queries (empty, or only date limits) keep every record."""
        return evaluate(self.node, document) is not False

    def select(self, documents: Sequence[Document]) -> list[int]:
        return [index for index, document in enumerate(documents) if self.matches(document)]


#: What the fallback drops: tags (even unterminated), upper-case field codes, operators, proximity.
_LEFTOVERS = re.compile(r"\[[^\]]*(?:\]|$)|\b[A-Z][A-Z-]*[A-Z]\s*\(|\b(?:AND|OR|NOT)\b|(?i:\b(?:W|PRE)/\d+)")


def fallback_node(text: str, dialect: Dialect, fields: frozenset[str] = DEFAULT_FIELDS) -> Node:
    """The AND of the words of ``text``, without tags, field codes, operators and stop words."""
    cleaned = _LEFTOVERS.sub(" ", text)
    kept = [word for word in query_words(cleaned, dialect) if word not in STOP_WORDS]
    if not kept:
        return Ignored(text)
    return And(tuple(Term(word, (word,), fields) for word in kept))


@functools.lru_cache(maxsize=512)
def compile_query(text: str, dialect: Dialect, fields: frozenset[str] = DEFAULT_FIELDS, stemmed: bool = True) -> Query:
    """Parse ``text``; an unparseable query becomes the AND of its words, and the fallback is logged.

    Cached, so a search paged over many requests is parsed, and its fallback logged, once.
    """
    try:
        return Query(text, parse_query(text, dialect, fields, stemmed))
    except QuerySyntaxError as error:
        log.warning("%s query %r does not parse (%s); searching for all of its words instead", dialect, text, error)
        return Query(text, fallback_node(text, dialect, fields), str(error))


@functools.lru_cache(maxsize=512)
def openalex_filter_query(key: str, value: str) -> Query | None:
    """A text-search ``filter=`` clause of OpenAlex (``title.search:...``), or None for other filters.

    ``|`` separates alternatives and a leading ``!`` negates, as in every OpenAlex filter;
    ``.search.no_stem`` keys match without stemming.
    """
    name = key.strip().lower()
    stemmed = not name.endswith(_NO_STEM)
    fields = OPENALEX_SEARCH_FILTERS.get(name.removesuffix(_NO_STEM))
    if fields is None:
        return None
    negated = value.startswith("!")
    parts = [compile_query(part, "openalex", fields, stemmed) for part in value.lstrip("!").split("|") if part.strip()]
    if not parts:
        return Query(value, Ignored(value))
    node: Node = parts[0].node if len(parts) == 1 else Or(tuple(part.node for part in parts))
    problem = next((part.problem for part in parts if part.problem), None)
    return Query(value, Not(node) if negated else node, problem)
