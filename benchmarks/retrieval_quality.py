"""Retrieval quality of hysem's BM25, dense and hybrid search against the keyword search it replaced.

For each dataset the script prints nDCG@10 and Recall@100 of hysem's three methods through
``evaluate_beir`` (the product's indexing and search: BM25 as Qdrant sparse vectors, dense
MiniLM, hybrid as Qdrant prefetch + RRF), and, measured in the same run on the same
corpus, the previous product's: BM25 with ``bm25s`` (English stopwords, over the same
section + text) and the previous hybrid, a Python RRF (k=60) of hysem's dense list and
bm25s's. A closing summary says, per dataset, whether hybrid is at least as good as the
better of BM25 and dense, and how Qdrant's BM25 compares with bm25s.

Datasets: the team's BEIR sample, and two known-item tasks built at run time (in a
temporary folder) from the real PubMed abstracts under ``../shared/realdata``, their labels
taken from the data itself: "MED-like titles" (a title finds its own abstract, titles left
out of the corpus) and "MED-like conclusions" (an abstract's last sentence finds the rest of
it, every document's last sentence left out of the corpus). Real Crossref and OpenAlex
abstracts there join both corpora as distractors.

    python benchmarks/retrieval_quality.py [--realdata DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np
from tabulate import tabulate

from hysem_assets.core.identifiers import normalize_doi
from hysem_assets.core.text import normalized_sentence, sentence_spans
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.retrieval.beir import DEPTH, corpus_chunks, evaluate_beir, load_beir
from hysem_assets.retrieval.indexing import index_chunks
from hysem_assets.retrieval.metrics import ndcg_at_k, recall_at_k
from hysem_assets.retrieval.search import METHODS, Hit, reciprocal_rank_fusion, search
from hysem_assets.sources.crossref_json import jats_to_text
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.openalex_json import rebuild_abstract
from hysem_assets.sources.pubmed_xml import parse_efetch
from hysem_assets.stores.chunks import searchable_text
from hysem_assets.stores.edge_chunks import EdgeChunkStore

ROOT = Path(__file__).resolve().parents[1]
BEIR_SAMPLE = ROOT / "hysem_assets_tests" / "retrieval" / "beir_sample"
DEFAULT_REALDATA = ROOT.parent / "shared" / "realdata"
MIN_ABSTRACT = 200
MIN_SENTENCE = 30


@dataclass(frozen=True)
class Abstract:
    doc_id: str
    title: str
    text: str
    doi: str | None


@dataclass(frozen=True)
class Score:
    method: str
    ndcg: float
    recall: float


# --- the MED-like datasets ------------------------------------------------------------------


def pubmed_abstracts(realdata: Path) -> list[Abstract]:
    """Every PubmedArticle with a title and an abstract of at least MIN_ABSTRACT characters, once per PMID."""
    files = sorted((realdata / "pubmed_metapub_efetch").glob("*.xml"))
    files += sorted((realdata / "pubmed_biopython_entrez").glob("pubmed*.xml"))
    found: dict[str, Abstract] = {}
    for path in files:
        try:
            records = parse_efetch(path.read_bytes(), path.name)
        except SourceFormatError:
            continue
        for record in records:
            pmid, title, text = record.get("pmid"), record.get("title"), record.get("abstract") or ""
            if pmid and title and len(text) >= MIN_ABSTRACT and pmid not in found:
                found[pmid] = Abstract(f"pmid-{pmid}", title, text, normalize_doi(record.get("doi")))
    return list(found.values())


def _json_files(folder: Path) -> Iterator[object]:
    for path in sorted(folder.rglob("*.json")):
        try:
            yield json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue


def distractor_abstracts(realdata: Path) -> list[Abstract]:
    """Real Crossref (JATS) and OpenAlex (inverted index) abstracts, for the corpora only."""
    found: list[Abstract] = []
    for body in _json_files(realdata / "crossref_habanero"):
        message = body.get("message") if isinstance(body, dict) else None
        items = message.get("items", [message]) if isinstance(message, dict) else []
        for item in items:
            if isinstance(item, dict) and (text := jats_to_text(item.get("abstract"))):
                found.append(Abstract(f"crossref-{len(found)}", "", text, normalize_doi(item.get("DOI"))))
    for body in _json_files(realdata / "openalex"):
        works = body.get("results", [body]) if isinstance(body, dict) else []
        for work in works if isinstance(works, list) else []:
            if isinstance(work, dict) and isinstance(work.get("abstract_inverted_index"), dict):
                text = rebuild_abstract(work["abstract_inverted_index"])
                if text:
                    found.append(Abstract(f"openalex-{len(found)}", "", text, normalize_doi(work.get("doi"))))
    return [abstract for abstract in found if len(abstract.text) >= MIN_ABSTRACT]


def _key(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()[:200]


def without_duplicates(targets: list[Abstract], distractors: list[Abstract]) -> list[Abstract]:
    """Distractors that are no target (by DOI or text) and no copy of another distractor."""
    dois = {a.doi for a in targets if a.doi}
    texts = {_key(a.text) for a in targets}
    kept: list[Abstract] = []
    for abstract in distractors:
        if (abstract.doi and abstract.doi in dois) or _key(abstract.text) in texts:
            continue
        kept.append(abstract)
        texts.add(_key(abstract.text))
        if abstract.doi:
            dois.add(abstract.doi)
    return kept


def is_boilerplate(sentence: str) -> bool:
    """A publisher's copyright line ("(PsycInfo Database Record (c) 2020 APA, all rights reserved).")."""
    lowered = sentence.lower()
    return lowered.startswith(("©", "copyright")) or "all rights reserved" in lowered or "(c) " in lowered


