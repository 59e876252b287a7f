"""Wall time of the topic grid search with 2 worker processes against 1.

Generates a corpus of documents drawn from a few themes (vocabulary of the field plus
shared filler), then runs ``build_topics`` over the same grid with each worker count.
Both runs must choose the same model; the script prints seconds, candidates per second
and the speed-up.

    python benchmarks/topics_speed.py [--documents 600] [--words 150] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd
from tabulate import tabulate

from hysem_assets.topics.config import TopicSettings
from hysem_assets.topics.model import build_topics

THEMES = [
    "ozone nitrogen dioxide particulate emission traffic smog sulphur monitor station concentration wildfire smoke soot".split(),
    "infarction arrhythmia hypertension stroke artery cardiac coronary pressure atrial ventricle angina ischaemia".split(),
    "forest boosting neural network classifier validation feature algorithm tree gradient ensemble regularisation".split(),
    "cohort hospital admission mortality emergency visit patient follow incidence hazard survival registry".split(),
    "satellite sensor calibration spatial resolution grid interpolation kriging land-use imagery remote".split(),
    "child pregnancy birth weight prenatal maternal infant school adolescent growth neonatal".split(),
]
FILLER = "data analysis increase level high low daily annual region city population model estimate".split()
GRID = {"n_topics": [4, 6, 8, 10], "passes": [10, 20], "iterations": [100], "no_below": [3], "no_above": [0.6]}


def corpus(documents: int, words: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    texts = []
    for index in range(documents):
        main, second = rng.choice(len(THEMES), size=2, replace=False)
        draw = [
            *rng.choice(THEMES[main], int(words * 0.6)),
            *rng.choice(THEMES[second], int(words * 0.25)),
            *rng.choice(FILLER, words - int(words * 0.6) - int(words * 0.25)),
        ]
        texts.append(" ".join(rng.permutation(draw)))
    return pd.DataFrame({"doc_id": [f"d{i}" for i in range(documents)], "text": texts})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=600)
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    documents = corpus(args.documents, args.words)
    settings = TopicSettings.model_validate({"grid": GRID})
    candidates = int(np.prod([len(values) for values in settings.grid.model_dump().values()]))
    print(
        f"{args.documents} documents x {args.words} words, {candidates} candidate models; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (other processes share them)"
    )
    rows, chosen = [], []
    for workers in (1, args.workers):
        started = time.perf_counter()
        model = build_topics(documents, settings, workers=workers)
        seconds = time.perf_counter() - started
        rows.append([workers, seconds, candidates / seconds, model.chosen["n_topics"], model.chosen["coherence"]])
        chosen.append(model.chosen)
    print(
        tabulate(
            rows,
            headers=["workers", "seconds", "candidates/s", "chosen k", "c_v"],
            floatfmt=("", ".2f", ".2f", "", ".4f"),
        )
    )
    print(
        f"\nspeed-up with {args.workers} workers: {rows[0][1] / rows[1][1]:.2f}x (same model chosen: {chosen[0] == chosen[1]})"
    )


if __name__ == "__main__":
    main()
