"""Own values: what changes when a work's fields come from its own text only, per corpus and field.

Runs the embedded extractor (the local profile's settings) twice over each corpus: rules off
(every sentence read alike, a design column as the backend answers it) and rules on (sentences
shared near-verbatim by 3 or more works, affiliations, funding and the like blanked; parts of a
work weighted; design columns held to their categories: hysem_assets/extraction/own_text.py,
sections.py, designs.py), and says how many sentences and lines the rules blanked. Per corpus
and field it prints the works with a value before and after, the works whose value changed
(and, besides, those whose list only changed its order), the evidence entries whose sentence
stands near-verbatim in 3 or more works (before / after; 0 after), and the design cells that
are not one of the column's categories, i.e. sentences (before / after; 0 after).

Corpora:
  sample    the sample query's works as `hysem demo` leaves them in --home (default $HYSEM_HOME):
            screened-in works, parsed full text where there is one (protocol pollution-cardio-ml)
  statins   the bundled statins snapshot (hysem_assets/snapshots/statins_dementia): titles and
            abstracts, and the full texts of its open-access works with the numbered affiliations
            their PDFs print (protocol generic)
  pubmed    real PubMed records, ../shared/realdata/pubmed_metapub_efetch: title and abstract (generic)
  pmc       real PMC full texts of Evidence Inference 2.0, ../shared/realdata/evidence_inference/txt:
            the first --full-texts articles, their "BODY.<HEADING>:" lines read as headings (generic)

    .venv/bin/python benchmarks/own_values.py --home /tmp/demo-home [--corpora sample statins pubmed pmc]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from tabulate import tabulate

from hysem_assets.extraction.designs import categories, is_design
from hysem_assets.extraction.extractive import from_protocol
from hysem_assets.extraction.own_text import shared_sentences
from hysem_assets.extraction.rows import documents_to_extract, extracted_rows
from hysem_assets.screening.outcome import screened_in
from hysem_assets.settings.backends import ExtractiveConfig
from hysem_assets.settings.profile import load_profile
from hysem_assets.settings.protocols import Protocol, load_protocol
from hysem_assets.sources.pubmed_xml import parse_efetch
from hysem_assets_tests.paths import PROJECT_ROOT, REALDATA

SAMPLE_QUERY = "air-pollution-cardio-ml"
STATINS = PROJECT_ROOT / "hysem_assets" / "snapshots" / "statins_dementia" / "articles.yaml"
NO_PARSE = pd.DataFrame({"cluster_id": pd.Series(dtype=object), "markdown": [], "error": []})
Corpus = tuple[str, pd.DataFrame, pd.DataFrame]  # protocol name, works, parsed full texts


def works(rows: list[dict[str, Any]]) -> pd.DataFrame:
    columns = {"title": None, "abstract": None, "publication_types": None, "item_type": None}
    return pd.DataFrame([{**columns, **row} for row in rows])


def parsed(texts: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({"cluster_id": list(texts), "markdown": list(texts.values()), "error": None})


def sample(home: Path) -> Corpus:
    def table(asset: str) -> pd.DataFrame:
        return pd.read_parquet(home / "assets" / asset / f"{SAMPLE_QUERY}.parquet")

    corpus = screened_in(table("deduped_corpus"), table("screening"))
    return "pollution-cardio-ml", corpus, table("parsed_docs")


def _abstract(abstract: str | dict[str, str] | None) -> str:
    if isinstance(abstract, dict):
        return "\n\n".join(f"{label}: {text}" for label, text in abstract.items())
    return abstract or ""


def statins() -> Corpus:
    """Each work's title and abstract; an open-access work's full text as its PDF prints it, affiliations included."""
    source = yaml.safe_load(STATINS.read_text(encoding="utf-8"))
    people, places = source["people"], source["institutions"]
    rows, texts = [], {}
    for article in source["articles"]:
        rows.append(
            {"cluster_id": article["id"], "title": article["title"], "abstract": _abstract(article.get("abstract"))}
        )
        if not article.get("fulltext"):
            continue
        affiliations = list(
            dict.fromkeys(places[people[a]["aff"]]["raw"] for a in article["authors"] if isinstance(a, str))
        )
        parts = [f"# {article['title']}", *(f"{n} {raw}" for n, raw in enumerate(affiliations, 1))]
        parts += ["## Abstract", _abstract(article.get("abstract"))]
        for section in article["fulltext"]:
            parts += [f"## {section['heading']}", *section.get("paragraphs", [])]
        texts[article["id"]] = "\n\n".join(parts)
    return "generic", works(rows), parsed(texts)


def pubmed() -> Corpus:
    records = [
        record
        for path in sorted((REALDATA / "pubmed_metapub_efetch").glob("*.xml"))
        for record in parse_efetch(path.read_bytes(), path.name)
        if record.get("abstract")
    ]
    rows = [{**{k: r[k] for k in ("title", "abstract", "publication_types")}, "cluster_id": r["pmid"]} for r in records]
    return "generic", works(rows), NO_PARSE


def pmc(count: int) -> Corpus:
    paths = sorted((REALDATA / "evidence_inference" / "txt").glob("*.txt"))[:count]
    texts = {
        path.stem: re.sub(
            r"(?m)^(?:TITLE|ABSTRACT|BODY)\.?([^\n:]*):[ \t]*$", r"## \1\n", path.read_text(encoding="utf-8")
        )
        for path in paths
    }
    titles = {key: text.split("\n\n", 1)[0].removeprefix("## ").strip() for key, text in texts.items()}
    return "generic", works([{"cluster_id": key, "title": titles[key]} for key in texts]), parsed(texts)


def extract(protocol: Protocol, corpus: pd.DataFrame, full: pd.DataFrame, own: bool) -> list[dict[str, Any]]:
    settings = load_profile("local").assets.extracted_fields
    backend = from_protocol(protocol, ExtractiveConfig.model_validate(settings.llm), own_values=own)
    documents = documents_to_extract(corpus, full, own_values=own)
    rows = extracted_rows(documents, protocol, backend, settings, own_values=own)
    return [{**row, "evidence": json.loads(row["evidence"])} for row in rows]


def shared_entries(rows: list[dict[str, Any]]) -> Counter[str]:
    """Per field, the evidence entries whose sentence stands near-verbatim in 3 or more works' evidence."""
    sentences = [
        sorted({e["sentence"] for es in row["evidence"].values() for e in es if e.get("sentence")}) for row in rows
    ]
    shared = shared_sentences(["\n\n".join(s) for s in sentences])
    counts: Counter[str] = Counter()
    for row, text, places in zip(rows, ["\n\n".join(s) for s in sentences], shared, strict=True):
        common = {" ".join(text[a:b].split()) for a, b in places}
        for field, entries in row["evidence"].items():
            counts[field] += sum(1 for e in entries if " ".join(str(e.get("sentence")).split()) in common)
    return counts


