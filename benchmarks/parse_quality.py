"""Parse quality on real third-party PDFs: plain Docling native output beside hysem, in one run.

The documents are the real PDFs of ``../shared/realdata``: Docling's test PDFs with their
ground-truth Markdown (papers, reports, tables, code and formulas, right-to-left text) and
Docling's scanned OCR test pages (some rotated), and scans made in the run: the ground-truth
PDFs of at most ``SCAN_PAGES`` pages rendered to image-only PDFs (``--scans DIR`` keeps
them), checked against the same ground truth. A scan's ground truth is the OCR engines'
Markdown that agrees most with the others' (several engines read each scan; one of them
misreads the rotated pages), so no single engine sets the answer. Each ground
truth becomes text checks of three kinds, scored on the output's words (Markdown, case and
punctuation aside):

- present: a sentence (at most ``CHUNK`` words) of the ground truth is in the output
  (exactly, or fuzzily at ``FUZZY`` or more for OCR noise);
- absent: a running header or footer of the ground truth (its furniture layer) is not;
- order: two consecutive sentences of the ground truth come out in that order.

Plain Docling is ``NativePdfPipeline`` as it is (no OCR); hysem is ``parse_pdf`` with the
embedded default (reconstruction, OCR by the chosen engine). Results come per file, as checks
passed by plain Docling and by hysem for each kind of check (text found, order, furniture
out), in two tables: born-digital PDFs, and the rest (two-column pages generated in the run
with a sideways download stamp, whose text is known exactly; scans, real ones and those
rendered in the run), so that what OCR gains on scans cannot hide a loss on born-digital papers. A summary gives
the share of checks passed per kind of PDF. The goal: no born-digital file below plain
Docling, ``MARGIN`` more of all checks, and no file without text, unless hysem declares it
not readable (OCR read it with no confidence: handwriting, or a script whose language data
is not installed), which passes no check either way. A last table compares the
OCR engines on the scanned files: checks passed and pages per second.

    python benchmarks/parse_quality.py [--data DIR] [--ocr ENGINE] [--no-engines] [--scans DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel
from tabulate import tabulate

from hysem_assets.parsing.native import native_converter
from hysem_assets.parsing.ocr import engine_problem
from hysem_assets.parsing.options import OCR_ENGINES, ParseOptions
from hysem_assets.parsing.parse import parse_pdf
from hysem_assets.parsing.preflight import NO_READABLE_TEXT, open_problem
from hysem_assets_tests.parsing.builders import STAMP, column_lines, scanned_pdf, two_column_pdf

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"
#: HTML comments, table separator rows, formula and code fences, Markdown escapes and emphasis.
MARKUP = re.compile(r"<!--.*?-->|^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$|\$\$|```|\\(?=[_*#\[\]])", re.MULTILINE)
SENTENCE = re.compile(r"(?<=[.!?])\s+")
MIN_WORDS = 4
CHUNK = 12
FUZZY = 90
#: Ground-truth PDFs with at most this many pages are also scanned (rendered to images) in the run.
SCAN_PAGES = 2
#: Generated two-column pages: how many, and where their sideways stamp stands (x, y, font size).
GENERATED_PAGES = 2
STAMPS = {"left margin": (55, 200, 14), "gutter": (300, 200, 13)}
#: Hysem must pass this many more of all checks than plain Docling, and no fewer on any born-digital file.
MARGIN = 0.05
#: Kinds of check, in the tables' order: text found, reading order, furniture left out.
KINDS = ("present", "order", "absent")


def words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", MARKUP.sub(" ", text)).casefold()
    return re.findall(r"[^\W_]+", text)


@dataclass(frozen=True)
class Check:
    kind: str  # present, absent, order
    text: str
    then: str = ""  # order: the text that must come after ``text``


def _sentences(block: str) -> list[str]:
    """The block's sentences, long ones cut into even chunks of at most ``CHUNK`` words."""
    found = []
    for sentence in SENTENCE.split(block):
        tokens = words(sentence)
        size = math.ceil(len(tokens) / math.ceil(len(tokens) / CHUNK)) if tokens else 1
        found += [
            " ".join(tokens[k : k + size])
            for k in range(0, len(tokens), size)
            if len(tokens[k : k + size]) >= MIN_WORDS
        ]
    return found


