"""The embedded extractor on long real texts: sentence budget, shortlist and ONNX against every sentence in torch.

Reads the longer Docling Markdown files of ``../shared/realdata/pdf_docling_groundtruth``
(real papers and a manual, which nobody on this project wrote; reference lists blanked as
``extracted_fields`` does) and extracts the ``generic`` protocol's fields from each, in one
run, three ways:

- ``baseline``: torch, every sentence embedded (the extractor before the budget);
- ``onnx, every sentence``: the default int8 vectors through ONNX Runtime, budget and shortlist 0;
- ``onnx, budget, shortlist``: the default (``sentence_budget`` 128, ``sentence_shortlist`` 3).

It prints the time per document, the ratio to the baseline, and how many field values each
gives that equal the baseline's and the ONNX every-sentence run's: the budget and the
shortlist change which sentences similarity can pick, so agreement is what they cost, and
the default ``onnx-int8`` vectors differ a little from torch's.

    python benchmarks/long_text_extraction.py [--realdata ../shared/realdata] [--min-chars 15000] [--budget 128]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tabulate import tabulate

from hysem_assets.extraction.documents import Document, extract_documents_sync
from hysem_assets.extraction.extractive import from_protocol
from hysem_assets.retrieval.chunking import blank_reference_lists
from hysem_assets.settings.backends import ExtractiveConfig
from hysem_assets.settings.protocols import load_protocol
from hysem_assets_tests.paths import REALDATA


def documents(realdata: Path, min_chars: int) -> list[Document]:
    folder = realdata / "pdf_docling_groundtruth"
    paths = sorted(p for p in folder.rglob("*.md") if p.stat().st_size >= min_chars)
    return [Document(p.stem, blank_reference_lists(p.read_text(encoding="utf-8"))) for p in paths]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realdata", type=Path, default=REALDATA)
    parser.add_argument("--min-chars", type=int, default=15_000)
    parser.add_argument("--budget", type=int, default=128)
    args = parser.parse_args()
    docs = documents(args.realdata, args.min_chars)
    if not docs:
        raise SystemExit(f"no Markdown of {args.min_chars}+ characters under {args.realdata}/pdf_docling_groundtruth")
    protocol = load_protocol("generic")
    fields = protocol.extraction_fields()
    variants = {
        "baseline: torch, every sentence": ExtractiveConfig(
            backend="extractive", embedding_backend="torch", sentence_budget=0, sentence_shortlist=0
        ),
        "onnx, every sentence": ExtractiveConfig(backend="extractive", sentence_budget=0, sentence_shortlist=0),
        f"onnx, budget {args.budget}, shortlist 3 (default)": ExtractiveConfig(
            backend="extractive", sentence_budget=args.budget
        ),
    }
    print(f"{len(docs)} documents, {sum(len(d.text) for d in docs):,} characters: {', '.join(d.doc_id for d in docs)}")
    results, seconds = {}, {}
    for name, config in variants.items():
        backend = from_protocol(protocol, config)
        backend.extract("Warm up. The model loads here.", [f.name for f in protocol.fields])
        started = time.perf_counter()
        results[name] = [r.values for r in extract_documents_sync(docs, fields, backend)]
        seconds[name] = time.perf_counter() - started
    base, every = list(variants)[:2]

    def same(one: str, other: str) -> str:
        pairs = [(a[k], b[k]) for a, b in zip(results[one], results[other], strict=True) for k in a]
        return f"{sum(x == y for x, y in pairs)}/{len(pairs)}"

    rows = [
        [name, f"{seconds[name] / len(docs):.2f}", f"{seconds[base] / seconds[name]:.2f}x", same(base, name)]
        + [same(every, name)]
        for name in variants
    ]
    headers = ["extractor", "s per document", "speed vs baseline", "values equal to baseline", f"equal to {every}"]
    print(tabulate(rows, headers=headers))


if __name__ == "__main__":
    main()
