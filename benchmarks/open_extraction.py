"""Open-vocabulary extraction quality: the embedded extractor with the generic protocol on real abstracts.

Reads the abstracts named in ``benchmarks/data/open_extraction_labels.json`` from
../shared/realdata at run time (PubMed efetch XML through hysem's own parser, Crossref
JATS abstracts through its own converter), runs the whole extraction path (chunking,
prompts, the extractive backend built from ``config/protocols/generic.yaml``, merging)
and prints per-field precision, recall and F1 against the hand labels, for the tuning
third (the only abstracts looked at while writing rules) and the held-out rest apart,
beside a plain baseline measured in the same run, and abstracts per second.

Matching rules:

* category: exact value;
* sample_size: within 1%; follow_up: within 0.05 years;
* effect_estimates: one record per estimate; a record matches when its measure is the
  same kind (hazard, odds, risk/rate ratio, difference, coefficient) and its value is
  within 1%;
* terms and text: normalised token overlap: words lower-cased, accents and stop words
  (scikit-learn's English list) dropped, a final "s" removed; a predicted phrase
  matches a labelled one when the Dice coefficient of their word sets is at least 0.5.
  Terms are matched one to one.

Precision counts predicted values (non-null scalars, list items), recall labelled ones.
The baseline is the extractor before protocols: empty for every field without a
dictionary (it had no open vocabulary), and for text fields the single sentence most
similar to the field's description (the previous sentence method).

    python benchmarks/open_extraction.py [--split tuning|held_out|all] [--show]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from typing import Any

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from tabulate import tabulate

from hysem_assets.core.matcher import fold
from hysem_assets.extraction.backends import build_backend
from hysem_assets.extraction.documents import Document, extract_documents_sync
from hysem_assets.extraction.reading import Reading
from hysem_assets.settings.protocols import load_protocol
from hysem_assets.sources.crossref_json import jats_to_text
from hysem_assets.sources.pubmed_xml import parse_efetch
from hysem_assets_tests.paths import PROJECT_ROOT

LABELS = PROJECT_ROOT / "benchmarks" / "data" / "open_extraction_labels.json"
REALDATA = PROJECT_ROOT.parent / "shared" / "realdata"
MEASURE_KINDS = {
    "hazard": "hazard",
    "odds": "odds",
    "risk ratio": "risk",
    "relative risk": "risk",
    "rate": "rate",
    "difference": "difference",
    "coefficient": "beta",
    "beta": "beta",
    "or": "odds",
    "hr": "hazard",
    "rr": "risk",
    "irr": "rate",
}


def read_abstract(record: dict[str, Any]) -> tuple[str, str]:
    """(title, abstract) of a labelled record, read from its file in ../shared/realdata."""
    path = REALDATA / record["path"]
    if record["source"] == "pubmed":
        found = next(r for r in parse_efetch(path.read_bytes(), str(path)) if r["source_id"] == record["id"])
        return found["title"] or "", found["abstract"] or ""
    items = json.loads(path.read_text(encoding="utf-8"))["message"]
    items = items.get("items", [items]) if isinstance(items, dict) else items
    item = next(i for i in items if str(i.get("DOI", "")).lower() == record["id"].lower())
    title = re.sub(r"<[^>]+>", "", " ".join((item.get("title") or [""])[0].split()))
    return title, jats_to_text(item.get("abstract")) or ""


def tokens(text: str | None) -> set[str]:
    words = re.findall(r"\w+", fold(text or "").lower())
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in ENGLISH_STOP_WORDS}


def dice(a: str, b: str) -> float:
    x, y = tokens(a), tokens(b)
    return 2 * len(x & y) / (len(x) + len(y)) if x and y else 0.0


def measure_kind(measure: str) -> str:
    name = measure.lower().replace("adjusted ", "")
    return next(
        (kind for key, kind in MEASURE_KINDS.items() if key == name or (" " in key and key in name)),
        next((kind for key, kind in MEASURE_KINDS.items() if key in name), name),
    )


def counts(field: str, kind: str, predicted: Any, gold: Any) -> tuple[int, int, int]:
    """(matched predictions, predictions, labels) for one field of one abstract."""
    if kind in ("terms", "estimates"):
        # a label written as one phrase is one term (the generic comparator was one phrase before it was terms)
        predicted, gold = list(predicted or []), [gold] if isinstance(gold, str) else list(gold or [])
        used: set[int] = set()
        hits = 0
        for item in predicted:
            for index, truth in enumerate(gold):
                if index in used:
                    continue
                if kind == "terms":
                    ok = dice(item, truth) >= 0.5
                else:
                    ok = measure_kind(item["measure"]) == measure_kind(truth["measure"]) and abs(
                        item["value"] - truth["value"]
                    ) <= 0.01 * abs(truth["value"])
                if ok:
                    used.add(index)
                    hits += 1
                    break
        return hits, len(predicted), len(gold)
    has_p, has_g = predicted not in (None, ""), gold is not None
    if not (has_p and has_g):
        return 0, int(has_p), int(has_g)
    if kind == "category":
        ok = predicted == gold
    elif kind == "count":
        ok = abs(predicted - gold) <= 0.01 * abs(gold)
    elif kind == "duration":
        ok = abs(predicted - gold) <= 0.05
    else:
        ok = dice(predicted, gold) >= 0.5
    return int(ok), 1, 1


def kind_of(spec: Any) -> str:
    if spec.type == "number":
        return {"count": "count", "duration": "duration", "effect_estimate": "estimates"}[spec.number_kind]
    return {"category": "category", "terms": "terms", "text": "text"}[spec.type]


def baseline(protocol: Any, reading: Reading) -> dict[str, Any]:
    """The extractor before protocols: nothing without a dictionary, the most similar sentence for text."""
    values: dict[str, Any] = {}
    for spec in protocol.fields:
        if spec.type == "text":
            similarity = reading.sentence_similarity(reading.embed([spec.description])[0])
            values[spec.name] = reading.sentences[int(similarity.argmax())] if reading.sentences else None
        else:
            values[spec.name] = [] if spec.type == "terms" or spec.records else None
    return values


def prf(total: tuple[int, int, int]) -> tuple[float, float, float]:
    hits, predicted, gold = total
    precision = hits / predicted if predicted else 1.0
    recall = hits / gold if gold else 1.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["tuning", "held_out", "all"], default="all")
    parser.add_argument("--show", action="store_true", help="print each abstract's values beside its labels")
    args = parser.parse_args()
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    records = [r for r in labels["records"] if args.split == "all" or r["split"] == args.split]
    if not REALDATA.is_dir():
        raise SystemExit(f"{REALDATA} is missing: the benchmark reads the abstracts from there")
    protocol = load_protocol("generic")
    documents = []
    for record in records:
        title, abstract = read_abstract(record)
        documents.append(Document(record["id"], f"{title}\n\n{abstract}", {"title": title}))
    with tempfile.TemporaryDirectory() as cache:
        backend = build_backend({"backend": "extractive", "cache": False, "cache_dir": cache}, protocol=protocol)
        fields = protocol.extraction_fields()
        extract_documents_sync(documents[:1], fields, backend)  # load the model before timing
        started = time.perf_counter()
        results = extract_documents_sync(documents, fields, backend, concurrency=2)
        seconds = time.perf_counter() - started
    encoder = backend.inner.encoder
    bases = [baseline(protocol, Reading(document.text, encoder)) for document in documents]
    # speed reference: the methods the embedded default had before protocols (dictionaries, sentence ranking,
    # counts, metrics), i.e. the sample protocol's fields, over the same abstracts
    sample = load_protocol("pollution-cardio-ml")
    previous = build_backend({"backend": "extractive", "cache": False}, protocol=sample)
    started = time.perf_counter()
    extract_documents_sync(documents, sample.extraction_fields(), previous, concurrency=2)
    base_seconds = time.perf_counter() - started
    splits = ["tuning", "held_out"] if args.split == "all" else [args.split]
    totals = {
        (split, method, spec.name): [0, 0, 0]
        for split in splits
        for method in ("open", "base")
        for spec in protocol.fields
    }
    for record, result, base in zip(records, results, bases, strict=True):
        for spec in protocol.fields:
            gold = record["fields"][spec.name]
            for method, values in (("open", result.values), ("base", base)):
                found = counts(spec.name, kind_of(spec), values[spec.name], gold)
                total = totals[(record["split"], method, spec.name)]
                for i in range(3):
                    total[i] += found[i]
        if args.show:
            print(f"\n== {record['id']} ({record['split']})")
            for spec in protocol.fields:
                print(f"  {spec.name}: {json.dumps(result.values[spec.name], ensure_ascii=False)[:300]}")
                print(
                    f"  {'':{len(spec.name)}}  gold {json.dumps(record['fields'][spec.name], ensure_ascii=False)[:300]}"
                )
    print(
        f"{len(records)} abstracts: {len(records) / seconds:.2f} abstracts/s open ({seconds:.1f} s, "
        f"{sum(r.status != 'ok' for r in results)} failed); sample protocol's dictionary and sentence fields "
        f"{len(records) / base_seconds:.2f} abstracts/s"
    )
    for split in splits:
        n = sum(r["split"] == split for r in records)
        rows = []
        for spec in protocol.fields:
            opened, based = totals[(split, "open", spec.name)], totals[(split, "base", spec.name)]
            rows.append(
                [
                    spec.name,
                    opened[2],
                    *(f"{v:.2f}" for v in prf(tuple(opened))),
                    *(f"{v:.2f}" for v in prf(tuple(based))),
                ]
            )
        print(f"\n{split} ({n} abstracts)")
        print(tabulate(rows, headers=["field", "labels", "P", "R", "F1", "base P", "base R", "base F1"]))


if __name__ == "__main__":
    main()