def _blocks(markdown: str) -> list[str]:
    """Paragraphs, headings, list items and table cells of a ground-truth Markdown."""
    blocks: list[str] = []
    for part in re.split(r"\n\s*\n", markdown):
        for line in part.splitlines():
            if line.lstrip().startswith("|"):
                blocks.extend(cell for cell in line.strip().strip("|").split("|"))
        if not part.lstrip().startswith("|"):
            blocks.append(" ".join(line for line in part.splitlines() if not line.lstrip().startswith("|")))
    return [b for b in blocks if b.strip()]


def checks(markdown: str, furniture: list[str]) -> list[Check]:
    """The present, absent and order checks of one ground truth."""
    sentences = [s for block in _blocks(markdown) for s in _sentences(block)]
    found = [Check("present", s) for s in sentences]
    found += [Check("order", a, b) for a, b in zip(sentences, sentences[1:]) if a != b]
    body = " ".join(words(markdown))
    for text in dict.fromkeys(furniture):
        key = " ".join(words(text))
        if len(key.replace(" ", "")) >= 8 and key not in body:
            found.append(Check("absent", key))
    return found


def _position(needle: str, haystack: str) -> int | None:
    at = haystack.find(needle)
    if at >= 0:
        return at
    alignment = fuzz.partial_ratio_alignment(needle, haystack, score_cutoff=FUZZY)
    return alignment.dest_start if alignment else None


def passed(check: Check, output: str) -> bool:
    if check.kind == "absent":
        return check.text not in output
    first = _position(check.text, output)
    if check.kind == "present":
        return first is not None
    second = _position(check.then, output)
    return first is not None and second is not None and first < second


@dataclass(frozen=True)
class Document:
    pdf: Path
    checks: list[Check]
    kind: str  # text (born-digital), generated, rendered scan, scan

    @property
    def scanned(self) -> bool:
        return self.kind in ("rendered scan", "scan")


def documents(data: Path, scans: Path) -> list[Document]:
    """Every real PDF with ground truth, its checks, and whether it is a scan; rendered scans go to ``scans``."""
    found = []
    rendered = []
    truth_dir = data / "pdf_docling_groundtruth" / "groundtruth"
    for pdf in sorted((data / "pdf_docling_groundtruth" / "pdf").glob("*.pdf")):
        md, js = truth_dir / f"{pdf.stem}.md", truth_dir / f"{pdf.stem}.json"
        if not md.is_file():
            continue
        furniture = []
        if js.is_file():
            furniture = [
                t["text"]
                for t in json.loads(js.read_text(encoding="utf-8"))["texts"]
                if t.get("content_layer") == "furniture"
            ]
        found.append(Document(pdf, checks(md.read_text(encoding="utf-8"), furniture), "text"))
        if open_problem(pdf)[1] <= SCAN_PAGES:
            scan = scanned_pdf(pdf, scans / f"{pdf.stem}.scan.pdf", pages=SCAN_PAGES)
            rendered.append(Document(scan, found[-1].checks, "rendered scan"))
    found += rendered + generated(scans)
    ocr = data / "pdf_docling_ocr"
    for pdf in sorted((ocr / "pdf").glob("*.pdf")):
        truths = [t.read_text(encoding="utf-8") for t in sorted((ocr / "groundtruth").glob(f"*/{pdf.stem}.*.md"))]
        found.append(Document(pdf, checks(consensus(truths), []) if truths else [], "scan"))
    return found


def generated(folder: Path) -> list[Document]:
    """Two-column pages made in the run with a sideways download stamp (``STAMPS``), whose text is known exactly."""
    found = []
    for place, stamp in STAMPS.items():
        pdf = two_column_pdf(folder / f"two-column-stamp-{place}.pdf", pages=GENERATED_PAGES, stamp=stamp)
        lines = [
            line for page in range(GENERATED_PAGES) for column in (0, 1) for line in column_lines(10 * page + column)
        ]
        truth = "\n".join(line or "" for line in lines)  # a blank line ends each paragraph
        found.append(Document(pdf, checks(truth, [STAMP]), "generated"))
    return found


