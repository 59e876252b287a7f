"""Raw extracted terms to canonical terms: exact, then a spelling variant, then embedding similarity."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hysem_assets.embeddings import Encoder
from hysem_assets.profile import TERM_THRESHOLD
from hysem_assets.terms.dictionaries import SynonymDictionary
from hysem_assets.terms.embeddings import dictionary_embeddings
from hysem_assets.terms.matcher import TermMatcher
from hysem_assets.terms.suggestions import suggest_entries, suggestions_yaml

MAPPING_COLUMNS = ["field", "raw_term", "canonical", "score", "method", "occurrences"]
UNMATCHED_COLUMNS = ["field", "raw_term", "occurrences", "candidates", "candidate_scores"]
FIELD_COLUMNS = [
    "field",
    "terms",
    "exact",
    "normalized",
    "embedding",
    "unmatched",
    "match_rate",
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
    #: Match counts and rate per field, the threshold used, and ``hit``/``miss`` of the embedding cache.
    fields: pd.DataFrame
    #: Spellings claimed by two canonical terms in a dictionary.
    conflicts: pd.DataFrame

    def suggestions_yaml(self) -> dict[str, str]:
        return suggestions_yaml(self.suggestions)


def map_terms(
    raw_terms: pd.DataFrame,
    dictionaries: Mapping[str, SynonymDictionary],
    *,
    cache_dir: Path,
    encoder: Encoder | None = None,
    threshold: float = TERM_THRESHOLD,
    thresholds: Mapping[str, float] | None = None,
    candidates: int = 3,
    suggestion_similarity: float = 0.7,
    progress: Callable[[int, int | None], None] | None = None,
) -> TermMapping:
    """Map ``raw_terms`` (columns ``doc_id``, ``field``, ``raw_term``) onto the canonical terms of each field.

    Exact and normalized matches score 1. The rest are embedded once (all fields together)
    and compared with the field's dictionary in one matrix product; a cosine similarity of at
    least the field's threshold (``thresholds[field]``, else ``threshold``) maps the term.
    Terms of a field without a dictionary stay unmatched and still feed the suggestions.
    Blank terms carry nothing to map and are left out. ``progress(done, total)`` follows the
    embedding of raw terms, the long step.
    """
    encoder = encoder or Encoder()
    thresholds = dict(thresholds or {})
    terms = _distinct_terms(raw_terms)
    exact = {field_name: dict(dictionary.spellings) for field_name, dictionary in dictionaries.items()}
    matched = [
        _match(exact[f], dictionaries[f].matcher, t) if f in dictionaries else (None, None)
        for f, t in zip(terms["field"], terms["raw_term"])
    ]
    terms["canonical"] = [canonical for canonical, _ in matched]
    terms["method"] = [method or "unmatched" for _, method in matched]
    terms["score"] = np.where(terms["canonical"].notna(), 1.0, np.nan)
    terms["candidates"] = [[] for _ in range(len(terms))]
    terms["candidate_scores"] = [[] for _ in range(len(terms))]

    rest = terms[terms["method"] == "unmatched"]
    texts = list(dict.fromkeys(rest["raw_term"]))
    vectors = encoder.encode(texts, progress) if texts else np.zeros((0, 0), dtype=np.float32)
    row_of = {text: i for i, text in enumerate(texts)}
    cache_state: dict[str, str] = {}
    for field_name, group in rest.groupby("field", sort=True):
        dictionary = dictionaries.get(field_name)
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
        mapping=terms[MAPPING_COLUMNS],
        unmatched=unmatched,
        suggestions=suggest_entries(unmatched, unmatched_vectors, suggestion_similarity),
        fields=_field_table(terms, dictionaries, thresholds, threshold, cache_state),
        conflicts=pd.DataFrame(
            [
                (c.field, c.spelling, c.kept_under, c.dropped_from, c.message)
                for d in dictionaries.values()
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
    dictionaries: Mapping[str, SynonymDictionary],
    thresholds: Mapping[str, float],
    threshold: float,
    cache_state: Mapping[str, str],
) -> pd.DataFrame:
    counts = pd.crosstab(terms["field"], terms["method"]).reindex(
        columns=["exact", "normalized", "embedding", "unmatched"], fill_value=0
    )
    table = counts.reset_index().rename_axis(columns=None)
    table.insert(1, "terms", counts.sum(axis=1).to_numpy())
    table["match_rate"] = 1.0 - table["unmatched"] / table["terms"]
    table["threshold"] = [thresholds.get(f, threshold) if f in dictionaries else np.nan for f in table["field"]]
    table["dictionary_cache"] = [
        cache_state.get(f, "none" if f not in dictionaries else "unused") for f in table["field"]
    ]
    return table[FIELD_COLUMNS]
