"""QA answer latency on the embedded default: in-process p50 and p95, and `hysem ask` as a new process.

Runs against a materialized sample partition: ``$HYSEM_HOME`` when it holds one, else the
sample demo is materialized into a temporary ``HYSEM_HOME`` first (a few minutes). Each
configured question (config/questions.yaml) is answered ``--repeat`` times after one warm-up
pass. The baseline, measured in the same run, is hybrid retrieval alone (dense + BM25 fused in Qdrant,
``hysem_assets.retrieval.search``) for the same questions; the script prints answer latency
against it and the share of answer time spent in retrieval (graph and symbolic route included).

Then each question is asked as a user asks it, ``hysem ask`` in a new process: cold (a
question not in the answer cache, ``--fresh``: every import, the stores and the model load
before the first retrieval) and repeated (served from the partition's answer cache). The
children run on at most ``--cores`` CPUs (2 by default), and their wall and CPU seconds are
printed beside the in-process figures.

    python benchmarks/qa_latency.py [--query SLUG] [--repeat 3] [--cores 2]
"""

from __future__ import annotations

import argparse
import os
import resource
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


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def ask_in_new_process(query: str, question: str, *, fresh: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one ``hysem ask`` process."""
    command = [str(Path(sys.executable).with_name("hysem")), "ask", "--query", query, question]
    cpu, started = children_cpu(), time.perf_counter()
    subprocess.run(command + (["--fresh"] if fresh else []), check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, children_cpu() - cpu


def cold(query: str, questions: list[str], repeat: int, cores: int) -> None:
    """``hysem ask`` as new processes on at most ``cores`` CPUs: new questions, then repeated ones."""
    available = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, available[:cores])  # inherited by the children
    runs = {"cold (new question)": [], "repeated (answer cache)": []}
    for _ in range(repeat):
        for question in questions:
            runs["cold (new question)"].append(ask_in_new_process(query, question, fresh=True))
            runs["repeated (answer cache)"].append(ask_in_new_process(query, question, fresh=False))
    os.sched_setaffinity(0, available)
    print(f"hysem ask in a new process, on {min(cores, len(available))} of {len(available)} CPUs:")
    for name, timings in runs.items():
        (w50, w95), (c50, _) = percentiles([w for w, _ in timings]), percentiles([c for _, c in timings])
        print(f"  {name:24s} wall p50 {w50:8.1f} ms   p95 {w95:8.1f} ms   cpu p50 {c50:8.1f} ms")


def run(query: str, repeat: int, cores: int) -> None:
    from hysem_assets.qa.answer import answer_questions
    from hysem_assets.qa.ask import read_tables
    from hysem_assets.qa.engine import tables_engine
    from hysem_assets.qa.questions import load_questions
    from hysem_assets.retrieval.search import search
    from hysem_assets.settings.profile import load_settings

    questions = load_questions()[query]
    settings = load_settings().profile.assets
    tables = read_tables(query)  # the tables `hysem ask` reads, so both measure the same answers
    with tables_engine(settings, query, tables) as engine:
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
                    embedder=retriever.embedder,
                    query=query,
                    limit=settings.answers.k,
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
    cold(query, questions, repeat, cores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--query", default=QUERY)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cores", type=int, default=2, help="CPUs the new `hysem ask` processes may use.")
    args = parser.parse_args()
    home = Path(os.environ.get("HYSEM_HOME", "")) if os.environ.get("HYSEM_HOME") else None
    if home is not None and materialized(home, args.query):
        run(args.query, args.repeat, args.cores)
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
        run(args.query, args.repeat, args.cores)


if __name__ == "__main__":
    main()