def consensus(readings: list[str]) -> str:
    """The reading closest, on average, to all the others (the only one when there is one)."""
    tokens = [words(reading) for reading in readings]
    return max(readings, key=lambda r: sum(Indel.normalized_similarity(words(r), other) for other in tokens))


def score(document: Document, markdown: str) -> dict[str, tuple[int, int]]:
    """Checks passed and checks, per kind of check."""
    output = " ".join(words(markdown))
    return {
        kind: (sum(passed(c, output) for c in mine), len(mine))
        for kind in KINDS
        for mine in [[c for c in document.checks if c.kind == kind]]
    }


def _all(tally: dict[str, tuple[int, int]]) -> tuple[int, int]:
    return sum(ok for ok, _ in tally.values()), sum(total for _, total in tally.values())


def _rate(ok: int, total: int) -> str:
    return f"{ok / total:.3f}" if total else "n/a"


def _pair(plain: tuple[int, int], hysem: tuple[int, int]) -> str:
    """ "plain -> hysem" for one kind of check, as counts (``-`` without checks of that kind)."""
    return f"{plain[0]} -> {hysem[0]} of {plain[1]}" if plain[1] else "-"


def engine_table(docs: list[Document]) -> list[list[str]]:
    """Checks passed and pages/s per OCR engine on the scanned PDFs."""
    rows = []
    for engine in (e for e in OCR_ENGINES if e != "off"):
        problem = engine_problem(engine)
        if problem:
            rows.append([engine, "not installed", "", problem])
            continue
        options = ParseOptions(ocr_engine=engine)
        parse_pdf(docs[0].pdf, options)  # warm-up: loading the engine is not per page
        ok = total = pages = 0
        started = time.perf_counter()
        for doc in docs:
            result = parse_pdf(doc.pdf, options)
            pages += result.pages
            good, count = _all(score(doc, result.markdown))
            ok, total = ok + good, total + count
        seconds = time.perf_counter() - started
        rows.append([engine, _rate(ok, total), f"{pages / seconds:.2f}", ""])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--ocr", choices=OCR_ENGINES, default=ParseOptions().ocr_engine, help="hysem's OCR engine")
    parser.add_argument("--no-engines", action="store_true", help="skip the OCR engine comparison")
    parser.add_argument("--scans", type=Path, help="keep the rendered scans in this folder")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temporary:
        scans = args.scans or Path(temporary)
        scans.mkdir(parents=True, exist_ok=True)
        return run(args, documents(args.data, scans))


