"""Deduplication quality against labelled bibliographies, side by side with bib-dedupe.

Every folder under the data directory holding ``records_pre_merged.csv`` and
``merged_record_ids.csv`` (true duplicate groups, "id_a;id_b;...") is one dataset,
and so is the team's adversarial set (look-alike records that must stay apart).
For each dataset and method the script prints pairwise precision, recall, F1 and
seconds; methods are hysem's ``cluster_records``, bib-dedupe with its defaults
(when installed), and clustering on exactly equal normalized titles. It then
reports hysem's accuracy on the hand-labelled pairs of ``test_cases.json``.

    python benchmarks/dedup_quality.py [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from tabulate import tabulate

from hysem_assets.dedup.cluster import cluster_records
from hysem_assets.dedup.evaluation import groups_of, is_labelled_set, pairs_of, pairwise_scores, read_labelled_set
from hysem_assets.dedup.normalize import normalize_title
from hysem_assets.dedup.tabular import standardize_columns

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "realdata" / "dedup_bib_dedupe"
ADVERSARIAL = ROOT / "hysem_assets_tests" / "dedup" / "adversarial"
Groups = list[list[str]]


def run_hysem(records: pd.DataFrame) -> Groups:
    standard = standardize_columns(records)
    return groups_of(standard["record_id"], cluster_records(standard).cluster_id)


def run_exact_title(records: pd.DataFrame) -> Groups:
    standard = standardize_columns(records)
    titles = [normalize_title(t) or f"\x00{i}" for i, t in enumerate(standard["title"])]
    return groups_of(standard["record_id"], titles)


def run_bib_dedupe(records: pd.DataFrame) -> Groups:
    from bib_dedupe.bib_dedupe import block, cluster, match, prep

    prepared = prep(records, verbosity_level=0)
    matched = match(block(prepared, verbosity_level=0), verbosity_level=0)
    return cluster(matched, verbosity_level=0)


def _bib_dedupe_available() -> bool:
    try:
        import bib_dedupe.bib_dedupe  # noqa: F401
    except ImportError:
        return False
    return True


def methods() -> dict[str, Callable[[pd.DataFrame], Groups]]:
    available = {"hysem": run_hysem}
    if _bib_dedupe_available():
        available["bib-dedupe"] = run_bib_dedupe
    available["exact-title"] = run_exact_title
    return available


def evaluate_dataset(folder: Path) -> list[list[object]]:
    """One table row per method for the dataset in ``folder``, with F1 relative to bib-dedupe's."""
    records, truth = read_labelled_set(folder)
    rows = []
    for name, method in methods().items():
        started = time.perf_counter()
        groups = method(records.copy())
        seconds = time.perf_counter() - started
        precision, recall, f1 = pairwise_scores(pairs_of(groups), truth)
        rows.append([folder.name, len(records), name, precision, recall, f1, seconds])
    baseline = next((row[5] for row in rows if row[2] == "bib-dedupe"), None)
    return [[*row, row[5] / baseline if baseline else None] for row in rows]


def test_case_accuracy(path: Path) -> tuple[int, int, list[str]]:
    """(right, total, ids of wrong cases) for hysem on hand-labelled record pairs."""
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    wrong = []
    for case in cases:
        pair = pd.DataFrame([case["record_a"], case["record_b"]])
        pair["ID"] = ["a", "b"]  # a few cases reuse one ID on both sides
        clusters = cluster_records(standardize_columns(pair)).cluster_id
        if (clusters.iloc[0] == clusters.iloc[1]) != case["expected_duplicate"]:
            wrong.append(case["id"])
    return len(cases) - len(wrong), len(cases), wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    folders = sorted(folder for folder in args.data.iterdir() if is_labelled_set(folder)) + [ADVERSARIAL]
    rows = [row for folder in folders for row in evaluate_dataset(folder)]
    print(
        tabulate(
            rows,
            headers=["dataset", "records", "method", "precision", "recall", "F1", "seconds", "F1 / bib-dedupe"],
            floatfmt=("", "", "", ".4f", ".4f", ".4f", ".2f", ".3f"),
        )
    )
    cases_file = args.data / "test_cases.json"
    if cases_file.exists():
        right, total, wrong = test_case_accuracy(cases_file)
        print(f"\ntest_cases.json (hysem): {right}/{total} correct ({right / total:.1%})")
        for case_id in wrong:
            print(f"  wrong: {case_id}")


if __name__ == "__main__":
    main()
