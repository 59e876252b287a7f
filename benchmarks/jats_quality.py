"""JATS route quality on 50 real PubMed Central articles: ``parse_jats`` beside a plain ``itertext()`` baseline.

The articles are ``../shared/realdata/europepmc/jats/PMC<id>.nxml``; their ground truth is the
plain text the Evidence Inference corpus wrote of the same articles,
``evidence_inference/txt/PMC<id>.txt`` (``TITLE:``, ``ABSTRACT.<PART>:`` and ``BODY.<HEADING>:``
lines, each part's text below its line). The body is everything from the first ``BODY.`` line
on, heading lines left out. Per article, in one run:

- token recall: the share of the ground-truth body's tokens (words and numbers, lower case,
  counted with repeats) found in the output's body;
- token precision: the share of the output body's tokens found in the ground truth's body;
- token precision with the Markdown tables left out (the ground truth keeps few table
  cells: a table's numbers count against the JATS route's precision);
- heading recall: the share of the ground truth's ``BODY.`` headings that are headings of the
  output (label and title, case and punctuation aside).

The JATS route's body is its Markdown without the title, the abstract(s) and ``## References``
(Markdown syntax and escapes aside); back matter such as acknowledgements stays, as the
ground truth keeps competing interests and the pre-publication history in its body. The
baseline is all text of ``<body>`` by ``itertext()``: no headings, no back matter, and words
of adjacent elements run together. The PDF route (``parse_pdf``) would be compared on PDFs of
the same articles; none is in ``realdata`` (``evidence_inference`` holds text only, and
``pdf_docling_groundtruth`` Docling's own test PDFs), so the run says so instead.

    python benchmarks/jats_quality.py [--data DIR] [--per-article]
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from lxml import etree
from tabulate import tabulate

from hysem_assets.parsing.jats import parse_jats

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"
_TOKEN = re.compile(r"\w+")
_GT_HEADING = re.compile(r"^(TITLE|ABSTRACT(?:\.[^\n]*)?|BODY\.[^\n]*):\s*$")
_SAFE = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def tokens(text: str) -> Counter[str]:
    return Counter(t.lower() for t in _TOKEN.findall(text))


def heading_key(text: str) -> str:
    return " ".join(_TOKEN.findall(text.lower()))


@dataclass
class Truth:
    body: Counter[str]
    headings: list[str]


def ground_truth(path: Path) -> Truth:
    """The body's tokens and the ``BODY.`` headings of an Evidence Inference article text."""
    body: list[str] = []
    headings: list[str] = []
    in_body = False
    for line in path.read_text(encoding="utf-8").splitlines():
        heading = _GT_HEADING.match(line)
        if heading:
            in_body = heading.group(1).startswith("BODY.")
            if in_body:
                headings.append(heading.group(1)[len("BODY.") :])
        elif in_body:
            body.append(line)
    return Truth(tokens("\n".join(body)), [heading_key(h) for h in headings if heading_key(h)])


def unmark(markdown: str) -> str:
    """Markdown as words: escapes, entities and table rules aside."""
    return html.unescape(re.sub(r"\\(?=[_*#\[\]|])", "", markdown))


def jats_body(markdown: str, abstracts: int) -> tuple[str, list[str]]:
    """The Markdown's body (no title, abstracts or references) and all its headings below the title."""
    blocks = re.split(r"(?m)^(?=## )", markdown)
    kept = []
    seen = 0
    for block in blocks:
        if not block.startswith("## "):
            continue  # the title and anything before the first section
        heading = block.splitlines()[0][3:].strip()
        if seen < abstracts:
            seen += 1
            continue
        if heading == "References":
            continue
        kept.append(block)
    text = "".join(kept)
    headings = [unmark(m.group(1)) for m in re.finditer(r"(?m)^#{2,6} (.+)$", text)]
    return unmark(text), headings


@dataclass
class Score:
    recall: float
    precision: float
    headings: float


def score(truth: Truth, text: str, headings: list[str]) -> Score:
    found = tokens(text)
    overlap = sum((truth.body & found).values())
    keys = {heading_key(h) for h in headings}
    return Score(
        recall=overlap / max(sum(truth.body.values()), 1),
        precision=overlap / max(sum(found.values()), 1),
        headings=sum(h in keys for h in truth.headings) / max(len(truth.headings), 1),
    )


@dataclass
class Row:
    article: str
    publisher: str
    gt_tokens: int
    gt_headings: int
    jats: Score
    baseline: Score
    status: str
    ms: float
    # token totals for micro averages: JATS hits, JATS tokens, baseline hits, baseline tokens,
    # JATS hits and tokens with the Markdown tables left out
    overlaps: tuple[int, int, int, int, int, int]


