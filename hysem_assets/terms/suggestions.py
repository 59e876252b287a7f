"""Grouped terms as dictionary entries a user can review and adopt.

A field with a dictionary gets suggested entries for its unmatched terms, to paste into
the dictionary; a field without one gets a whole suggested dictionary, to save under
config/dictionaries/. Both are in the dictionary file format (canonical term: [synonyms]).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from hysem_assets.terms.grouping import MAX_CLUSTERED_TERMS, entry_spellings, group_terms, rank_terms

SUGGESTION_COLUMNS = ["field", "canonical", "synonyms", "occurrences"]


def suggest_entries(
    unmatched: pd.DataFrame, vectors: np.ndarray, min_similarity: float = 0.7, max_terms: int = MAX_CLUSTERED_TERMS
) -> pd.DataFrame:
    """One suggested entry per group of unmatched terms (rows of ``unmatched`` and ``vectors`` align),
    grouped by :func:`~hysem_assets.terms.grouping.group_terms`.

    Only the ``max_terms`` most frequent terms of a field are suggested: the grouping is quadratic.
    """
    ranked = rank_terms(unmatched.assign(_row=np.arange(len(unmatched)), canonical=""))
    ranked = ranked.groupby("field", sort=False).head(max_terms)
    for _, terms in ranked.groupby("field", sort=False):
        names, _ = group_terms(terms["raw_term"].tolist(), vectors[terms["_row"].to_numpy()], min_similarity)
        ranked.loc[terms.index, "canonical"] = names
    return dictionary_entries(ranked)


def dictionary_entries(grouped: pd.DataFrame) -> pd.DataFrame:
    """One entry per field and canonical term of ``grouped`` (ranked rows with ``field``, ``raw_term``,
    ``canonical``, ``occurrences``): the synonyms it must list for the matcher to find every member
    (:func:`~hysem_assets.terms.grouping.entry_spellings`), and the members' occurrences summed."""
    rows = [
        (field_name, canonical, entry_spellings(members["raw_term"].tolist())[1:], int(members["occurrences"].sum()))
        for (field_name, canonical), members in grouped.groupby(["field", "canonical"], sort=False)
    ]
    table = pd.DataFrame(rows, columns=SUGGESTION_COLUMNS)
    return table.sort_values(["field", "occurrences", "canonical"], ascending=[True, False, True]).reset_index(
        drop=True
    )


def _entries_yaml(entries: pd.DataFrame) -> str:
    return yaml.safe_dump(
        {row.canonical: list(row.synonyms) for row in entries.itertuples()},
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=None,
        width=10_000,
    )


def suggestions_yaml(suggestions: pd.DataFrame) -> dict[str, str]:
    """Per field, a YAML snippet in the dictionary file format (canonical term: [synonyms])."""
    return {
        field_name: (
            f"# Suggested entries for config/dictionaries/{field_name}.yaml, grouped from unmatched terms.\n"
            "# Check each one, rename the canonical term if needed, then paste.\n" + _entries_yaml(entries)
        )
        for field_name, entries in suggestions.groupby("field", sort=True)
    }


def suggested_dictionaries_yaml(groups: pd.DataFrame) -> dict[str, str]:
    """Per field without a dictionary, its grouped terms as a whole dictionary file, ready to adopt."""
    return {
        field_name: (
            f"# Suggested dictionary for the field {field_name!r}: its extracted terms grouped by spelling and\n"
            "# meaning, each group named by its most frequent term. Check the groups (rename, split or join\n"
            "# them), save the file in config/dictionaries/ and name it in the protocol field's `dictionary:`.\n"
            + _entries_yaml(entries)
        )
        for field_name, entries in groups.groupby("field", sort=True)
    }


def write_suggested_dictionaries(documents: Mapping[str, str], directory: Path) -> list[Path]:
    """Each ``field -> YAML`` document as ``<directory>/<field>.yaml`` (written whole or not at all)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for field_name, text in sorted(documents.items()):
        if Path(field_name).name != field_name or field_name.startswith("."):
            raise ValueError(f"field {field_name!r} cannot name a file in {directory}")
        path = directory / f"{field_name}.yaml"
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
        paths.append(path)
    return paths