def sentence_cells(protocol: Protocol, rows: list[dict[str, Any]]) -> Counter[str]:
    """Per design column, the cells holding something other than one of its categories."""
    counts: Counter[str] = Counter()
    for field in filter(is_design, protocol.fields):
        choices = categories(protocol, field)
        counts[field.name] = sum(1 for row in rows if row[field.name] not in (None, *choices))
    return counts


def filled(value: Any) -> bool:
    return value not in (None, "", [])


def as_set(value: Any) -> Any:
    """A list's items whatever their order (records as JSON), to tell a changed value from a reordered one."""
    return frozenset(json.dumps(item, sort_keys=True) for item in value) if isinstance(value, list) else value


def compare(name: str, protocol_name: str, corpus: pd.DataFrame, full: pd.DataFrame) -> list[list[Any]]:
    protocol = load_protocol(protocol_name)
    started = time.perf_counter()
    before, after = (extract(protocol, corpus, full, own) for own in (False, True))
    seconds = time.perf_counter() - started
    shared = shared_entries(before), shared_entries(after)
    cells = sentence_cells(protocol, before), sentence_cells(protocol, after)
    table = []
    for field in protocol.fields:
        design = is_design(field)
        table.append(
            [
                name,
                field.name,
                sum(filled(row[field.name]) for row in before),
                sum(filled(row[field.name]) for row in after),
                sum(as_set(b[field.name]) != as_set(a[field.name]) for b, a in zip(before, after, strict=True)),
                sum(b[field.name] != a[field.name] for b, a in zip(before, after, strict=True)),
                f"{shared[0][field.name]} / {shared[1][field.name]}",
                f"{cells[0][field.name]} / {cells[1][field.name]}" if design else "",
            ]
        )
    blanked: Counter[str] = Counter()
    for document in documents_to_extract(corpus, full):
        blanked.update(document.metadata["blanked"])
    print(
        f"{name}: {len(corpus)} works ({len(full)} full texts), protocol {protocol_name}, {seconds:.0f} s for both "
        f"runs; blanked: {blanked['shared']} shared sentences, {blanked['excluded']} sentences of excluded parts, "
        f"{blanked['front_matter']} front-matter lines"
    )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path(os.environ.get("HYSEM_HOME", "")), help="a `hysem demo` home")
    parser.add_argument("--corpora", nargs="+", default=["sample", "statins", "pubmed", "pmc"])
    parser.add_argument("--full-texts", type=int, default=30, help="PMC full texts to read")
    args = parser.parse_args()
    loaders = {
        "sample": lambda: sample(args.home),
        "statins": statins,
        "pubmed": pubmed,
        "pmc": lambda: pmc(args.full_texts),
    }
    table = []
    for name in args.corpora:
        table += compare(name, *loaders[name]())
    headers = ["corpus", "field", "filled before", "filled after", "changed", "or reordered", "shared evidence"]
    headers.append("design sentences")
    print(tabulate(table, headers=headers))


if __name__ == "__main__":
    main()
