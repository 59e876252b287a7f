"""Terms grouped by spelling, then by meaning, never across a number or a contrast word.

Spelling comes first: terms the matcher takes for one another (case, accents, hyphens,
plurals: :func:`~hysem_assets.core.matcher.term_keys`) are one spelling group and stand in
the clustering by their most frequent member. Meaning comes next: average-linkage
clustering of the groups' embeddings. Embeddings place "grade 3 X" and "grade 4 X", or
"with X" and "without X", closer than most true synonyms (above 0.95 and 0.85 with MiniLM),
so terms that differ in a number, a single-letter label or a contrast word are never
clustered together, however close they embed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.cluster import AgglomerativeClustering

from hysem_assets.core.matcher import term_keys
from hysem_assets.dedup.distinctions import CONTRAST_CLASSES, class_words, title_letters
from hysem_assets.dedup.normalize import normalize_title, title_numbers

#: Terms (spelling groups) of one field clustered at most: the clustering is quadratic in them.
MAX_CLUSTERED_TERMS = 2000
#: The population, stage and design words that tell two studies apart tell two terms apart too;
#: negations and opposites of degree, time and direction turn a term into another one. A bare
#: "with" does not ("patients with X" is X), so only its opposite counts.
TERM_CONTRASTS: dict[str, frozenset[str]] = {
    **{name: CONTRAST_CLASSES[name] for name in ("population", "stage", "design")},
    "negation": frozenset("without no not non never absent absence free negative".split()),
    "opposite": frozenset(
        "positive low high increased decreased early late acute chronic mild moderate severe pre post before after"
        " upper lower".split()
    ),
}


def distinctions(term: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """What two terms must share to be grouped: their numbers (digits, and roman numerals after
    "type", "stage", "grade"...), single-letter labels ("cohort A", "X B") and contrast words,
    read as :mod:`hysem_assets.dedup` reads titles."""
    title = normalize_title(term)
    words = tuple(title.split())
    contrasts = frozenset().union(*class_words(set(words), TERM_CONTRASTS).values())
    return title_numbers(title), title_letters(words), contrasts


def cluster_terms(terms: Sequence[str], vectors: np.ndarray, min_similarity: float) -> np.ndarray:
    """A cluster label per term (rows of ``vectors``, unit length, align with ``terms``).

    Average linkage: two clusters join while the mean cosine similarity of their members is
    at least ``min_similarity``. Terms with different :func:`distinctions` are clustered
    separately, which is the same as keeping them infinitely far apart. Quadratic in
    ``len(terms)``: callers bound it (:data:`MAX_CLUSTERED_TERMS`).
    """
    labels = np.zeros(len(terms), dtype=int)
    parts: dict[tuple[frozenset[str], ...], list[int]] = {}
    for row, term in enumerate(terms):
        parts.setdefault(distinctions(term), []).append(row)
    offset = 0
    for rows in parts.values():
        if len(rows) == 1:
            part = np.zeros(1, dtype=int)
        else:
            part = AgglomerativeClustering(
                n_clusters=None, metric="cosine", linkage="average", distance_threshold=1.0 - min_similarity
            ).fit_predict(vectors[rows])
        labels[rows] = part + offset
        offset += int(part.max()) + 1
    return labels


def spelling_groups(terms: Sequence[str]) -> np.ndarray:
    """A group label per term: a term joins every term whose own key is among its keys, as the
    matcher would map one onto the other (and so on, transitively)."""
    keys = [term_keys(term) or [term] for term in terms]
    owner: dict[str, int] = {}
    for row, readings in enumerate(keys):
        owner.setdefault(readings[0], row)
    edges = [(row, owner[key]) for row, readings in enumerate(keys) for key in readings if key in owner]
    rows, columns = zip(*edges) if edges else ((), ())
    graph = coo_matrix((np.ones(len(edges)), (rows, columns)), shape=(len(terms), len(terms)))
    return connected_components(graph, directed=False)[1]


def rank_terms(terms: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``terms`` (columns ``raw_term``, ``occurrences``) most frequent first, then shorter, then
    alphabetical: the order in which a group's first member names it."""
    order = terms.assign(_length=terms["raw_term"].str.len())
    order = order.sort_values(["occurrences", "_length", "raw_term"], ascending=[False, True, True], kind="stable")
    return order.drop(columns="_length")


def group_terms(
    terms: Sequence[str],
    vectors: np.ndarray,
    min_similarity: float,
    max_terms: int = MAX_CLUSTERED_TERMS,
) -> tuple[list[str], np.ndarray]:
    """Per term, the name of its group and its similarity to that name.

    ``terms`` are distinct and ranked (:func:`rank_terms`), so the first member of a group
    names it; ``vectors`` align with them. Each spelling group stands in the clustering by its
    first member's vector; only the ``max_terms`` first spelling groups are clustered, later
    ones stay groups of their own. A term spelled like the name scores 1, the others their
    cosine similarity to it.
    """
    spelling = spelling_groups(terms).tolist()
    leaders: dict[int, int] = {}
    for row, group in enumerate(spelling):
        leaders.setdefault(group, row)
    ranked = list(leaders.values())
    clustered = ranked[:max_terms]
    labels = cluster_terms([terms[row] for row in clustered], vectors[clustered], min_similarity)
    cluster = dict(zip(clustered, labels.tolist()))
    cluster.update({row: len(clustered) + index for index, row in enumerate(ranked[max_terms:])})
    name_of: dict[int, int] = {}
    names, scores = [], np.ones(len(terms))
    for row, group in enumerate(spelling):
        name = name_of.setdefault(cluster[leaders[group]], row)
        names.append(terms[name])
        if spelling[name] != group:
            scores[row] = float(vectors[row] @ vectors[name])
    return names, scores


def entry_spellings(members: Sequence[str]) -> list[str]:
    """The members a dictionary entry must list for the matcher to find them all, the first
    (its canonical term) included: a member already found through an earlier spelling's key
    is left out."""
    listed, keys = [], set()
    for member in members:
        member_keys = term_keys(member) or [member]
        if keys.isdisjoint(member_keys):
            listed.append(member)
            keys.add(member_keys[0])
    return listed
