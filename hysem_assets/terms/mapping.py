"""Raw extracted terms to canonical terms: exact, then a spelling variant, then embedding similarity;
without a dictionary, grouped by spelling and meaning."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hysem_assets.core.empty import typed_when_empty
from hysem_assets.core.matcher import TermMatcher
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.settings.dictionaries import SynonymDictionary
from hysem_assets.settings.profile import GROUP_THRESHOLD, TERM_THRESHOLD
from hysem_assets.terms.embeddings import dictionary_embeddings, term_embeddings
from hysem_assets.terms.grouping import group_terms, rank_terms
from hysem_assets.terms.suggestions import (
    dictionary_entries,
    suggest_entries,
    suggested_dictionaries_yaml,
    suggestions_yaml,
)

MAPPING_COLUMNS = ["field", "raw_term", "canonical", "score", "method", "occurrences"]
MAPPING_DTYPES = {"field": object, "raw_term": object, "canonical": object, "score": float, "method": object}
UNMATCHED_COLUMNS = ["field", "raw_term", "occurrences", "candidates", "candidate_scores"]
FIELD_COLUMNS = [
    "field",
    "terms",
    "exact",
    "normalized",
    "embedding",
    "grouped",
    "unmatched",
    "match_rate",
    "groups",
    "threshold",
    "dictionary_cache",
]
CONFLICT_COLUMNS = ["field", "spelling", "kept_under", "dropped_from", "message"]
#: Similarity rows computed at once: bounds memory for large dictionaries (about 64 MiB of float32).
_BLOCK_CELLS = 1 << 24


@dataclass
class TermMapping:
    #: One row per distinct (field, raw_term); ``occurrences`` counts the documents naming it.
    mapping: pd.DataFrame
    #: Terms below the threshold, with their nearest canonical terms and similarities.
    unmatched: pd.DataFrame
    #: Unmatched terms grouped into new entries (field, canonical, synonyms, occurrences).
    suggestions: pd.DataFrame
    #: The entries formed by grouping each field without a dictionary (same columns): its suggested dictionary.
    groups: pd.DataFrame
    #: Match counts and rate per field, groups formed, the threshold used, and ``hit``/``miss`` of the
    #: embedding cache (the dictionary's, or the terms' of a field without one).
    fields: pd.DataFrame
    #: Spellings claimed by two canonical terms in a dictionary.
    conflicts: pd.DataFrame

    def suggestions_yaml(self) -> dict[str, str]:
        return suggestions_yaml(self.suggestions)

    def suggested_dictionaries(self) -> dict[str, str]:
        """Per field without a dictionary, its groups as a dictionary file to adopt
        (:func:`~hysem_assets.terms.suggestions.write_suggested_dictionaries` saves them)."""
        return suggested_dictionaries_yaml(self.groups)


def raw_terms(extracted: pd.DataFrame, fields: list[str]) -> pd.DataFrame:
    """Long table (doc_id, field, raw_term) of the list values extracted for ``fields``."""
    rows = [
        {"doc_id": row["cluster_id"], "field": field, "raw_term": term}
        for row in extracted.to_dict("records")
        for field in fields
        if isinstance(row.get(field), str) and row[field].startswith("[")
        for term in json.loads(row[field])
        if isinstance(term, str) and term.strip()
    ]
    return pd.DataFrame(rows, columns=["doc_id", "field", "raw_term"])


def map_terms(
    raw_terms: pd.DataFrame,
    dictionaries: Mapping[str, SynonymDictionary | None],
    *,
    cache_dir: Path,
    encoder: Encoder | None = None,
    threshold: float = TERM_THRESHOLD,
    thresholds: Mapping[str, float] | None = None,
    group_threshold: float = GROUP_THRESHOLD,
    candidates: int = 3,
    suggestion_similarity: float = 0.7,
    progress: Callable[[int, int | None], None] | None = None,
) -> TermMapping:
    """Map ``raw_terms`` (columns ``doc_id``, ``field``, ``raw_term``) onto the canonical terms of each field.

    Exact and normalized matches score 1. The rest are embedded once (all fields together)
    and compared with the field's dictionary in one matrix product; a cosine similarity of at
    least the field's threshold (``thresholds[field]``, else ``threshold``) maps the term.
    A field given ``None`` has no dictionary: its terms are grouped by spelling and meaning
    (:func:`~hysem_assets.terms.grouping.group_terms` at ``thresholds[field]``, else
    ``group_threshold``; only the field's 2,000 most frequent spelling groups are compared by
    embedding, the clustering being quadratic, and rarer ones stay groups of their own), each
    group named by its most frequent member; every term maps to its group's name (method
    ``grouped``, scored by its similarity to the name), and :attr:`TermMapping.groups` holds
    the field's suggested dictionary. A field not named at all stays unmatched and feeds the
    suggestions. Blank terms carry nothing to map and are left out. ``progress(done, total)``
    follows the embedding of raw terms, the long step.
    """
    encoder = encoder or Encoder()
    thresholds = dict(thresholds or {})
    terms = _distinct_terms(raw_terms)
    covered = {field_name: dictionary for field_name, dictionary in dictionaries.items() if dictionary is not None}
    exact = {field_name: dict(dictionary.spellings) for field_name, dictionary in covered.items()}
    matched = [
        _match(exact[f], covered[f].matcher, t) if f in covered else (None, None)
        for f, t in zip(terms["field"], terms["raw_term"])
    ]
    terms["canonical"] = [canonical for canonical, _ in matched]
    terms["method"] = [method or "unmatched" for _, method in matched]
    terms["score"] = np.where(terms["canonical"].notna(), 1.0, np.nan)
    terms["candidates"] = [[] for _ in range(len(terms))]
    terms["candidate_scores"] = [[] for _ in range(len(terms))]

    cache_state: dict[str, str] = {}
    grouped = [field_name for field_name in dictionaries if field_name not in covered]
    for field_name, members in terms[terms["field"].isin(grouped)].groupby("field", sort=True):
        members = rank_terms(members)
        term_vectors, hit = term_embeddings(encoder, members["raw_term"].tolist(), cache_dir, progress)
        cache_state[field_name] = "hit" if hit else "miss"
        similarity = thresholds.get(field_name, group_threshold)
        names, scores = group_terms(members["raw_term"].tolist(), term_vectors, similarity)
        terms.loc[members.index, "canonical"] = names
        terms.loc[members.index, "score"] = scores
        terms.loc[members.index, "method"] = "grouped"

    rest = terms[terms["method"] == "unmatched"]
    texts = list(dict.fromkeys(rest["raw_term"]))
    vectors = encoder.encode(texts, progress) if texts else np.zeros((0, 0), dtype=np.float32)
    row_of = {text: i for i, text in enumerate(texts)}
    for field_name, group in rest.groupby("field", sort=True):
        dictionary = covered.get(field_name)
        if dictionary is None or not dictionary.entries:
            continue
        matrix, hit = dictionary_embeddings(encoder, dictionary, cache_dir)
        cache_state[field_name] = "hit" if hit else "miss"
        scores, names = _nearest(vectors[[row_of[t] for t in group["raw_term"]]], matrix, dictionary, candidates)
        accepted = scores[:, 0] >= thresholds.get(field_name, threshold)
        terms.loc[group.index, "score"] = scores[:, 0]
        terms.loc[group.index, "candidates"] = pd.Series(names, index=group.index)
        terms.loc[group.index, "candidate_scores"] = pd.Series(
            [row.astype(float).round(4).tolist() for row in scores], index=group.index
        )
        terms.loc[group.index[accepted], "canonical"] = [row[0] for row, ok in zip(names, accepted) if ok]
        terms.loc[group.index[accepted], "method"] = "embedding"

    unmatched = terms.loc[terms["method"] == "unmatched", UNMATCHED_COLUMNS].reset_index(drop=True)
    unmatched_vectors = vectors[[row_of[t] for t in unmatched["raw_term"]]]
    return TermMapping(
        mapping=typed_when_empty(terms[MAPPING_COLUMNS], MAPPING_DTYPES),
        unmatched=unmatched,
        suggestions=suggest_entries(unmatched, unmatched_vectors, suggestion_similarity),
        groups=dictionary_entries(rank_terms(terms[terms["method"] == "grouped"])),
        fields=_field_table(terms, dictionaries, thresholds, threshold, group_threshold, cache_state),
        conflicts=pd.DataFrame(
            [
                (c.field, c.spelling, c.kept_under, c.dropped_from, c.message)
                for d in covered.values()
                for c in d.conflicts
            ],
            columns=CONFLICT_COLUMNS,
        ),
    )


def _match(exact: Mapping[str, str], matcher: TermMatcher, term: str) -> tuple[str | None, str | None]:
    """A spelling as listed ("exact"), else one of its variants ("normalized"), as text matching allows."""
    if term in exact:
        return exact[term], "exact"
    canonical = matcher.lookup(term)
    return (canonical, "normalized") if canonical else (None, None)


def _distinct_terms(raw_terms: pd.DataFrame) -> pd.DataFrame:
    missing = {"doc_id", "field", "raw_term"} - set(raw_terms.columns)
    if missing:
        raise ValueError(f"raw terms lack the column(s) {sorted(missing)}; expected doc_id, field and raw_term.")
    terms = raw_terms.dropna(subset=["raw_term"]).assign(
        raw_term=lambda t: t["raw_term"].astype(str).str.split().str.join(" "),
        field=lambda t: t["field"].astype(str),
    )
    terms = terms[terms["raw_term"] != ""]
    counted = terms.groupby(["field", "raw_term"], sort=True)["doc_id"].nunique().rename("occurrences")
    return counted.reset_index()


def _nearest(
    vectors: np.ndarray, matrix: np.ndarray, dictionary: SynonymDictionary, candidates: int
) -> tuple[np.ndarray, list[list[str]]]:
    """Best ``candidates`` canonical terms per row by cosine similarity (a canonical term scores its best spelling)."""
    canonicals = list(dictionary.entries)
    starts = np.cumsum([0] + [len(dictionary.entries[c]) for c in canonicals[:-1]])
    take = min(candidates, len(canonicals))
    block = max(1, _BLOCK_CELLS // max(1, matrix.shape[0]))
    scores, indices = [], []
    for begin in range(0, len(vectors), block):
        per_canonical = np.maximum.reduceat(vectors[begin : begin + block] @ matrix.T, starts, axis=1)
        order = np.argsort(-per_canonical, axis=1, kind="stable")[:, :take]
        scores.append(np.take_along_axis(per_canonical, order, axis=1))
        indices.append(order)
    order = np.vstack(indices)
    return np.vstack(scores), [[canonicals[i] for i in row] for row in order]


def _field_table(
    terms: pd.DataFrame,
    dictionaries: Mapping[str, SynonymDictionary | None],
    thresholds: Mapping[str, float],
    threshold: float,
    group_threshold: float,
    cache_state: Mapping[str, str],
) -> pd.DataFrame:
    counts = pd.crosstab(terms["field"], terms["method"]).reindex(
        columns=["exact", "normalized", "embedding", "grouped", "unmatched"], fill_value=0
    )
    table = counts.reset_index().rename_axis(columns=None)
    table.insert(1, "terms", counts.sum(axis=1).to_numpy())
    table["match_rate"] = 1.0 - table["unmatched"] / table["terms"]
    groups = terms[terms["method"] == "grouped"].groupby("field")["canonical"].nunique()
    table["groups"] = groups.reindex(table["field"], fill_value=0).to_numpy()
    table["threshold"] = [
        thresholds.get(f, threshold if dictionaries[f] is not None else group_threshold)
        if f in dictionaries
        else np.nan
        for f in table["field"]
    ]
    table["dictionary_cache"] = [
        cache_state.get(f, "none" if dictionaries.get(f) is None else "unused") for f in table["field"]
    ]
    return table[FIELD_COLUMNS]
