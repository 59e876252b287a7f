"""Bibliography exports of the corpus: CSL-JSON, BibTeX, RIS, and a table of works (CSV, XLSX).

These are the offline form of the library (the default profile has no Zotero): files a
reference manager or LaTeX can import. The BibTeX writer is self-contained so the output does
not depend on which major version of bibtexparser happens to be installed. Every export of a
part of the corpus (``only``: the review's included studies) keeps the citation keys the whole
corpus gives its works, so a key cited in a manuscript is the same in every export and in the
``library`` table.
"""

from __future__ import annotations

import itertools
import json
import re
import string
import unicodedata
from collections import defaultdict
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

import pandas as pd
import rispy

from hysem_assets.core.spreadsheets import write_csv, write_xlsx
from hysem_assets.library.csl import to_csl_item
from hysem_assets.library.work import Kind, Person, Work

#: Entry type and the field that names the container, per kind of work.
BIBTEX_TYPES: dict[Kind, tuple[str, str]] = {
    "article": ("article", "journal"),
    "chapter": ("incollection", "booktitle"),
    "book": ("book", "publisher"),
    "conference": ("inproceedings", "booktitle"),
    "preprint": ("misc", "howpublished"),
    "thesis": ("phdthesis", "school"),
    "report": ("techreport", "institution"),
    "dataset": ("misc", "howpublished"),
    "other": ("misc", "howpublished"),
}

#: RIS reference type per kind of work (preprints are unpublished works in RIS).
RIS_TYPES: dict[Kind, str] = {
    "article": "JOUR",
    "chapter": "CHAP",
    "book": "BOOK",
    "conference": "CPAPER",
    "preprint": "UNPB",
    "thesis": "THES",
    "report": "RPRT",
    "dataset": "DATA",
    "other": "GEN",
}

_KEY_STOP_WORDS = frozenset({"a", "an", "the", "on", "of", "in", "and", "for", "to", "with", "at", "by", "from"})

# Letters without a Unicode decomposition that plain LaTeX still knows by name.
_LATEX_LETTERS = {
    "ø": r"{\o}",
    "Ø": r"{\O}",
    "æ": r"{\ae}",
    "Æ": r"{\AE}",
    "œ": r"{\oe}",
    "Œ": r"{\OE}",
    "ß": r"{\ss}",
    "ł": r"{\l}",
    "Ł": r"{\L}",
    "ı": r"{\i}",
    "–": "--",
    "—": "---",
}
_ASCII_LETTERS = {
    "ø": "o",
    "Ø": "O",
    "æ": "ae",
    "Æ": "AE",
    "œ": "oe",
    "Œ": "OE",
    "ß": "ss",
    "ł": "l",
    "Ł": "L",
    "ı": "i",
    "đ": "d",
    "Đ": "D",
}
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",  # not \{: BibTeX counts braces whatever precedes them
    "}": r"\textbraceright{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
# Combining marks and the LaTeX accent command that draws each.
_LATEX_ACCENTS = {
    "\u0300": "`",
    "\u0301": "'",
    "\u0302": "^",
    "\u0303": "~",
    "\u0304": "=",
    "\u0306": "u",
    "\u0307": ".",
    "\u0308": '"',
    "\u030a": "r",
    "\u030b": "H",
    "\u030c": "v",
    "\u0323": "d",
    "\u0327": "c",
    "\u0328": "k",
    "\u0331": "b",
}


#: Columns of :func:`works_table`, in order.
TABLE_COLUMNS = (
    "cluster_id", "bibtex_key", "type", "authors", "title", "container", "year", "volume", "issue", "pages",
    "doi", "pmid", "url", "language", "abstract",
)  # fmt: skip
#: What :func:`write_works` writes.
EXPORT_FORMATS = ("bibtex", "ris", "csv", "xlsx")


def _works(corpus: pd.DataFrame) -> list[Work]:
    return [Work.from_row(row) for row in corpus.to_dict("records")]


def _chosen(all_works: list[Work], only: Collection[str] | None) -> list[Work]:
    """The works whose cluster id is in ``only`` (all of them without it), in the corpus's order."""
    if only is None:
        return all_works
    wanted = set(only)
    return [work for work in all_works if work.id in wanted]


def csl_json(corpus: pd.DataFrame) -> str:
    """The corpus as a CSL-JSON array (what Zotero, Pandoc and citeproc read)."""
    items = [to_csl_item(row) for row in corpus.to_dict("records")]
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


def bibtex_keys(corpus: pd.DataFrame) -> dict[str, str]:
    """Citation key per cluster id: surname + year + first title word, made unique.

    Keys that collide all get a suffix (``a``, ``b``, ...) given in cluster-id order, so the
    same corpus always gets the same keys whatever order its rows come in. The title word
    skips articles and short prepositions, which would make poor keys.
    """
    return _unique_keys(_works(corpus))


