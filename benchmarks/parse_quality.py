"""Parse quality against Docling's ground-truth Markdown: plain native output vs hysem's reconstruction.

For every PDF under ``pdf/`` with a ``groundtruth/<name>.md`` the script parses the file
twice without any model weights: with Docling's ``NativePdfPipeline`` as it is (one
paragraph per text line, in parser order) and with hysem's reconstruction on top of it.
Both are compared with the ground truth on three measures, printed side by side:

- text: word-level similarity of the normalized text (Indel similarity, i.e. 2·LCS/(m+n)),
  Markdown syntax, case and punctuation removed;
- headings: share of ground-truth headings that come out as headings (fuzzy match >= 80,
  word order aside);
- order: share of ground-truth sentences found in the output in the right order (the
  longest run of found sentences whose output positions increase, over all sentences that
  can be placed; see ``reading_order``).

    python benchmarks/parse_quality.py [--data DIR]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
import unicodedata
from bisect import bisect_left
from collections import defaultdict
from pathlib import Path

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel
from tabulate import tabulate

from hysem_assets.parsing.native import native_converter

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata" / "pdf_docling_groundtruth"
#: HTML comments, table separator rows, formula and code fences, Markdown escapes.
MARKUP = re.compile(r"<!--.*?-->|^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$|\$\$|```|\\(?=[_*#\[\]])",
                    re.MULTILINE)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
SHINGLE = 3


def words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", MARKUP.sub(" ", text)).lower()
    return re.findall(r"[^\W_]+", text)


def text_similarity(truth: str, output: str) -> float:
    return Indel.normalized_similarity(words(truth), words(output))


def headings(markdown: str) -> list[str]:
    return [" ".join(words(line.lstrip("#"))) for line in markdown.splitlines() if line.startswith("#")]


def heading_recall(truth: str, output: str) -> float | None:
    wanted, found = headings(truth), headings(output)
    if not wanted:
        return None
    return sum(any(fuzz.token_sort_ratio(w, f) >= 80 for f in found) for w in wanted) / len(wanted)


def _shingles(tokens: list[str]) -> list[tuple[str, ...]]:
    return [tuple(tokens[k:k + SHINGLE]) for k in range(len(tokens) - SHINGLE + 1)]


def _unique_positions(tokens: list[str]) -> dict[tuple[str, ...], int]:
    """Position of every shingle that occurs exactly once: repeated text has no single place."""
    positions: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for k, gram in enumerate(_shingles(tokens)):
        positions[gram].append(k)
    return {gram: found[0] for gram, found in positions.items() if len(found) == 1}


def _longest_increasing(values: list[float]) -> int:
    tails: list[float] = []
    for value in values:
        k = bisect_left(tails, value)
        tails[k:k + 1] = [value]
    return len(tails)


def reading_order(truth: str, output: str) -> float:
    """Share of the truth's sentences found in the output in order, placed by their unique shingles.

    A sentence is placed at the median output position of its shingles that occur once in
    the truth and once in the output; it counts as found when at least a third of its
    unique shingles are. Sentences made only of repeated text cannot be placed and are left out.
    """
    sentences = [words(part) for part in SENTENCE.split(MARKUP.sub(" ", truth))]
    unique_truth = _unique_positions(words(truth))
    unique_output = _unique_positions(words(output))
    placeable = 0
    positions: list[float] = []
    for sentence in sentences:
        grams = [g for g in _shingles(sentence) if g in unique_truth]
        if not grams:
            continue
        placeable += 1
        hits = [unique_output[g] for g in grams if g in unique_output]
        if len(hits) * 3 >= len(grams):
            positions.append(statistics.median(hits))
    return _longest_increasing(positions) / placeable if placeable else 1.0


def measure(truth: str, output: str) -> tuple[float, float | None, float]:
    return text_similarity(truth, output), heading_recall(truth, output), reading_order(truth, output)


def _mean(values: list[float | None]) -> float:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else float("nan")


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    truth_of = {pdf: args.data / "groundtruth" / f"{pdf.stem}.md" for pdf in (args.data / "pdf").glob("*.pdf")}
    pdfs = sorted(pdf for pdf, truth in truth_of.items() if truth.is_file())
    if not pdfs:
        print(f"no PDFs with ground truth under {args.data}", file=sys.stderr)
        return 1
    plain, hysem = native_converter(reconstructed=False), native_converter(reconstructed=True)
    rows, scores = [], {"plain": [], "hysem": []}
    seconds = {"plain": 0.0, "hysem": 0.0}
    for pdf in pdfs:
        truth = truth_of[pdf].read_text(encoding="utf-8")
        row = [pdf.stem]
        for name, converter in (("plain", plain), ("hysem", hysem)):
            started = time.perf_counter()
            output = converter.convert(pdf).document.export_to_markdown()
            seconds[name] += time.perf_counter() - started
            scores[name].append(measure(truth, output))
        for k in range(3):
            row += [_cell(scores["plain"][-1][k]), _cell(scores["hysem"][-1][k])]
        rows.append(row)
    means = {name: [_mean([s[k] for s in values]) for k in range(3)] for name, values in scores.items()}
    rows.append(["mean", *[f"{means[name][k]:.3f}" for k in range(3) for name in ("plain", "hysem")]])
    header = ["document", "text plain", "text hysem", "headings plain", "headings hysem", "order plain", "order hysem"]
    print(tabulate(rows, headers=header, tablefmt="github"))
    print(f"\n{len(pdfs)} documents; parsing took {seconds['plain']:.2f} s plain, {seconds['hysem']:.2f} s hysem")
    better = all(means["hysem"][k] > means["plain"][k] for k in range(3))
    print("hysem beats plain Docling native output on every measure" if better
          else "hysem does NOT beat plain Docling native output on every measure")
    return 0 if better else 1


if __name__ == "__main__":
    sys.exit(main())
