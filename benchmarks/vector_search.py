"""Vector store speed: ingest rate and query latency at 10,000 and 100,000 chunks.

Synthetic unit vectors of MiniLM's size (384) go into the configured Qdrant store (local
mode in a temporary folder by default, a server with --url), half in the partition that
is searched and half in another, so that every search filters on the partition as
production does. The baseline, measured in the same run on the same vectors, is exact
brute-force search with numpy; the script prints p50 and p95 latency of both and their
ratio, and points ingested per second.

    python benchmarks/vector_search.py [--sizes 10000,100000] [--queries 200] [--url URL]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from hysem_assets.stores.qdrant_chunks import QdrantChunkStore, point_id

DIMENSION = 384
TOP_K = 10


def unit_vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMENSION)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def ingest(store: QdrantChunkStore, query: str, vectors: np.ndarray) -> float:
    """Seconds to upsert ``vectors`` as chunks of partition ``query``."""
    ids = [point_id(query, f"c-{n}:0") for n in range(len(vectors))]
    payloads = [{"query": query, "chunk_id": f"c-{n}:0", "section": "Methods"} for n in range(len(vectors))]
    started = time.perf_counter()
    store.upsert(ids, vectors, payloads)
    return time.perf_counter() - started


def percentiles(seconds: list[float]) -> tuple[float, float]:
    p50, p95 = np.percentile(np.asarray(seconds) * 1000, [50, 95])
    return float(p50), float(p95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--url", help="a Qdrant server instead of local mode")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as scratch:
            collection = f"bench_{size}"
            store = (
                QdrantChunkStore(url=args.url, collection=collection)
                if args.url
                else QdrantChunkStore(path=Path(scratch) / "qdrant", collection=collection)
            )
            try:
                store.ensure_collection(DIMENSION)
                vectors = unit_vectors(rng, size // 2)
                ingest_s = ingest(store, "bench", vectors)
                ingest_s += ingest(store, "other", unit_vectors(rng, size - size // 2))
                probes = unit_vectors(rng, args.queries)
                store_times, numpy_times = [], []
                for probe in probes:
                    started = time.perf_counter()
                    store.search(probe, query="bench", limit=TOP_K)
                    store_times.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    scores = vectors @ probe
                    np.argsort(-scores[np.argpartition(-scores, TOP_K)[:TOP_K]])
                    numpy_times.append(time.perf_counter() - started)
            finally:
                if args.url:
                    store.client.delete_collection(collection)
                store.close()
        (p50, p95), (b50, b95) = percentiles(store_times), percentiles(numpy_times)
        where = args.url or "local mode"
        print(f"== {size:,} chunks in 2 partitions, Qdrant {where}")
        print(f"  ingest:             {size / ingest_s:,.0f} points/s ({ingest_s:.1f} s)")
        print(f"  query latency:      p50 {p50:.1f} ms, p95 {p95:.1f} ms")
        print(f"  numpy brute force:  p50 {b50:.1f} ms, p95 {b95:.1f} ms")
        print(f"  ratio (store / brute force): p50 {p50 / b50:.1f}x, p95 {p95 / b95:.1f}x")


if __name__ == "__main__":
    main()