def bibtex(corpus: pd.DataFrame, only: Collection[str] | None = None) -> str:
    """The corpus (or its works whose cluster id is in ``only``) as BibTeX: LaTeX-escaped values, accents as
    LaTeX commands, UTF-8 otherwise."""
    all_works = _works(corpus)
    keys = _unique_keys(all_works)
    return "\n".join(_bibtex_entry(work, keys[work.id]) for work in _chosen(all_works, only))


def ris(corpus: pd.DataFrame, notes: Mapping[str, list[str]] | None = None, only: Collection[str] | None = None) -> str:
    """The corpus (or its works whose cluster id is in ``only``) as RIS; every value sits on one line, as RIS
    readers require. ``notes``: cluster id -> notes (``N1``) of its record, such as a screening decision."""
    records = []
    for work in _chosen(_works(corpus), only):
        record = _ris_record(work)
        if notes and notes.get(work.id):
            record["notes"] = [_one_line(note) for note in notes[work.id]]
        records.append(record)
    return rispy.dumps(records, implementation=_RisWriter)


def works_table(corpus: pd.DataFrame, only: Collection[str] | None = None) -> pd.DataFrame:
    """One row per work (those whose cluster id is in ``only``, without it all) with the fields the BibTeX and
    RIS exports carry, read the same way; ``authors`` is a list of "Family, Given" names."""
    all_works = _works(corpus)
    keys = _unique_keys(all_works)
    rows = [
        {
            "cluster_id": work.id,
            "bibtex_key": keys[work.id],
            "type": work.kind,
            "authors": [person.inverted() for person in work.authors],
            "title": work.title,
            "container": work.container,
            "year": work.year,
            "volume": work.volume,
            "issue": work.issue,
            "pages": work.pages,
            "doi": work.doi,
            "pmid": work.pmid,
            "url": work.url,
            "language": work.language,
            "abstract": work.abstract,
        }
        for work in _chosen(all_works, only)
    ]
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS)).astype({"year": "Int64"})


def write_works(corpus: pd.DataFrame, fmt: str, path: Path, only: Collection[str] | None = None) -> int:
    """Write the corpus (or its works whose cluster id is in ``only``) to ``path`` in one of
    :data:`EXPORT_FORMATS`: a bibliography (BibTeX, RIS) or a table of works (CSV, XLSX: lists as their
    items, no cell a formula); returns how many works it wrote."""
    if fmt == "bibtex":
        path.write_text(bibtex(corpus, only), encoding="utf-8")
    elif fmt == "ris":
        path.write_text(ris(corpus, only=only), encoding="utf-8")
    elif fmt == "csv":
        write_csv(works_table(corpus, only), path)
    elif fmt == "xlsx":
        write_xlsx(works_table(corpus, only), path, "Works")
    else:
        raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}")
    return len(corpus) if only is None else int(corpus["cluster_id"].astype(str).isin(set(only)).sum())


def write_exports(corpus: pd.DataFrame, directory: Path, stem: str) -> dict[str, Path]:
    """Write ``<stem>.json`` (CSL-JSON), ``<stem>.bib`` and ``<stem>.ris``; return the paths by format."""
    directory.mkdir(parents=True, exist_ok=True)
    outputs = {"csl-json": (".json", csl_json), "bibtex": (".bib", bibtex), "ris": (".ris", ris)}
    paths: dict[str, Path] = {}
    for name, (suffix, render) in outputs.items():
        paths[name] = directory / f"{stem}{suffix}"
        paths[name].write_text(render(corpus), encoding="utf-8")
    return paths


def _unique_keys(all_works: list[Work]) -> dict[str, str]:
    groups: dict[str, list[str]] = defaultdict(list)
    for work in all_works:
        groups[_base_key(work)].append(work.id)
    keys: dict[str, str] = {}
    taken = set(groups)
    for base, ids in groups.items():
        if len(ids) == 1:
            keys[ids[0]] = base
            continue
        suffixes = _suffixes()
        for cluster_id in sorted(ids):
            key = base + next(suffixes)
            while key in taken:
                key = base + next(suffixes)
            taken.add(key)
            keys[cluster_id] = key
    return {work.id: keys[work.id] for work in all_works}


def _suffixes() -> Iterator[str]:
    """a, b, ..., z, aa, ab, ...: disambiguation letters that never run out."""
    for width in itertools.count(1):
        for letters in itertools.product(string.ascii_lowercase, repeat=width):
            yield "".join(letters)