def measure(nxml: Path, txt: Path) -> Row:
    xml = nxml.read_bytes()
    truth = ground_truth(txt)
    started = time.perf_counter()
    doc = parse_jats(xml, str(nxml))
    ms = (time.perf_counter() - started) * 1000
    root = etree.fromstring(xml, _SAFE)
    abstracts = len(root.findall("front/article-meta/abstract"))
    text, headings = jats_body(doc.markdown, abstracts) if doc.status == "jats" else ("", [])
    body = root.find("body")
    plain = "".join(body.itertext()) if body is not None else ""
    jats, baseline = score(truth, text, headings), score(truth, plain, [])
    found_j, found_b = tokens(text), tokens(plain)
    found_t = tokens(re.sub(r"(?m)^\|.*$", "", text))
    publisher = root.findtext("front/journal-meta/publisher/publisher-name") or "?"
    return Row(
        nxml.stem,
        " ".join(publisher.split()),
        sum(truth.body.values()),
        len(truth.headings),
        jats,
        baseline,
        doc.status,
        ms,
        (
            sum((truth.body & found_j).values()),
            sum(found_j.values()),
            sum((truth.body & found_b).values()),
            sum(found_b.values()),
            sum((truth.body & found_t).values()),
            sum(found_t.values()),
        ),
    )


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


ARTICLE_HEADERS = [
    "article",
    "publisher",
    "gt tokens",
    "JATS recall",
    "base recall",
    "JATS precision",
    "base precision",
    "JATS headings",
    "gt headings",
    "ms",
]


def _article_row(row: Row) -> list[object]:
    return [
        row.article,
        row.publisher[:24],
        row.gt_tokens,
        _pct(row.jats.recall),
        _pct(row.baseline.recall),
        _pct(row.jats.precision),
        _pct(row.baseline.precision),
        _pct(row.jats.headings),
        row.gt_headings,
        f"{row.ms:.0f}",
    ]


SUMMARY_HEADERS = [
    "group",
    "articles",
    "JATS recall",
    "base recall",
    "JATS precision",
    "JATS prec. no tables",
    "base precision",
    "JATS headings",
    "base headings",
    "status jats",
]


def _summary(name: str, rows: list[Row]) -> list[object]:
    """Token recall and precision over all tokens of the group (micro), heading recall over all headings."""
    truth = sum(r.gt_tokens for r in rows)
    jats_hit, jats_all, base_hit, base_all, table_hit, table_all = (sum(r.overlaps[k] for r in rows) for k in range(6))
    headings = sum(r.gt_headings for r in rows)
    found = sum(r.jats.headings * r.gt_headings for r in rows)
    return [
        name,
        len(rows),
        _pct(jats_hit / max(truth, 1)),
        _pct(base_hit / max(truth, 1)),
        _pct(jats_hit / max(jats_all, 1)),
        _pct(table_hit / max(table_all, 1)),
        _pct(base_hit / max(base_all, 1)),
        _pct(found / max(headings, 1)),
        _pct(0.0),
        f"{sum(r.status == 'jats' for r in rows)}/{len(rows)}",
    ]


def _deciles(rows: list[Row]) -> list[list[object]]:
    """Articles by the JATS route's token recall, lowest tenth first."""
    ranked = sorted(rows, key=lambda r: r.jats.recall)
    size = max(len(ranked) // 10, 1)
    return [
        _summary(f"decile {k // size + 1} ({ranked[k].article}..)", ranked[k : k + size])
        for k in range(0, len(ranked), size)
    ]


def pdf_note(data: Path, ids: list[str]) -> str:
    pdfs = list((data / "evidence_inference").rglob("*.pdf")) + list((data / "pdf_docling_groundtruth").rglob("*.pdf"))
    matching = [p for p in pdfs if any(i.lower() in p.name.lower() for i in ids)]
    if matching:
        return f"PDFs of these articles found ({len(matching)}) but not compared here: {', '.join(p.name for p in matching)}"
    return (
        f"PDF route: not measured. None of the {len(pdfs)} PDFs under evidence_inference/ and "
        "pdf_docling_groundtruth/ is one of these articles (evidence_inference holds their text only)."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--per-article", action="store_true", help="a row per article (else per decile)")
    args = parser.parse_args(argv)
    articles = sorted((args.data / "europepmc" / "jats").glob("PMC*.nxml"))
    pairs = [(a, args.data / "evidence_inference" / "txt" / f"{a.stem}.txt") for a in articles]
    missing = [a.stem for a, t in pairs if not t.is_file()]
    if not articles or missing:
        print(f"no JATS articles, or no ground truth for {missing}, under {args.data}", file=sys.stderr)
        return 1
    rows = [measure(a, t) for a, t in pairs]
    if args.per_article:
        print(tabulate([_article_row(r) for r in rows], headers=ARTICLE_HEADERS, tablefmt="github"))
    else:
        print(tabulate(_deciles(rows), headers=SUMMARY_HEADERS, tablefmt="github"))
    print()
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.publisher, []).append(row)
    summary = [_summary(name, group) for name, group in sorted(groups.items())] + [_summary("all", rows)]
    print(tabulate(summary, headers=SUMMARY_HEADERS, tablefmt="github"))
    mean = sum(r.ms for r in rows) / len(rows)
    print(f"\nJATS route: {mean:.0f} ms per article on average. Baseline headings: itertext() keeps none.")
    print(pdf_note(args.data, [a.stem for a in articles]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
