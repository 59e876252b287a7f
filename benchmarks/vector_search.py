"""Chunk store speed: Qdrant Edge against qdrant-client's local mode, at 10,000 and 100,000 chunks.

Synthetic unit vectors of MiniLM's size (384) and short texts of words drawn from a fixed
vocabulary (Zipf frequencies; the texts give the BM25 vectors) go in, half in the partition
that is searched and half in another, so that every search filters on the partition as
production does. The vectors have a low intrinsic dimension (48, plus noise), as sentence
embeddings do; ``--isotropic`` draws them uniformly on the sphere instead, the worst case
for HNSW (every point almost as near as the nearest), where its recall collapses. Measured
in one run on the same points:

- Qdrant Edge (``EdgeChunkStore``, the embedded store): ingest points/s, ``optimize()``
  seconds, and p50/p95 of filtered dense top-10, keyword (BM25) and hybrid (prefetch + RRF);
- the baseline, the embedded store of earlier versions: ``QdrantClient(path=...)`` local mode,
  one unnamed cosine vector, filtered dense top-10 (slow: fewer queries, ``--local-queries``);
- exact brute force with numpy over the partition, the reference for dense recall@10.

It prints one table, the local/Edge p95 ratio per size, and whether Edge's dense p95 at
100,000 chunks is within 5 ms. ``--url`` adds a Qdrant server through ``QdrantChunkStore``.

    python benchmarks/vector_search.py [--sizes 10000,100000] [--queries 200] [--local-queries 20]
        [--url URL] [--skip-local] [--isotropic]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tabulate import tabulate

from hysem_assets.stores.chunks import ChunkVectors, ScoredChunk, point_id
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.qdrant_chunks import QdrantChunkStore

DIMENSION = 384
TOP_K = 10
PARTITION, OTHER = "bench", "other"
WORDS_PER_TEXT = 24
VOCABULARY = 5000
WARM_UP = 5
TARGET_P95_MS = 5.0
TARGET_SIZE = 100_000
LOCAL_BATCH = 512
#: Intrinsic dimension of the vectors, and the noise around that subspace.
LATENT = 48
NOISE = 0.3


@dataclass
class Row:
    size: int
    engine: str
    search: str
    queries: int
    p50: float
    p95: float
    recall: float | None = None
    ingest: float | None = None
    optimize: float | None = None


@dataclass(frozen=True)
class Data:
    ids: list[str]
    vectors: np.ndarray
    texts: list[str]
    payloads: list[dict]
    half: int  # the first ``half`` points are the searched partition


def unit_vectors(rng: np.random.Generator, count: int, basis: np.ndarray | None) -> np.ndarray:
    """Uniform on the sphere, or (given a ``basis``) near the subspace it spans."""
    if basis is None:
        vectors = rng.standard_normal((count, DIMENSION)).astype(np.float32)
    else:
        latent = rng.standard_normal((count, len(basis))).astype(np.float32) @ basis
        noise = rng.standard_normal((count, DIMENSION)).astype(np.float32)
        vectors = latent + NOISE * np.sqrt(len(basis)) * noise
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def vocabulary(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    consonants, vowels = list("bcdfghklmnprstvz"), list("aeiou")
    words: set[str] = set()
    while len(words) < VOCABULARY:
        syllables = int(rng.integers(2, 5))
        words.add("".join(str(rng.choice(consonants)) + str(rng.choice(vowels)) for _ in range(syllables)))
    weights = 1.0 / np.arange(1, VOCABULARY + 1)
    return np.asarray(sorted(words)), weights / weights.sum()


def synthetic(rng: np.random.Generator, size: int, basis: np.ndarray | None) -> Data:
    words, weights = vocabulary(rng)
    drawn = words[rng.choice(VOCABULARY, size=(size, WORDS_PER_TEXT), p=weights)]
    half = size // 2
    ids, payloads = [], []
    for n in range(size):
        query, chunk_id = (PARTITION, f"c-{n}:0") if n < half else (OTHER, f"c-{n}:0")
        ids.append(point_id(query, chunk_id))
        payloads.append({"query": query, "chunk_id": chunk_id, "cluster_id": f"c-{n}", "section": "Methods"})
    return Data(ids, unit_vectors(rng, size, basis), [" ".join(row) for row in drawn], payloads, half)


def percentiles(seconds: list[float]) -> tuple[float, float]:
    p50, p95 = np.percentile(np.asarray(seconds) * 1000, [50, 95])
    return float(p50), float(p95)


def timed(calls: list[Callable[[], object]]) -> tuple[list[float], list[object]]:
    for call in calls[:WARM_UP]:
        call()
    seconds, results = [], []
    for call in calls:
        started = time.perf_counter()
        results.append(call())
        seconds.append(time.perf_counter() - started)
    return seconds, results


def exact_top(data: Data, probe: np.ndarray) -> list[int]:
    scores = data.vectors[: data.half] @ probe
    best = np.argpartition(-scores, TOP_K)[:TOP_K]
    return best[np.argsort(-scores[best])].tolist()


def recall(found: list[list[str]], exact: list[list[int]]) -> float:
    hits = [len({f"c-{n}:0" for n in truth} & set(chunks)) / TOP_K for chunks, truth in zip(found, exact, strict=True)]
    return float(np.mean(hits))


def chunk_ids(found: list[ScoredChunk]) -> list[str]:
    return [str(chunk.payload["chunk_id"]) for chunk in found]


def bench_store(
    store: ChunkVectors, engine: str, data: Data, probes: np.ndarray, keywords: list[str], exact: list[list[int]]
) -> list[Row]:
    """Ingest, optimize and the three searches through the product's store interface."""
    size = len(data.ids)
    store.ensure_collection(DIMENSION)
    started = time.perf_counter()
    store.upsert(data.ids, data.vectors, data.texts, data.payloads)
    ingest = time.perf_counter() - started
    started = time.perf_counter()
    store.optimize()
    optimize = time.perf_counter() - started
    assert store.count(PARTITION) == data.half, "the store did not keep every point"

    dense_s, dense = timed([lambda p=p: store.dense(p, query=PARTITION, limit=TOP_K) for p in probes])
    keyword_s, _ = timed([lambda t=t: store.keyword(t, query=PARTITION, limit=TOP_K) for t in keywords])
    hybrid_s, _ = timed(
        [
            lambda p=p, t=t: store.hybrid(p, t, query=PARTITION, limit=TOP_K)
            for p, t in zip(probes, keywords, strict=True)
        ]
    )
    found = [chunk_ids(result) for result in dense]  # type: ignore[arg-type]
    return [
        Row(size, engine, "dense", len(probes), *percentiles(dense_s), recall(found, exact), size / ingest, optimize),
        Row(size, engine, "keyword", len(keywords), *percentiles(keyword_s)),
        Row(size, engine, "hybrid", len(probes), *percentiles(hybrid_s)),
    ]


