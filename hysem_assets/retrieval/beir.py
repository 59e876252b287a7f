"""Retrieval quality on any BEIR-format folder, measured through the production search path.

A BEIR folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``) and ``qrels/<split>.tsv`` (query-id, corpus-id, score, with a header).
Each document becomes one chunk (title as its section) and goes through
:func:`index_chunks`; each query goes through :func:`search`. Scores are averaged over
every judged query, a query with no hits counting as zero.
"""

from __future__ import annotations

import csv
import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pandas as pd

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.retrieval.chunking import CHUNK_COLUMNS, content_hash
from hysem_assets.retrieval.indexing import index_chunks
from hysem_assets.retrieval.metrics import ndcg_at_k, recall_at_k
from hysem_assets.retrieval.search import METHODS, Method, search
from hysem_assets.stores.edge_chunks import EdgeChunkStore

DEPTH = 100


class BeirFormatError(ValueError):
    pass


@dataclass(frozen=True)
class BeirCollection:
    corpus: pd.DataFrame
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


@dataclass(frozen=True)
class RetrievalMetrics:
    method: str
    ndcg_at_10: float
    recall_at_100: float
    queries: int


def _jsonl(path: Path) -> Iterator[dict]:
    if not path.is_file():
        raise BeirFormatError(f"{path} is missing")
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise BeirFormatError(f"{path}, line {number}: {exc}") from exc


def load_beir(folder: Path, split: str = "test") -> BeirCollection:
    """Read a BEIR folder; judged queries missing from queries.jsonl are an error."""
    corpus = pd.DataFrame(
        [
            {"doc_id": str(doc["_id"]), "title": doc.get("title") or "", "text": doc.get("text") or ""}
            for doc in _jsonl(folder / "corpus.jsonl")
        ],
        columns=["doc_id", "title", "text"],
    )
    queries = {str(q["_id"]): q["text"] for q in _jsonl(folder / "queries.jsonl")}
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        raise BeirFormatError(f"{qrels_path} is missing")
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle, delimiter="\t")
        next(rows, None)
        for row in rows:
            if len(row) >= 3:
                qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    unknown = sorted(set(qrels) - set(queries))
    if unknown:
        raise BeirFormatError(f"{qrels_path} judges queries not in queries.jsonl: {unknown[:5]}")
    return BeirCollection(corpus, queries, qrels)


def corpus_chunks(corpus: pd.DataFrame) -> pd.DataFrame:
    """One chunk per document: the document id is the chunk id, the title its section."""
    chunks = pd.DataFrame(
        {
            "chunk_id": corpus["doc_id"],
            "cluster_id": corpus["doc_id"],
            "chunk_index": 0,
            "section": corpus["title"],
            "text": corpus["text"],
            "token_count": corpus["text"].str.split().str.len(),
        }
    )
    chunks["content_hash"] = [content_hash(s, t) for s, t in zip(chunks["section"], chunks["text"], strict=True)]
    return chunks[list(CHUNK_COLUMNS)]


def evaluate_beir(
    folder: Path,
    method: Method | str = "all",
    *,
    embedder: Encoder | None = None,
    split: str = "test",
    work_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, RetrievalMetrics]:
    """nDCG@10 and Recall@100 per method ("bm25", "dense", "hybrid" or "all")."""
    if method != "all" and method not in METHODS:
        raise ValueError(f"unknown retrieval method {method!r}; choose one of {', '.join(METHODS)} or all")
    methods = METHODS if method == "all" else (cast(Method, method),)
    collection = load_beir(Path(folder), split)
    embedder = embedder or Encoder()
    partition = "beir"
    with tempfile.TemporaryDirectory(dir=work_dir) as scratch:
        store = EdgeChunkStore(Path(scratch), collection="beir")
        try:
            index_chunks(
                corpus_chunks(collection.corpus), query=partition, store=store, embedder=embedder, progress=progress
            )
            judged = sorted(collection.qrels)
            results: dict[str, RetrievalMetrics] = {}
            for name in methods:
                ndcg = recall = 0.0
                for query_id in judged:
                    hits = search(
                        name,
                        collection.queries[query_id],
                        store=store,
                        embedder=embedder,
                        query=partition,
                        limit=DEPTH,
                    )
                    ranked = [hit.chunk_id for hit in hits if hit.chunk_id != query_id]
                    ndcg += ndcg_at_k(ranked, collection.qrels[query_id], 10)
                    recall += recall_at_k(ranked, collection.qrels[query_id], DEPTH)
                count = max(len(judged), 1)
                results[name] = RetrievalMetrics(name, ndcg / count, recall / count, len(judged))
        finally:
            store.close()
    return results