def _base_key(work: Work) -> str:
    first = work.authors[0] if work.authors else None
    name = (first.family or (first.literal or "").split(" ")[0]) if first else ""
    words = [word for word in re.split(r"[^a-z0-9]+", _ascii(work.title or "").lower()) if word]
    word = next((w for w in words if w not in _KEY_STOP_WORDS), words[0] if words else "")
    surname = re.sub(r"[^a-z0-9]", "", _ascii(name).lower()) or "anon"
    return f"{surname}{work.year or 'nd'}{word}"


def _ascii(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", "".join(_ASCII_LETTERS.get(char, char) for char in value))
    return decomposed.encode("ascii", "ignore").decode("ascii")


def _bibtex_entry(work: Work, key: str) -> str:
    entry_type, container_field = BIBTEX_TYPES[work.kind]
    # doi and url are verbatim fields; the URL is left out when a DOI already links the work.
    verbatim = {"doi": _verbatim(work.doi), "url": _verbatim(None if work.doi else work.url)}
    fields = {
        "author": " and ".join(_bibtex_name(person) for person in work.authors),
        "title": _protect_case(work.title) if work.title else None,
        container_field: latex(work.container) if work.container else None,
        "year": str(work.year) if work.year else None,
        "volume": latex(work.volume) if work.volume else None,
        "number": latex(work.issue) if work.issue else None,
        "pages": latex(work.pages).replace("-", "--") if work.pages else None,
        "note": "Preprint" if work.kind == "preprint" else None,
        **verbatim,
        "pmid": latex(work.pmid) if work.pmid else None,
        "language": latex(work.language) if work.language else None,
        "abstract": latex(_one_line(work.abstract)) if work.abstract else None,
    }
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields.items() if value)
    return f"@{entry_type}{{{key},\n{body}\n}}\n"


def _verbatim(value: str | None) -> str | None:
    """A DOI or URL as a verbatim field: braces percent-encoded (resolvers read them so), as an entry needs
    balanced braces."""
    return value.replace("{", "%7B").replace("}", "%7D") if value else None


def _bibtex_name(person: Person) -> str:
    if person.literal:  # braces keep BibTeX from splitting a collective into first and last names
        return "{" + latex(person.literal) + "}"
    parts = [person.family, person.suffix, person.given]
    return ", ".join(latex(part) for part in parts if part)


def _protect_case(title: str) -> str:
    """Brace words like "LASSO" or "PM2.5" so BibTeX styles that lowercase titles keep them."""
    protected = []
    for word in title.split(" "):
        escaped = latex(word)
        protected.append("{" + escaped + "}" if any(char.isupper() for char in word[1:]) else escaped)
    return " ".join(protected)


def latex(value: str) -> str:
    """Escape LaTeX specials and spell accented Latin letters as accent commands (``é`` -> ``{\\'{e}}``).

    Characters with no LaTeX spelling (Greek, CJK) stay as UTF-8, which BibTeX passes through.
    """
    out: list[str] = []
    for cluster in re.findall(r".[\u0300-\u036f]*", unicodedata.normalize("NFD", value), re.S):
        base, marks = cluster[0], cluster[1:]
        if marks and base.isascii() and all(mark in _LATEX_ACCENTS for mark in marks):
            text = _LATEX_SPECIALS.get(base, base)
            for mark in marks:
                text = f"\\{_LATEX_ACCENTS[mark]}{{{text}}}"
            out.append("{" + text + "}")
        elif marks:
            out.append(unicodedata.normalize("NFC", cluster))
        else:
            out.append(_LATEX_SPECIALS.get(base) or _LATEX_LETTERS.get(base, base))
    return "".join(out)


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _ris_record(work: Work) -> dict[str, object]:
    first_page, last_page = work.page_bounds
    record: dict[str, object] = {
        "type_of_reference": RIS_TYPES[work.kind],
        "id": work.id,
        "authors": [person.inverted() for person in work.authors],
        "title": work.title,
        "secondary_title": work.container,
        "year": str(work.year) if work.year else None,
        "volume": work.volume,
        "number": work.issue,
        "start_page": first_page,
        "end_page": last_page,
        "doi": work.doi,
        "accession_number": work.pmid,  # RIS "AN": a PMID is PubMed's accession number
        "urls": [work.url] if work.url else None,  # a record for import: keep the open-access link
        "language": work.language,
        "abstract": work.abstract,
    }
    return {
        name: [_one_line(v) for v in value] if isinstance(value, list) else _one_line(value)
        for name, value in record.items()
        if value
    }


class _RisWriter(rispy.RisWriter):
    """RIS without the ``1.``, ``2.`` counter lines rispy writes before records (not RIS)."""

    def set_header(self, count: int) -> str:
        return ""