def bench_local_mode(folder: Path, data: Data, probes: np.ndarray, exact: list[list[int]], timed_points: int) -> Row:
    """The embedded store of earlier versions, as it was: local mode, one unnamed cosine vector.

    Local mode commits (and syncs) SQLite once per point, so writing is bound by the disk's
    syncs per second; ingest is timed over the first ``timed_points`` (all when 0), and the
    rest goes in with SQLite's syncing off, which changes nothing in how searches run.
    """
    from qdrant_client import QdrantClient, models

    size = len(data.ids)
    timed_points = min(timed_points or size, size)
    client = QdrantClient(path=str(folder))

    def write(start: int, end: int) -> None:
        for first in range(start, end, LOCAL_BATCH):
            last = min(first + LOCAL_BATCH, end)
            client.upsert(
                "chunks",
                points=[
                    models.PointStruct(id=point, vector=vector, payload=payload)
                    for point, vector, payload in zip(
                        data.ids[first:last], data.vectors[first:last].tolist(), data.payloads[first:last], strict=True
                    )
                ],
                wait=True,
            )

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "payload indexes have no effect", "> 20,000 points"
            client.create_collection(
                "chunks", vectors_config=models.VectorParams(size=DIMENSION, distance=models.Distance.COSINE)
            )
            client.create_payload_index("chunks", field_name="query", field_schema=models.PayloadSchemaType.KEYWORD)
            started = time.perf_counter()
            write(0, timed_points)
            ingest = time.perf_counter() - started
            storage = client._client.collections["chunks"].storage  # type: ignore[union-attr]
            storage.storage.execute("PRAGMA synchronous=OFF")
            write(timed_points, size)
            within = models.Filter(must=[models.FieldCondition(key="query", match=models.MatchValue(value=PARTITION))])
            seconds, found = timed(
                [
                    lambda p=p: (
                        client.query_points(
                            "chunks", query=p.tolist(), query_filter=within, limit=TOP_K, with_payload=True
                        ).points
                    )
                    for p in probes
                ]
            )
    finally:
        client.close()
    ids = [[str(point.payload["chunk_id"]) for point in points] for points in found]  # type: ignore[attr-defined]
    return Row(
        size,
        "qdrant-client local mode",
        "dense",
        len(probes),
        *percentiles(seconds),
        recall(ids, exact),
        timed_points / ingest,
    )


