"""QA answer latency on the embedded default: p50 and p95 per question, and retrieval's share.

Runs against a materialized sample partition: ``$HYSEM_HOME`` when it holds one, else the
sample demo is materialized into a temporary ``HYSEM_HOME`` first (about a minute). Each
configured question (config/questions.yaml) is answered ``--repeat`` times after one warm-up
pass. The baseline, measured in the same run, is hybrid retrieval alone (dense + BM25 RRF,
``hysem_assets.retrieval.search``) for the same questions; the script prints answer latency
against it and the share of answer time spent in retrieval (graph and symbolic route included).

    python benchmarks/qa_latency.py [--query SLUG] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

QUERY = "air-pollution-cardio-ml"


def materialized(home: Path, query: str) -> bool:
    return (
        all((home / "assets" / asset / f"{query}.parquet").is_file() for asset in ("vector_index", "library"))
        and (home / "qdrant").is_dir()
    )


def percentiles(seconds: list[float]) -> tuple[float, float]:
    p50, p95 = np.percentile(np.asarray(seconds) * 1000, [50, 95])
    return float(p50), float(p95)


def run(query: str, repeat: int) -> None:
    from hysem_assets.environment import hysem_home
    from hysem_assets.qa import answer_questions, load_questions, open_engine
    from hysem_assets.resources import build_resources
    from hysem_assets.retrieval.search import search

    assets = hysem_home() / "assets"
    questions = load_questions()[query]
    resources = build_resources()
    settings = resources["answer_models"].settings
    with open_engine(
        resources["answer_models"],
        query=query,
        chunk_store=resources["chunk_store"],
        graph_database=resources["graph_database"],
        chunks=pd.read_parquet(assets / "vector_index" / f"{query}.parquet"),
        library=pd.read_parquet(assets / "library" / f"{query}.parquet"),
    ) as engine:
        answer_questions(questions, engine)  # warm-up: model and stores loaded
        answers = [a for _ in range(repeat) for a in answer_questions(questions, engine)[0]]
        retriever = engine.retriever
        baseline = []
        for _ in range(repeat):
            for question in questions:
                started = time.perf_counter()
                search(
                    "hybrid",
                    question,
                    store=retriever.store,
                    index=retriever.index,
                    embedder=retriever.embedder,
                    query=query,
                    limit=settings.k,
                )
                baseline.append(time.perf_counter() - started)
    total = [a["total_seconds"] for a in answers]
    retrieval = [a["retrieval_seconds"] for a in answers]
    (t50, t95), (r50, r95), (b50, b95) = percentiles(total), percentiles(retrieval), percentiles(baseline)
    print(
        f"{len(answers)} answers ({len(questions)} questions x {repeat}), routes: "
        f"{pd.Series([a['route'] for a in answers]).value_counts().to_dict()}"
    )
    print(f"answer latency      p50 {t50:8.1f} ms   p95 {t95:8.1f} ms")
    print(
        f"  retrieval         p50 {r50:8.1f} ms   p95 {r95:8.1f} ms   share of answer time {sum(retrieval) / sum(total):.1%}"
    )
    print(f"baseline (hybrid search only) p50 {b50:8.1f} ms   p95 {b95:8.1f} ms")
    print(f"answer / baseline   p50 {t50 / b50:6.1f}x   p95 {t95 / b95:6.1f}x")
    print(f"unresolved citations in final answers: {sum(a['unresolved_citations'] for a in answers if a['claims'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--query", default=QUERY)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    home = Path(os.environ.get("HYSEM_HOME", "")) if os.environ.get("HYSEM_HOME") else None
    if home is not None and materialized(home, args.query):
        run(args.query, args.repeat)
        return
    with tempfile.TemporaryDirectory(prefix="hysem-qa-bench-") as scratch:
        environment = {**os.environ, "HYSEM_HOME": scratch}
        print(f"materializing the sample into {scratch} ...", file=sys.stderr)
        subprocess.run(
            [str(Path(sys.executable).with_name("hysem")), "demo"],
            env=environment,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        os.environ["HYSEM_HOME"] = scratch
        run(args.query, args.repeat)


if __name__ == "__main__":
    main()
