"""Screening a large corpus: what the page costs once, and what each decision costs after.

The screening page computes the records' TF-IDF features once and, after each decision,
refits only the classifier on the decided records and scores every record. This prints, for
synthetic corpora of growing size (abstracts of 120 words drawn from a 30,000-word
vocabulary: more distinct word pairs than real abstracts have, so a worst case), the time to
open a screening, the time of one decision's re-ranking with the stopping rule's estimate,
and their ratio: what re-reading the corpus after every decision would cost instead.

    python benchmarks/screening_scale.py [--sizes 10000 100000]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd
from tabulate import tabulate

from hysem_assets.screening.decisions import DEFAULT_REVIEWER, TITLE_ABSTRACT, Decision
from hysem_assets.screening.session import Screening, query_criteria


def corpus(size: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{k}" for k in range(30_000)])
    texts = [" ".join(rng.choice(vocabulary, 120)) for _ in range(size)]
    return pd.DataFrame(
        {"cluster_id": [f"c{k}" for k in range(size)], "title": [t[:60] for t in texts], "abstract": texts}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    criteria = query_criteria(None, "generic", ["w1 w2 w3 w4"])
    rows = []
    for size in args.sizes:
        works = corpus(size)
        started = time.perf_counter()
        screening = Screening(works, criteria)
        opened = time.perf_counter() - started
        # 500 decisions so far: one included, the rest excluded, as early in a review
        log = [Decision("c1", "included"), *(Decision(f"c{k}", "excluded", "other") for k in range(2, 501))]
        started = time.perf_counter()
        standing = screening.standing(log, 0.95)
        screening.next_for(standing, DEFAULT_REVIEWER, TITLE_ABSTRACT)
        decision = time.perf_counter() - started
        rows.append([f"{size:,}", round(opened, 1), round(decision, 2), round(opened / decision, 1)])
    print(tabulate(rows, headers=["records", "open (s)", "per decision (s)", "open / per decision"], tablefmt="github"))
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