def bench_numpy(data: Data, probes: np.ndarray) -> Row:
    seconds, _ = timed([lambda p=p: exact_top(data, p) for p in probes])
    return Row(len(data.ids), "numpy brute force", "dense", len(probes), *percentiles(seconds), 1.0)


def keyword_queries(rng: np.random.Generator, data: Data, count: int) -> list[str]:
    """Three words of a random chunk of the searched partition, so every query has hits."""
    texts = [data.texts[int(n)].split() for n in rng.integers(0, data.half, count)]
    return [" ".join(rng.choice(words, 3, replace=False)) for words in texts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200, help="queries per search on Edge, a server and numpy")
    parser.add_argument("--local-queries", type=int, default=20, help="queries on local mode (~1 s each at 100,000)")
    parser.add_argument("--url", help="also measure a Qdrant server (QdrantChunkStore)")
    parser.add_argument(
        "--local-ingest", type=int, default=1024, help="points whose local-mode ingest is timed (0: all; slow)"
    )
    parser.add_argument("--skip-local", action="store_true", help="leave out qdrant-client's local mode")
    parser.add_argument("--isotropic", action="store_true", help="vectors uniform on the sphere (HNSW's worst case)")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()

    rows: list[Row] = []
    for size in (int(s) for s in args.sizes.split(",")):
        rng = np.random.default_rng(args.seed)
        basis = None if args.isotropic else rng.standard_normal((LATENT, DIMENSION)).astype(np.float32)
        data = synthetic(rng, size, basis)
        probes = unit_vectors(rng, args.queries, basis)
        keywords = keyword_queries(rng, data, args.queries)
        exact = [exact_top(data, probe) for probe in probes]
        with tempfile.TemporaryDirectory() as scratch:
            store = EdgeChunkStore(Path(scratch) / "edge", collection=f"bench_{size}")
            try:
                rows += bench_store(store, "Qdrant Edge", data, probes, keywords, exact)
            finally:
                store.close()
            if args.url:
                server = QdrantChunkStore(args.url, collection=f"bench_{size}")
                try:
                    rows += bench_store(server, f"server {args.url}", data, probes, keywords, exact)
                finally:
                    server.client.delete_collection(f"bench_{size}")
                    server.close()
            if not args.skip_local:
                few = min(args.local_queries, len(probes))
                rows.append(
                    bench_local_mode(Path(scratch) / "local", data, probes[:few], exact[:few], args.local_ingest)
                )
        rows.append(bench_numpy(data, probes))
        print(f"measured {size:,} chunks", flush=True)

    def cell(value: float | None, form: str) -> str:
        return "" if value is None else format(value, form)

    print()
    print(
        tabulate(
            [
                [
                    f"{r.size:,}",
                    r.engine,
                    r.search,
                    r.queries,
                    f"{r.p50:.2f}",
                    f"{r.p95:.2f}",
                    cell(r.recall, ".3f"),
                    cell(r.ingest, ",.0f"),
                    cell(r.optimize, ".1f"),
                ]
                for r in rows
            ],  # fmt: skip
            headers=[
                "chunks",
                "engine",
                "filtered top-10",
                "queries",
                "p50 ms",
                "p95 ms",
                "recall@10",
                "ingest pts/s",
                "optimize s",
            ],
            disable_numparse=True,
        )
    )
    print()
    edge = {r.size: r for r in rows if r.engine == "Qdrant Edge" and r.search == "dense"}
    for local in (r for r in rows if r.engine == "qdrant-client local mode"):
        print(f"{local.size:,} chunks: local mode / Edge dense p95 = {local.p95 / edge[local.size].p95:,.0f}x")
    if TARGET_SIZE in edge:
        p95 = edge[TARGET_SIZE].p95
        verdict = "PASS" if p95 <= TARGET_P95_MS else "FAIL"
        print(
            f"{verdict}: Edge filtered dense top-10 p95 at {TARGET_SIZE:,} chunks = {p95:.2f} ms (target <= {TARGET_P95_MS:g} ms)"
        )


if __name__ == "__main__":
    main()
