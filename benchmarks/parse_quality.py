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
embedded default (reconstruction, OCR by the chosen engine). A second table compares the OCR
engines on the scanned files: checks passed and pages per second.

    python benchmarks/parse_quality.py [--data DIR] [--ocr ENGINE] [--no-engines] [--scans DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel
from tabulate import tabulate

from hysem_assets.parsing import ParseOptions, parse_pdf
from hysem_assets.parsing.native import native_converter
from hysem_assets.parsing.ocr import OCR_ENGINES, engine_problem
from hysem_assets.parsing.preflight import open_problem
from hysem_assets_tests.parsing.builders import scanned_pdf

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"
#: HTML comments, table separator rows, formula and code fences, Markdown escapes and emphasis.
MARKUP = re.compile(r"<!--.*?-->|^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$|\$\$|```|\\(?=[_*#\[\]])", re.MULTILINE)
SENTENCE = re.compile(r"(?<=[.!?])\s+")
MIN_WORDS = 4
CHUNK = 12
FUZZY = 90
#: Ground-truth PDFs with at most this many pages are also scanned (rendered to images) in the run.
SCAN_PAGES = 2
#: Hysem must pass this many more of the checks than plain Docling.
MARGIN = 0.10


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
    kind: str  # text, rendered scan, scan

    @property
    def scanned(self) -> bool:
        return self.kind != "text"


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
    found += rendered
    ocr = data / "pdf_docling_ocr"
    for pdf in sorted((ocr / "pdf").glob("*.pdf")):
        truths = [t.read_text(encoding="utf-8") for t in sorted((ocr / "groundtruth").glob(f"*/{pdf.stem}.*.md"))]
        found.append(Document(pdf, checks(consensus(truths), []) if truths else [], "scan"))
    return found


def consensus(readings: list[str]) -> str:
    """The reading closest, on average, to all the others (the only one when there is one)."""
    tokens = [words(reading) for reading in readings]
    return max(readings, key=lambda r: sum(Indel.normalized_similarity(words(r), other) for other in tokens))


def score(document: Document, markdown: str) -> tuple[int, int]:
    output = " ".join(words(markdown))
    return sum(passed(c, output) for c in document.checks), len(document.checks)


def _rate(ok: int, total: int) -> str:
    return f"{ok / total:.3f}" if total else "n/a"


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
            good, count = score(doc, result.markdown)
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
    rows = []
    totals = {"plain": [0, 0], "hysem": [0, 0]}
    by_kind = {(kind, name): [0, 0] for kind in ("text", "rendered scan", "scan") for name in totals}
    per_file: dict[str, list[float]] = {"plain": [], "hysem": []}
    empty = {"plain": 0, "hysem": 0}
    for doc in docs:
        outputs = {
            "plain": plain.convert(doc.pdf, raises_on_error=False).document.export_to_markdown(),
            "hysem": parse_pdf(doc.pdf, options).markdown,
        }
        row = [doc.pdf.name + (" (scan)" if doc.kind == "scan" else ""), len(doc.checks)]
        for name, markdown in outputs.items():
            empty[name] += not words(markdown)
            ok, total = score(doc, markdown)
            for tally in (totals[name], by_kind[doc.kind, name]):
                tally[0] += ok
                tally[1] += total
            if total:
                per_file[name].append(ok / total)
            row.append(_rate(ok, total))
        rows.append(row)
    overall = {name: ok / total for name, (ok, total) in totals.items()}
    means = {name: statistics.fmean(values) for name, values in per_file.items()}
    for kind in ("text", "rendered scan", "scan"):
        (plain_ok, count), (hysem_ok, _) = by_kind[kind, "plain"], by_kind[kind, "hysem"]
        rows.append([f"checks on {kind} PDFs", count, _rate(plain_ok, count), _rate(hysem_ok, count)])
    rows.append(["all checks", totals["plain"][1], f"{overall['plain']:.3f}", f"{overall['hysem']:.3f}"])
    rows.append(["mean per file", "", f"{means['plain']:.3f}", f"{means['hysem']:.3f}"])
    print(
        tabulate(rows, headers=["document", "checks", "plain Docling", f"hysem (ocr: {args.ocr})"], tablefmt="github")
    )
    print(f"\nfiles without text: plain Docling {empty['plain']}, hysem {empty['hysem']} (of {len(docs)})")
    if not args.no_engines:
        scans = [doc for doc in docs if doc.scanned and doc.checks]
        print("\nOCR engines on the scanned PDFs:\n")
        print(tabulate(engine_table(scans), headers=["engine", "checks passed", "pages/s", "note"], tablefmt="github"))
    good = (
        overall["hysem"] >= overall["plain"] + MARGIN
        and means["hysem"] >= means["plain"] + MARGIN
        and empty["hysem"] == 0
    )
    print(
        f"\nhysem - plain: {overall['hysem'] - overall['plain']:+.3f} of all checks, "
        f"{means['hysem'] - means['plain']:+.3f} per file; "
        + ("goal met" if good else f"goal NOT met (+{MARGIN:.2f} and no file without text)")
    )
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
