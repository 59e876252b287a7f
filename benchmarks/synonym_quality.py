"""Precision and recall of synonym unification on the team-written pair set.

Each row of the pair file (field, raw_term, canonical, synonym 0/1) is decided by the
same pipeline as the ``canonical_terms`` asset: exact, then normalized, then embedding
match of ``raw_term`` against a dictionary holding only ``canonical``. A pair is
predicted a synonym when its score reaches the threshold (default: the asset's 0.55).
The script prints precision, recall and F1 overall and per field, the same at nearby
thresholds, and the pairs decided wrongly at the chosen threshold.

    python benchmarks/synonym_quality.py [--pairs CSV] [--threshold 0.55]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

from hysem_assets.settings.dictionaries import build_dictionary
from hysem_assets.settings.profile import TERM_THRESHOLD
from hysem_assets.terms.mapping import map_terms

DEFAULT_PAIRS = Path(__file__).resolve().parents[1] / "hysem_assets_tests" / "terms" / "synonym_pairs.csv"
SWEEP = (0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75)


def pair_scores(pairs: pd.DataFrame, cache_dir: Path) -> pd.DataFrame:
    """Score and method of each pair; each pair is its own one-entry dictionary, so all map in one call."""
    keys = [f"pair{i}" for i in range(len(pairs))]
    dictionaries = {key: build_dictionary(key, {canonical: []}) for key, canonical in zip(keys, pairs["canonical"])}
    raw = pd.DataFrame({"doc_id": keys, "field": keys, "raw_term": pairs["raw_term"]})
    mapping = map_terms(raw, dictionaries, cache_dir=cache_dir).mapping.set_index("field")
    return pairs.assign(score=mapping.loc[keys, "score"].to_numpy(), method=mapping.loc[keys, "method"].to_numpy())


def quality(truth: np.ndarray, predicted: np.ndarray) -> tuple[float, float, float]:
    hits = int((truth & predicted).sum())
    precision = hits / predicted.sum() if predicted.any() else 1.0
    recall = hits / truth.sum() if truth.any() else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    parser.add_argument("--threshold", type=float, default=TERM_THRESHOLD)
    args = parser.parse_args()
    pairs = pd.read_csv(args.pairs)
    with tempfile.TemporaryDirectory() as cache:
        scored = pair_scores(pairs, Path(cache))
    truth = scored["synonym"].to_numpy() == 1
    predicted = scored["score"].to_numpy() >= args.threshold
    print(f"{len(pairs)} pairs: {truth.sum()} synonyms, {(~truth).sum()} non-synonyms; threshold {args.threshold}\n")

    rows = [["all", len(scored), *quality(truth, predicted)]]
    for field_name, group in scored.groupby("field"):
        mask = (scored["field"] == field_name).to_numpy()
        rows.append([field_name, len(group), *quality(truth[mask], predicted[mask])])
    print(
        tabulate(rows, headers=["field", "pairs", "precision", "recall", "F1"], floatfmt=("", "", ".3f", ".3f", ".3f"))
    )

    sweep = [[t, *quality(truth, scored["score"].to_numpy() >= t)] for t in SWEEP]
    print(
        "\n"
        + tabulate(sweep, headers=["threshold", "precision", "recall", "F1"], floatfmt=(".2f", ".3f", ".3f", ".3f"))
    )

    wrong = scored[truth != predicted].assign(expected=lambda t: t["synonym"].map({1: "synonym", 0: "not"}))
    print(f"\nWrong at {args.threshold} ({len(wrong)}):")
    print(
        tabulate(
            wrong[["field", "raw_term", "canonical", "expected", "score", "method"]].values.tolist(),
            headers=["field", "raw term", "canonical", "expected", "score", "method"],
            floatfmt=".3f",
        )
    )


if __name__ == "__main__":
    main()
