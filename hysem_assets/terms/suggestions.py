"""Unmatched terms grouped by meaning into dictionary entries a user can review and paste."""

from __future__ import annotations

import numpy as np
import pandas as pd
import yaml
from sklearn.cluster import AgglomerativeClustering

from hysem_assets.terms.matcher import term_keys

SUGGESTION_COLUMNS = ["field", "canonical", "synonyms", "occurrences"]


def _cluster_labels(vectors: np.ndarray, min_similarity: float) -> np.ndarray:
    if len(vectors) < 2:
        return np.zeros(len(vectors), dtype=int)
    return AgglomerativeClustering(
        n_clusters=None, metric="cosine", linkage="average", distance_threshold=1.0 - min_similarity
    ).fit_predict(vectors)


def suggest_entries(
    unmatched: pd.DataFrame, vectors: np.ndarray, min_similarity: float = 0.7, max_terms: int = 2000
) -> pd.DataFrame:
    """One suggested entry per group of similar unmatched terms (rows of ``unmatched`` and ``vectors`` align).

    The most frequent term of a group names it; spellings that differ from another only in
    case, hyphens or plurals are left out, since the term matcher already joins them.
    Only the ``max_terms`` most frequent terms of a field are grouped: the grouping is quadratic.
    """
    rows = []
    ranked = unmatched.assign(_row=np.arange(len(unmatched)), _length=unmatched["raw_term"].str.len())
    for field_name, terms in ranked.groupby("field", sort=True):
        terms = terms.sort_values(["occurrences", "_length", "raw_term"], ascending=[False, True, True]).head(max_terms)
        labels = _cluster_labels(vectors[terms["_row"].to_numpy()], min_similarity)
        for _, members in terms.groupby(labels, sort=False):
            names, seen = [], set()
            for term in members["raw_term"]:
                keys = term_keys(term)
                if seen.isdisjoint(keys):
                    names.append(term)
                seen.update(keys)
            rows.append((field_name, names[0], names[1:], int(members["occurrences"].sum())))
    table = pd.DataFrame(rows, columns=SUGGESTION_COLUMNS)
    return table.sort_values(["field", "occurrences", "canonical"], ascending=[True, False, True]).reset_index(
        drop=True
    )


def suggestions_yaml(suggestions: pd.DataFrame) -> dict[str, str]:
    """Per field, a YAML snippet in the dictionary file format (canonical term: [synonyms])."""
    snippets = {}
    for field_name, entries in suggestions.groupby("field", sort=True):
        body = yaml.safe_dump(
            {row.canonical: list(row.synonyms) for row in entries.itertuples()},
            allow_unicode=True,
            sort_keys=False,
            default_flow_style=None,
            width=10_000,
        )
        snippets[field_name] = (
            f"# Suggested entries for config/dictionaries/{field_name}.yaml, grouped from unmatched terms.\n"
            "# Check each one, rename the canonical term if needed, then paste.\n" + body
        )
    return snippets
