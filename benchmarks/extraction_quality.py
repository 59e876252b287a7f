"""Field extraction quality of the extractive backend with the sample protocol against the sample's gold annotations.

Runs the whole extraction path (chunking, prompts, the extractive backend, merging) over
the sample articles' title and abstract and prints micro-averaged precision, recall and
F1 per field against ``hysem_assets/sample/gold_fields.json``. List fields compare
canonical terms; ``study_type`` (free text) is scored by the design labels of
``config/dictionaries/study_type.yaml`` that the extracted text mentions.

The baseline, measured in the same run, is what needs no method at all: for list fields
the canonical names alone, matched exactly (no synonyms, no variants); for study type the
first sentence of the abstract. The dictionaries were written with these abstracts in
view, so list-field scores are in-sample: an upper bound for unseen corpora, where
missing synonyms cost recall. ``--texts DIR`` scores parsed full texts instead
(``<work id>.md`` per article) once the parsing stage has produced them.

    python benchmarks/extraction_quality.py [--texts DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from tabulate import tabulate

from hysem_assets.core.matcher import matchable
from hysem_assets.core.text import split_sentences
from hysem_assets.extraction.backends import build_backend
from hysem_assets.extraction.documents import Document, extract_documents_sync
from hysem_assets.settings.dictionaries import load_dictionary
from hysem_assets.settings.environment import config_dir
from hysem_assets.settings.protocols import load_protocol
from hysem_assets_tests.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "hysem_assets" / "sample"
Labels = dict[str, dict[str, set[str]]]  # field -> work id -> values


def abstract_text(abstract: str | dict[str, str] | None) -> str:
    if isinstance(abstract, dict):
        return "\n\n".join(f"{label}: {text}" for label, text in abstract.items())
    return abstract or ""


def sample_documents(texts: Path | None) -> list[Document]:
    """Title and abstract of every sample article the searches find, or its parsed full text from ``texts``."""
    articles = yaml.safe_load((SAMPLE / "articles.yaml").read_text(encoding="utf-8"))["articles"]
    documents = []
    for article in (article for article in articles if not article.get("cited_only")):
        full_text = texts / f"{article['id']}.md" if texts else None
        if full_text and full_text.is_file():
            text = full_text.read_text(encoding="utf-8")
        else:
            text = f"{article['title']}\n\n{abstract_text(article.get('abstract'))}".strip()
        documents.append(Document(article["id"], text, {"title": article["title"]}))
    return documents


def scores(found: dict[str, set[str]], gold: dict[str, set[str]]) -> tuple[float, float, float]:
    """Micro-averaged precision, recall and F1 over documents."""
    hits = sum(len(found.get(work, set()) & values) for work, values in gold.items())
    predicted = sum(len(found.get(work, set())) for work in gold)
    expected = sum(len(values) for values in gold.values())
    precision = hits / predicted if predicted else 1.0
    recall = hits / expected if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def exact_names(canonical: tuple[str, ...]) -> Callable[[str], set[str]]:
    """Baseline matcher: canonical names only, case-insensitive, whole words, no variants."""
    patterns = {term: re.compile(rf"(?<![\w]){re.escape(term)}(?![\w])", re.IGNORECASE) for term in canonical}
    return lambda text: {term for term, pattern in patterns.items() if pattern.search(matchable(text))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=Path, help="folder of parsed full texts, <work id>.md")
    args = parser.parse_args()

    gold_file = json.loads((SAMPLE / "gold_fields.json").read_text(encoding="utf-8"))
    gold: Labels = {
        field: {work: set(values[field]) for work, values in gold_file["works"].items()}
        for field in gold_file["fields"]
    }
    documents = sample_documents(args.texts)
    protocol = load_protocol("pollution-cardio-ml")
    fields = [spec for spec in protocol.extraction_fields() if spec.name in gold]
    designs = load_dictionary(config_dir() / "dictionaries" / "study_type.yaml").matcher

    with tempfile.TemporaryDirectory() as cache:
        backend = build_backend({"backend": "extractive", "cache": False, "cache_dir": cache}, protocol=protocol)
        started = time.perf_counter()
        results = extract_documents_sync(documents, fields, backend, concurrency=2)
        seconds = time.perf_counter() - started
    failed = [f"{result.doc_id}: {result.error}" for result in results if result.status == "error"]

    found: Labels = {field: {} for field in gold}
    baseline: Labels = {field: {} for field in gold}
    for result, document in zip(results, documents, strict=True):
        found["study_type"][document.doc_id] = set(designs.find(result.values["study_type"] or ""))
        abstract = document.text.partition("\n\n")[2]
        lead = (split_sentences(abstract) or [""])[0]
        baseline["study_type"][document.doc_id] = set(designs.find(lead))
        for spec in fields:
            if spec.type != "list":
                continue
            found[spec.name][document.doc_id] = set(result.values[spec.name])
            canonical = tuple(load_dictionary(config_dir() / "dictionaries" / f"{spec.name}.yaml").entries)
            baseline[spec.name][document.doc_id] = exact_names(canonical)(document.text)

    rows = []
    for field in gold:
        method, base = scores(found[field], gold[field]), scores(baseline[field], gold[field])
        ratio = f"{method[2] / base[2]:.2f}" if base[2] else "n/a"
        rows.append(
            [
                field,
                sum(map(len, gold[field].values())),
                *(f"{v:.2f}" for v in method),
                *(f"{v:.2f}" for v in base),
                ratio,
            ]
        )
    print(
        f"{len(documents)} documents ({'parsed full text where present' if args.texts else 'title + abstract'}), "
        f"{seconds:.1f} s, {sum(r.prompt_tokens + r.completion_tokens for r in results)} tokens, {len(failed)} failed"
    )
    print(tabulate(rows, headers=["field", "gold", "P", "R", "F1", "base P", "base R", "base F1", "F1 / base"]))
    for line in failed:
        print("failed:", line)


if __name__ == "__main__":
    main()
