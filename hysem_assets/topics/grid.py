"""The grid search plan: which candidates to train on which corpus variant, which to skip and why."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hysem_assets.topics.config import SearchSpace
from hysem_assets.topics.training import Candidate, Fit
from hysem_assets.topics.vocabulary import Corpus, DictionaryFilter, PhraseSettings


class TopicModelError(ValueError):
    """No model can be trained on this corpus with this search space."""


@dataclass(frozen=True)
class Skipped:
    candidate: Candidate
    vocabulary: int
    reason: str


def phrase_variants(space: SearchSpace, min_count: int) -> list[PhraseSettings]:
    return [
        PhraseSettings(b, t, min_count) for b, t in itertools.product(space.bigram_threshold, space.trigram_threshold)
    ]


def dictionary_filters(space: SearchSpace) -> list[DictionaryFilter]:
    return [DictionaryFilter(b, a) for b, a in itertools.product(space.no_below, space.no_above)]


def skip_reason(n_topics: int, corpus: Corpus) -> str | None:
    """Why a grid point cannot give a meaningful model on this corpus variant, if it cannot."""
    documents = int((corpus.counts.getnnz(axis=1) > 0).sum())
    words = len(corpus.dictionary)
    where = f"no_below={corpus.filter.no_below}, no_above={corpus.filter.no_above}"
    if words < 2:
        return f"the dictionary filter ({where}) leaves {words} words, at least 2 are needed"
    if n_topics > documents:
        return f"{n_topics} topics asked for but only {documents} documents have words ({where})"
    if n_topics > words:
        return f"{n_topics} topics asked for but the dictionary ({where}) holds only {words} words"
    return None


def every_point_skipped(space: SearchSpace, min_count: int, reason: str) -> list[Skipped]:
    """The whole grid, skipped for one reason: what the grid table shows when nothing can be trained."""
    return [
        Skipped(Candidate(n_topics, passes, iterations, phrases, filter_), 0, reason)
        for phrases in phrase_variants(space, min_count)
        for filter_ in dictionary_filters(space)
        for n_topics, passes, iterations in itertools.product(space.n_topics, space.passes, space.iterations)
    ]


def plan(space: SearchSpace, corpora: list[Corpus]) -> tuple[list[tuple[Corpus, Candidate]], list[Skipped]]:
    jobs, skipped = [], []
    for corpus in corpora:
        for n_topics, passes, iterations in itertools.product(space.n_topics, space.passes, space.iterations):
            candidate = Candidate(n_topics, passes, iterations, corpus.phrases, corpus.filter)
            reason = skip_reason(n_topics, corpus)
            if reason:
                skipped.append(Skipped(candidate, len(corpus.dictionary), reason))
            else:
                jobs.append((corpus, candidate))
    if not jobs:
        reasons = sorted({s.reason for s in skipped})
        raise TopicModelError(
            "No topic model can be trained: "
            + "; ".join(reasons)
            + ". Add documents, or lower grid.n_topics / grid.no_below in config/topics.yaml."
        )
    return jobs, skipped


def best_fit(fits: list[Fit]) -> Fit:
    """Highest mean c_v; on a tie the smaller, cheaper model."""
    scored = [fit for fit in fits if np.isfinite(fit.coherence)]
    if not scored:
        raise TopicModelError(
            f"c_v coherence is undefined for all {len(fits)} trained models (top words never co-occur); "
            "the corpus is too small or too uniform for topics."
        )
    return min(scored, key=lambda fit: (-fit.coherence, *fit.candidate.as_row().values()))


def grid_table(trained: list[tuple[Corpus, Fit]], skipped: list[Skipped], chosen: Fit | None) -> pd.DataFrame:
    """Every grid point, trained or skipped, with its coherence and the reason it was skipped."""
    rows = [
        fit.candidate.as_row()
        | {
            "vocabulary": len(corpus.dictionary),
            "coherence": fit.coherence,
            "coherence_min": float(np.nanmin(fit.topic_coherence))
            if np.isfinite(fit.topic_coherence).any()
            else np.nan,
            "seconds": fit.seconds,
            "status": "trained",
            "reason": None if np.isfinite(fit.coherence) else "c_v coherence undefined",
            "chosen": fit is chosen,
        }
        for corpus, fit in trained
    ] + [
        s.candidate.as_row()
        | {
            "vocabulary": s.vocabulary,
            "coherence": np.nan,
            "coherence_min": np.nan,
            "seconds": np.nan,
            "status": "skipped",
            "reason": s.reason,
            "chosen": False,
        }
        for s in skipped
    ]
    table = pd.DataFrame(rows).astype({"vocabulary": "Int64", "chosen": bool})
    first = trained[0][1].candidate if trained else skipped[0].candidate
    return table.sort_values(list(first.as_row()), kind="stable", ignore_index=True)