def last_sentence(text: str) -> tuple[str, str] | None:
    """(the text before its last sentence, that sentence), copyright lines after it dropped;
    None unless at least two sentences stay before it."""
    spans = sentence_spans(text)
    while spans and is_boilerplate(text[spans[-1][0] : spans[-1][1]]):
        spans.pop()
    if len(spans) < 3:
        return None
    start, end = spans[-1]
    sentence = normalized_sentence(text[start:end])
    if len(sentence) < MIN_SENTENCE:
        return None
    return text[:start].rstrip(), sentence


def write_beir(folder: Path, corpus: dict[str, str], queries: dict[str, str], qrels: dict[str, str]) -> Path:
    """A BEIR folder: documents without titles, one relevant document per query."""
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for doc_id, text in corpus.items():
            out.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as out:
        for query_id, text in queries.items():
            out.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    rows = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t1" for q, d in qrels.items())]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def med_like(realdata: Path, scratch: Path) -> list[tuple[str, Path, str]]:
    """(name, BEIR folder, description) of the two MED-like tasks."""
    targets = pubmed_abstracts(realdata)
    distractors = without_duplicates(targets, distractor_abstracts(realdata))
    titles = write_beir(
        scratch / "med_titles",
        {a.doc_id: a.text for a in [*targets, *distractors]},
        {f"q-{a.doc_id}": a.title for a in targets},
        {f"q-{a.doc_id}": a.doc_id for a in targets},
    )
    split = {a.doc_id: last_sentence(a.text) for a in [*targets, *distractors]}
    queried = [a for a in targets if split[a.doc_id]]
    conclusions = write_beir(
        scratch / "med_conclusions",
        {a.doc_id: (split[a.doc_id] or (a.text, ""))[0] for a in [*targets, *distractors]},
        {f"q-{a.doc_id}": split[a.doc_id][1] for a in queried},  # type: ignore[index]
        {f"q-{a.doc_id}": a.doc_id for a in queried},
    )
    corpus = f"{len(targets)} PubMed abstracts + {len(distractors)} Crossref/OpenAlex distractors"
    return [
        ("MED-like titles", titles, f"{len(targets)} titles -> own abstract; {corpus}"),
        ("MED-like conclusions", conclusions, f"{len(queried)} last sentences -> rest of abstract; {corpus}"),
    ]


# --- the previous product's keyword search, and scoring ------------------------------------


def bm25s_search(ids: list[str], texts: list[str]) -> Callable[[str], list[Hit]]:
    """bm25s over ``texts`` as the previous product built it (English stopwords, default BM25)."""

    def tokens(batch: list[str]) -> list[list[str]]:
        return bm25s.tokenize(batch, stopwords="en", return_ids=False, show_progress=False)

    retriever = bm25s.BM25()
    retriever.index(tokens(texts), show_progress=False)

    def run(text: str) -> list[Hit]:
        documents, scores = retriever.retrieve(tokens([text]), k=min(DEPTH, len(ids)), show_progress=False, n_threads=1)
        return [
            Hit(ids[int(doc)], float(score))
            for doc, score in zip(documents[0], scores[0], strict=True)
            if score > 0 and np.isfinite(score)
        ]

    return run