def run(args: argparse.Namespace, docs: list[Document]) -> int:
    if not docs:
        print(f"no real PDFs under {args.data}", file=sys.stderr)
        return 1
    plain = native_converter(reconstructed=False)
    options = ParseOptions(ocr_engine=args.ocr)
    tallies: list[dict[str, dict[str, tuple[int, int]]]] = []
    empty = {"plain": 0, "hysem": 0}
    not_readable = []  # documents hysem declares not readable (OCR without confidence) rather than noise
    for doc in docs:
        parsed = parse_pdf(doc.pdf, options)
        outputs = {
            "plain": plain.convert(doc.pdf, raises_on_error=False).document.export_to_markdown(),
            "hysem": parsed.markdown,
        }
        if (parsed.error or "").startswith(NO_READABLE_TEXT):
            not_readable.append(doc.pdf.name)
        for name, markdown in outputs.items():
            empty[name] += not words(markdown) and not (name == "hysem" and doc.pdf.name in not_readable)
        tallies.append({name: score(doc, markdown) for name, markdown in outputs.items()})
    born_digital = [k for k, doc in enumerate(docs) if doc.kind == "text"]
    for title, picked in (
        ("Born-digital PDFs", born_digital),
        (
            "Generated two-column pages with a download stamp, born-digital PDFs rendered to images, and real scans",
            [k for k, doc in enumerate(docs) if doc.kind != "text"],
        ),
    ):
        print(f"\n{title} (checks passed, plain Docling -> hysem):\n")
        print(tabulate([_file_row(docs[k], tallies[k]) for k in picked], headers=FILE_HEADERS, tablefmt="github"))
    summary = [_category_row(kind, [t for doc, t in zip(docs, tallies) if doc.kind == kind]) for kind in CATEGORIES]
    summary.append(_category_row("all", tallies))
    print(f"\nBy kind of PDF (share of checks passed; hysem OCR: {args.ocr}):\n")
    print(tabulate(summary, headers=SUMMARY_HEADERS, tablefmt="github"))
    print(
        f"\nfiles without text: plain Docling {empty['plain']}, hysem {empty['hysem']} (of {len(docs)}); "
        f"declared not readable by hysem: {', '.join(not_readable) or 'none'}"
    )
    if not args.no_engines:
        scans = [doc for doc in docs if doc.scanned and doc.checks]
        print("\nOCR engines on the scanned PDFs:\n")
        print(tabulate(engine_table(scans), headers=["engine", "checks passed", "pages/s", "note"], tablefmt="github"))
    behind = [docs[k].pdf.name for k in born_digital if _all(tallies[k]["hysem"])[0] < _all(tallies[k]["plain"])[0]]
    overall = {name: _all(_summed([t[name] for t in tallies])) for name in ("plain", "hysem")}
    gain = overall["hysem"][0] / overall["hysem"][1] - overall["plain"][0] / overall["plain"][1]
    good = not behind and gain >= MARGIN and empty["hysem"] == 0
    print(
        f"\nhysem - plain: {gain:+.3f} of all checks "
        f"(hysem / plain {overall['hysem'][0] / max(overall['plain'][0], 1):.2f}); born-digital files below plain Docling: "
        f"{', '.join(behind) or 'none'}; "
        + ("goal met" if good else f"goal NOT met (+{MARGIN:.2f}, no born-digital file below, no file without text)")
    )
    return 0 if good else 1


FILE_HEADERS = ["document", "text found", "order", "furniture out", "all checks", "hysem - plain"]
SUMMARY_HEADERS = ["PDFs", "files", "checks", *(f"{k} plain / hysem" for k in ("text found", "order", "furniture out"))]
SUMMARY_HEADERS += ["all plain / hysem"]
CATEGORIES = {
    "text": "born-digital",
    "generated": "generated two-column",
    "rendered scan": "rendered scans",
    "scan": "real scans",
}


def _summed(tallies: list[dict[str, tuple[int, int]]]) -> dict[str, tuple[int, int]]:
    return {kind: (sum(t[kind][0] for t in tallies), sum(t[kind][1] for t in tallies)) for kind in KINDS}


def _file_row(doc: Document, tally: dict[str, dict[str, tuple[int, int]]]) -> list[object]:
    plain, hysem = tally["plain"], tally["hysem"]
    (plain_ok, total), (hysem_ok, _) = _all(plain), _all(hysem)
    return [
        doc.pdf.name,
        *(_pair(plain[kind], hysem[kind]) for kind in KINDS),
        _pair((plain_ok, total), (hysem_ok, total)),
        f"{hysem_ok - plain_ok:+d}",
    ]


def _category_row(kind: str, tallies: list[dict[str, dict[str, tuple[int, int]]]]) -> list[object]:
    plain = _summed([t["plain"] for t in tallies])
    hysem = _summed([t["hysem"] for t in tallies])
    cells = [f"{_rate(*plain[k])} / {_rate(*hysem[k])}" for k in KINDS]
    return [
        CATEGORIES.get(kind, kind),
        len(tallies),
        _all(plain)[1],
        *cells,
        f"{_rate(*_all(plain))} / {_rate(*_all(hysem))}",
    ]


if __name__ == "__main__":
    sys.exit(main())
