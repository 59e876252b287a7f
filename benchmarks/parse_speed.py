"""Parsing speed of the native pipeline: pages per second with 1 and 2 workers, with the reconstruction, and with OCR.

The corpus is every PDF under the realdata ground-truth folder and the sample snapshot,
repeated ``--repeat`` times. ``parse_many`` runs it with one worker and with two; the
times include starting the worker processes, as a run of the asset does. In-process, after
one warm-up pass of each, the same files give pages/s for Docling's ``NativePdfPipeline``
as it is and with hysem's reconstruction, and the real scans of the realdata OCR folder
give pages/s for OCR pages with each installed engine.

    python benchmarks/parse_speed.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tabulate import tabulate

from hysem_assets.parsing.native import native_converter
from hysem_assets.parsing.ocr import engine_problem
from hysem_assets.parsing.options import OCR_ENGINES, ParseOptions
from hysem_assets.parsing.pool import parse_many
from hysem_assets.parsing.preflight import open_problem

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (
    ROOT.parent / "shared" / "realdata" / "pdf_docling_groundtruth" / "pdf",
    ROOT / "hysem_assets" / "sample" / "files",
)
SCANS = (ROOT.parent / "shared" / "realdata" / "pdf_docling_ocr" / "pdf",)


def corpus(folders: tuple[Path, ...] = FOLDERS) -> list[tuple[Path, int]]:
    """Every readable PDF with its page count."""
    found = []
    for folder in folders:
        for pdf in sorted(folder.glob("*.pdf")):
            problem, pages = open_problem(pdf)
            if problem is None:
                found.append((pdf, pages))
    return found


def pool_rate(paths: list[Path], pages: int, workers: int) -> tuple[float, int]:
    started = time.perf_counter()
    results = parse_many(paths, ParseOptions(), workers=workers)
    seconds = time.perf_counter() - started
    return pages / seconds, sum(not r.ok for r in results)


def converter_seconds(converter, paths: list[Path]) -> float:
    for path in paths:  # warm-up: first-use costs belong to neither side
        converter.convert(path, raises_on_error=False)
    started = time.perf_counter()
    for path in paths:
        converter.convert(path, raises_on_error=False)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="times the corpus is parsed in each pool run")
    args = parser.parse_args(argv)
    files = corpus()
    if not files:
        print("no PDFs found", file=sys.stderr)
        return 1
    pages = sum(n for _, n in files)
    paths = [path for path, _ in files] * args.repeat
    one, failed_one = pool_rate(paths, pages * args.repeat, 1)
    two, failed_two = pool_rate(paths, pages * args.repeat, 2)
    print(
        tabulate(
            [["1 worker", f"{one:.1f}", failed_one], ["2 workers", f"{two:.1f}", failed_two]],
            headers=["parse_many (native)", "pages/s", "failed docs"],
            tablefmt="github",
        )
    )
    print(f"\n2 workers / 1 worker: {two / one:.2f}x  ({len(paths)} documents, {pages * args.repeat} pages)\n")
    plain = converter_seconds(native_converter(reconstructed=False), [path for path, _ in files])
    # as the embedded default runs: every page is also checked for a usable text layer
    hysem = converter_seconds(
        native_converter(reconstructed=True, ocr=ParseOptions().ocr_engine), [path for path, _ in files]
    )
    rows = [
        ["native: Docling NativePdfPipeline (plain)", f"{pages / plain:.1f}", f"{1000 * plain / pages:.1f}", "1.00x"],
        [
            "native + hysem reconstruction",
            f"{pages / hysem:.1f}",
            f"{1000 * hysem / pages:.1f}",
            f"{plain / hysem:.2f}x",
        ],
    ]
    scans = corpus(SCANS)
    scan_pages = sum(n for _, n in scans)
    for engine in (e for e in OCR_ENGINES if e != "off"):
        problem = engine_problem(engine)
        if problem or not scans:
            rows.append([f"OCR pages: {engine}", "n/a", "n/a", problem or "no scans found"])
            continue
        seconds = converter_seconds(native_converter(ocr=engine), [path for path, _ in scans])
        rows.append(
            [
                f"OCR pages: {engine} + reconstruction",
                f"{scan_pages / seconds:.2f}",
                f"{1000 * seconds / scan_pages:.0f}",
                f"{plain / pages / (seconds / scan_pages):.3f}x",
            ]
        )
    print(
        tabulate(
            rows, headers=["in-process, one pass", "pages/s", "ms/page", "speed vs plain native"], tablefmt="github"
        )
    )
    print(
        f"\nreconstruction overhead: {1000 * (hysem - plain) / pages:+.1f} ms/page ({len(files)} documents, "
        f"{pages} pages); OCR: {len(scans)} scanned documents, {scan_pages} pages"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