def scored(method: str, rankings: dict[str, list[Hit]], qrels: dict[str, dict[str, int]]) -> Score:
    """Averaged as ``evaluate_beir`` averages: every judged query, the query's own id left out."""
    ndcg = recall = 0.0
    for query_id, relevance in qrels.items():
        ranked = [hit.chunk_id for hit in rankings[query_id] if hit.chunk_id != query_id]
        ndcg += ndcg_at_k(ranked, relevance, 10)
        recall += recall_at_k(ranked, relevance, DEPTH)
    count = max(len(qrels), 1)
    return Score(method, ndcg / count, recall / count)


def previous_methods(folder: Path, embedder: Encoder, scratch: Path) -> list[Score]:
    """bm25s, and RRF of hysem's dense list with bm25s's (the previous hybrid)."""
    collection = load_beir(folder)
    chunks = corpus_chunks(collection.corpus)
    texts = [searchable_text(s or "", t) for s, t in zip(chunks["section"], chunks["text"], strict=True)]
    keyword = bm25s_search(list(chunks["chunk_id"]), texts)
    store = EdgeChunkStore(scratch, collection="previous")
    try:
        index_chunks(chunks, query="beir", store=store, embedder=embedder)
        dense = {
            q: search("dense", collection.queries[q], store=store, embedder=embedder, query="beir", limit=DEPTH)
            for q in collection.qrels
        }
    finally:
        store.close()
    bm25 = {q: keyword(collection.queries[q]) for q in collection.qrels}
    fused = {q: reciprocal_rank_fusion([dense[q], bm25[q]], limit=DEPTH) for q in collection.qrels}
    return [
        scored("bm25s (before)", bm25, collection.qrels),
        scored("dense + bm25s RRF (before)", fused, collection.qrels),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realdata", type=Path, default=DEFAULT_REALDATA)
    args = parser.parse_args()
    embedder = Encoder()

    summary = []
    queries: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch:
        datasets = [("BEIR sample", BEIR_SAMPLE, "team sample, 36 documents, 12 queries")]
        datasets += med_like(args.realdata, Path(scratch))
        for number, (name, folder, description) in enumerate(datasets):
            started = time.perf_counter()
            hysem = evaluate_beir(folder, "all", embedder=embedder)
            before = previous_methods(folder, embedder, Path(scratch) / f"previous-{number}")
            rows = [Score(f"hysem {m} (Qdrant)", hysem[m].ndcg_at_10, hysem[m].recall_at_100) for m in METHODS]
            rows += before
            print(f"== {name}: {description} ({time.perf_counter() - started:.0f} s)")
            print(
                tabulate(
                    [[s.method, f"{s.ndcg:.3f}", f"{s.recall:.3f}"] for s in rows],
                    headers=["method", "nDCG@10", "Recall@100"],
                    disable_numparse=True,
                )
            )
            print(flush=True)
            summary.append((name, {s.method: s for s in rows}))
            queries[name] = hysem["hybrid"].queries

    print("== Summary")
    for name, by in summary:
        bm25, dense, hybrid = (by[f"hysem {m} (Qdrant)"] for m in METHODS)
        bm25s_, previous = by["bm25s (before)"], by["dense + bm25s RRF (before)"]
        best = max(bm25.ndcg, dense.ndcg)
        verdict = "yes" if hybrid.ndcg >= best else "NO"
        step = (1 - 1 / np.log2(3)) / queries[name]  # one query's relevant document from rank 1 to rank 2
        print(
            f"{name} ({queries[name]} queries: one hit from rank 1 to 2 moves nDCG@10 by {step:.3f}): "
            f"hybrid >= max(bm25, dense) on nDCG@10: {verdict} ({hybrid.ndcg:.3f} vs {best:.3f}); "
            f"hybrid vs previous hybrid {hybrid.ndcg - previous.ndcg:+.3f} nDCG@10, "
            f"{hybrid.recall - previous.recall:+.3f} Recall@100; "
            f"Qdrant BM25 - bm25s: {bm25.ndcg - bm25s_.ndcg:+.3f} nDCG@10, {bm25.recall - bm25s_.recall:+.3f} Recall@100"
        )


if __name__ == "__main__":
    main()
