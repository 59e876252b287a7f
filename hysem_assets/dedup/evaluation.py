"""Pairwise quality of a clustering against labelled duplicate groups.

Labelled sets come as two files in one folder, the layout bib-dedupe's data uses:
``records_pre_merged.csv`` (the export, one record per row with an ``ID``) and
``merged_record_ids.csv`` (one true duplicate group per row, "id_a;id_b;...").
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations
from pathlib import Path

import pandas as pd

LABELLED_FILES = ("records_pre_merged.csv", "merged_record_ids.csv")
Pair = tuple[str, str]


def pairs_of(groups: Iterable[Iterable[str]]) -> set[Pair]:
    """All unordered record-id pairs inside each group."""
    return {pair for group in groups for pair in combinations(sorted(group), 2)}


def groups_of(record_ids: Iterable[str], labels: Iterable[object]) -> list[list[str]]:
    """Record ids grouped by their cluster label."""
    groups: dict[object, list[str]] = {}
    for record_id, label in zip(record_ids, labels):
        groups.setdefault(label, []).append(str(record_id))
    return list(groups.values())


def pairwise_scores(found: set[Pair], truth: set[Pair]) -> tuple[float, float, float]:
    """Pairwise precision, recall and F1 (1.0 for an empty side, as nothing was wrong)."""
    hits = len(found & truth)
    precision = hits / len(found) if found else 1.0
    recall = hits / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def is_labelled_set(folder: Path) -> bool:
    return all((folder / name).is_file() for name in LABELLED_FILES)


def read_labelled_set(folder: Path) -> tuple[pd.DataFrame, set[Pair]]:
    """The records (strings, blanks as None) and the true duplicate pairs of a labelled set."""
    records = pd.read_csv(folder / LABELLED_FILES[0], dtype=str, keep_default_na=False).replace("", None)
    labels = pd.read_csv(folder / LABELLED_FILES[1], dtype=str)["merged_ids"].dropna()
    return records, pairs_of(group.split(";") for group in labels)
